#!/usr/bin/env python3
"""What a test file left behind on the host (used by lib.sh).

    leftovers.py snapshot SNAPFILE
    leftovers.py check SNAPFILE --shell-pid PID --dir TESTDIR --state STATEDIR
                 --id-prefix PREFIX [--rootfs-list FILE]

`check` prints one line per leftover, "KIND: description", and nothing when
the host is clean.  What counts, and why it is precise enough to run while
other test files run in parallel (make -j check):

  process  a process whose cmdline, cwd or root lies in TESTDIR, whose root
           is one of the bundles' rootfs (how a container process looks from
           the host after pivot_root), or a child of the test shell
  mount    a mountinfo line of this mount namespace naming TESTDIR, STATEDIR
           or a container id, absent from the snapshot
  cgroup   a directory in any cgroup hierarchy whose name contains PREFIX
  state    an entry left in the runtime's --root STATEDIR
  netns    a network namespace in /run/netns new since the snapshot whose
           name contains PREFIX or the shell's pid
  link     a network link of the host namespace, new since the snapshot,
           whose name contains PREFIX or the shell's pid
New netns and links with other names may belong to a parallel test; they are
printed as "note: ..." lines, which lib.sh turns into TAP diagnostics.
"""

import argparse
import json
import os
import sys


def read(path, mode="r"):
    try:
        with open(path, mode) as f:
            return f.read()
    except OSError:
        return None


def mountinfo():
    return (read("/proc/self/mountinfo") or "").splitlines()


def listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def snapshot(path):
    snap = {"mounts": mountinfo(), "netns": listdir("/run/netns"), "links": listdir("/sys/class/net")}
    with open(path, "w") as f:
        json.dump(snap, f)


def ancestors():
    """Our own pid and those of our parents: the shells running this check."""
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        stat = read(f"/proc/{pid}/stat")
        if stat is None:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pids


def same_file(a, b):
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def processes(shell_pid, testdir, rootfs):
    skip = ancestors()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in skip:
            continue
        pid = int(name)
        stat = read(f"/proc/{pid}/stat")
        raw = read(f"/proc/{pid}/cmdline", "rb")
        if stat is None or raw is None:
            continue
        after = stat.rsplit(")", 1)[1].split()
        state, ppid = after[0], int(after[1])
        if state in "ZX":
            continue  # exited; its parent reaps it
        cmdline = raw.replace(b"\0", b" ").decode(errors="replace").strip() or stat.split("(", 1)[1].rsplit(")", 1)[0]
        why = None
        if testdir in cmdline:
            why = "command line names the test directory"
        else:
            for link in ("cwd", "root"):
                try:
                    target = os.readlink(f"/proc/{pid}/{link}")
                except OSError:
                    continue
                if target == testdir or target.startswith(testdir + "/"):
                    why = f"{link} is in the test directory"
                    break
        if why is None:
            for r in rootfs:
                if same_file(f"/proc/{pid}/root", r):
                    why = f"its root is the container rootfs {r}"
                    break
        if why is None and ppid == shell_pid:
            why = "child of the test shell"
        if why:
            found.append(f"process: pid {pid} `{cmdline}` still running ({why})")
    return found


def cgroup_roots():
    roots = []
    for line in mountinfo():
        pre, post = line.split(" - ", 1)
        if post.split()[0] in ("cgroup", "cgroup2"):
            roots.append(pre.split()[4])
    return roots


def cgroups(prefix):
    found = []
    for root in cgroup_roots():
        for d, subdirs, _ in os.walk(root):
            for s in subdirs:
                if prefix in s:
                    found.append(f"cgroup: {os.path.join(d, s)} still exists")
    return found


def check(args):
    with open(args.snapfile) as f:
        snap = json.load(f)
    rootfs = []
    if args.rootfs_list and os.path.exists(args.rootfs_list):
        rootfs = [l for l in read(args.rootfs_list).splitlines() if l and os.path.isdir(l)]
    out = processes(args.shell_pid, args.dir, rootfs)
    old = set(snap["mounts"])
    needles = [args.dir, args.state, args.id_prefix]
    for line in mountinfo():
        if line not in old and any(n in line for n in needles):
            out.append(f"mount: {line.split()[4]} ({line})")
    out += cgroups(args.id_prefix)
    for e in listdir(args.state):
        # Nothing at all: agentbox keeps its caches (compiled seccomp
        # programs, the built-in sandbox's skeleton) in a cache directory of
        # their own, and the last delete leaves the state root as it was.
        out.append(f"state: {os.path.join(args.state, e)} left in the runtime's state directory")
    ours = (args.id_prefix, str(args.shell_pid))
    for kind, now, before in (("netns", listdir("/run/netns"), snap["netns"]),
                              ("link", listdir("/sys/class/net"), snap["links"])):
        for name in sorted(set(now) - set(before)):
            if any(o in name for o in ours):
                out.append(f"{kind}: {name} still exists")
            else:
                print(f"note: new {kind} {name} appeared during the test (not named after it: ignored)")
    for line in out:
        print(line)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot")
    s.add_argument("snapfile")
    c = sub.add_parser("check")
    c.add_argument("snapfile")
    c.add_argument("--shell-pid", type=int, required=True)
    c.add_argument("--dir", required=True)
    c.add_argument("--state", required=True)
    c.add_argument("--id-prefix", required=True)
    c.add_argument("--rootfs-list")
    args = p.parse_args()
    if args.cmd == "snapshot":
        snapshot(args.snapfile)
    else:
        check(args)


if __name__ == "__main__":
    sys.exit(main())

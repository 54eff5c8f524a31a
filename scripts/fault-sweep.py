#!/usr/bin/env python3
"""The fault sweep: every syscall of `create`, `run` and `run --default`
made to fail, or the process making it killed, one point at a time.

    scripts/fault-sweep.py [--commands create,run,run-default] [--jobs N]
                           [--sample N] [--seed S] [--kill-stride K] [--tap]

`make fault-sweep` runs all of it (the agentbox of the build tree; a minute
or two on two cores); `make check` runs a bounded sample of it
(tests/integration/t-fault-sweep.sh).  Needs root and strace.

How.  A clean run of each command under `strace -f` lists the syscalls it
makes -- the runtime, its threads, the container process and its helpers
-- and how often each makes them.  strace counts per thread, so the
points of syscall S are 1..(the most calls of S any one thread made).  At
each point the command runs again with
`strace -f -e inject=S:error=E:when=N` (E rotates over EIO, ENOSPC, ENOMEM:
every thread whose Nth call of S it is gets the error, the runtime and the
container process alike), and at every K-th point also with
`inject=S:signal=KILL:when=N` (that thread's process is killed there).
close(2) and brk(2) get kill points only (NO_ERRORS, below).
Then, checked from the host:

  * the command did its whole job: the program runs in the full sandbox,
    the same as in the clean run -- capability sets (bounding included),
    no_new_privs, seccomp mode and filter count, uid and gid maps, which
    namespaces are its own, its mounts, rlimits, cgroups and the nftables
    ruleset of its network namespace; or
  * it failed with exactly one line on stderr, `agentbox: ...`; or
  * it was killed (a SIGKILL point): then, for `run`, nothing of the
    container may outlive its supervisor;

and, after `agentbox delete --force`, that nothing is left: no process (in
the container's cgroups, or its recorded pid), no mount in any mount
namespace naming the state root, the container or its network namespace,
no cgroup directory of it in any hierarchy, no entry in the state root
(nor the hidden .ID, nor .rootfs@ID), no process in its network namespace
(whose links and nftables table go with its last process and mount), no
host link named after it and no agentbox nftables table in the host's
network namespace.

Output: a line per point (TAP with --tap), then
`fault sweep: N passed, M failed` with the points tried per command.
"""

import argparse
import concurrent.futures
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
from leftovers import read  # noqa: E402  (the integration tests' host-side reader)
ERRORS = ["EIO", "ENOSPC", "ENOMEM"]
STATUS_KEYS = ["Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
               "Seccomp", "Seccomp_filters"]
POINT_TIMEOUT = 30
NS_TYPES = ["cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts"]
PSEUDO_FS = {"tmpfs", "proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2"}
# No error is injected into these (their points are kill points): the
# kernel never fails them so.  An injected error replaces the syscall: a
# close(2) "failing" would leave its fd open (Linux releases it whatever
# close returns), brk(2) never returns an errno (it returns the old
# break, and glibc, given -ENOMEM, takes it for a new break and crashes),
# and the id and pid getters have no error return at all (an injected
# -ENOMEM reads as uid 4294967284).
NO_ERRORS = {"close", "brk", "getuid", "geteuid", "getgid", "getegid", "getpid", "getppid", "gettid"}
# The C library's own memory and locking calls: a failure there ends the
# process with a signal (glibc aborts on a futex error it does not expect,
# the dynamic loader and malloc may crash or abort, which the error
# contract allows for allocation failure).  A signal after a failure of any
# other syscall is a crash of the runtime.
LIBC_FATAL = {"mmap", "mprotect", "munmap", "mremap", "futex", "madvise"}
# The sanitizer runtime's own calls (its stacks, signal handlers, limits
# and thread setup): ASan aborts on a failure it does not expect, in a build
# made only to find memory errors.  In a sanitized build they are kill
# points only; the plain build's sweep gives them their errors.
SANITIZER_FATAL = LIBC_FATAL | {"sigaltstack", "rt_sigaction", "prlimit64", "sched_getaffinity"}
# musl's pthread_join waits for the ending thread's own FUTEX_WAKE (glibc's
# for the tid the kernel clears): a wake made to fail, which the kernel never
# does, leaves the joiner asleep for good.  In a musl build (`libc: musl` in
# --version, scripts/static-musl.sh) futex points are kill points only.
MUSL_FATAL = {"futex"}


def start_time(pid):
    st = read("/proc/%d/stat" % pid)
    if st is None:
        return None
    fields = st.rsplit(")", 1)[1].split()
    return None if fields[0] in ("Z", "X") else fields[19]


def uptime_ticks():
    """Now, in the clock of /proc/PID/stat's start times."""
    return float((read("/proc/uptime") or "0").split()[0]) * os.sysconf("SC_CLK_TCK")


def alive(pid, start=None):
    st = start_time(pid)
    return st is not None and (start is None or st == start)


def has_namespaces(pid):
    """Whether pid still has its namespaces: an exiting process drops them
    before it is a zombie (an init, while the kernel kills the rest of its
    pid namespace, can stay so for a while)."""
    try:
        os.stat("/proc/%d/ns/net" % pid)
        return True
    except OSError:
        return False


def pids():
    return [int(p[6:]) for p in glob.glob("/proc/[0-9]*")]


class Setup:
    """The bundle, the cache and what the checks look at, made once."""

    def __init__(self, args):
        self.args = args
        self.rt = os.path.abspath(args.runtime)
        self.dir = tempfile.mkdtemp(prefix="ab-fault-sweep-")
        os.chmod(self.dir, 0o711)  # the sandboxes' user namespaces traverse it
        # LeakSanitizer cannot run under ptrace (a --enable-sanitizers build)
        asan = os.environ.get("ASAN_OPTIONS")
        self.env = dict(os.environ, AGENTBOX_CACHE_DIR=os.path.join(self.dir, "cache"),
                        ASAN_OPTIONS=(asan + ":" if asan else "") + "detect_leaks=0")
        self.prefix = "fs%d" % os.getpid()
        self.serial = 0
        self.lock = threading.Lock()
        # A sanitizer's runtime hangs on some failures of its own memory
        # calls (a deadlock in its fatal report): those get kill points only.
        self.sanitized = sanitized(self.rt)
        version = subprocess.run([self.rt, "--version"], capture_output=True, text=True).stdout
        self.musl = "\nlibc: musl" in version
        self.bundle = os.path.join(self.dir, "bundle")
        self.make_bundle()
        self.cg_parents = cgroup_parents()

    def make_bundle(self):
        rootfs = os.path.join(self.bundle, "rootfs")
        for d in ("bin", "proc", "sys", "dev", "tmp", "etc", "root"):
            os.makedirs(os.path.join(rootfs, d), mode=0o755)
        shutil.copy(self.args.abtest, os.path.join(rootfs, "bin", "abtest"))
        os.chmod(os.path.join(rootfs, "bin", "abtest"), 0o755)
        for d in ("", "bin", "proc", "sys", "dev", "tmp", "etc", "root"):
            os.chmod(os.path.join(rootfs, d), 0o755)
        # the hardened profile, as `agentbox spec` writes it
        subprocess.run([self.rt, "spec", "--bundle", self.bundle], check=True, env=self.env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        path = os.path.join(self.bundle, "config.json")
        cfg = json.load(open(path))
        cfg["process"]["terminal"] = False
        cfg["process"]["args"] = ["/bin/abtest", "sleep-forever"]
        json.dump(cfg, open(path, "w"))

    def new_id(self):
        with self.lock:
            self.serial += 1
            return "%s-%d" % (self.prefix, self.serial)

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def sanitized(path):
    """Whether the runtime is a --enable-sanitizers build."""
    ldd = subprocess.run(["ldd", path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout
    if b"libasan" in ldd or b"libubsan" in ldd:
        return True
    return b"__asan_init" in (read(path, "rb") or b"")


def cgroup_parents():
    """Where the runtime makes agentbox-ID: below our own cgroup in every
    hierarchy (and at each mount's root, for good measure)."""
    parents = set()
    own = {}
    for line in (read("/proc/self/cgroup") or "").splitlines():
        hid, ctrls, path = line.split(":", 2)
        own[ctrls] = path
    for line in (read("/proc/self/mountinfo") or "").splitlines():
        pre, post = line.split(" - ", 1)
        fields, pf = pre.split(), post.split()
        if pf[0] not in ("cgroup", "cgroup2"):
            continue
        root, mnt = fields[3], fields[4]
        parents.add(mnt)
        if pf[0] == "cgroup2":
            path = own.get("")
        else:
            opts = set(pf[2].split(","))
            path = next((p for c, p in own.items() if c and set(c.split(",")) <= opts), None)
        if path is not None and (root == "/" or path.startswith(root)):
            rel = path[len(root):] if root != "/" else path
            parents.add(os.path.normpath(mnt + "/" + rel))
    return sorted(parents)


# ---- what the host sees of a container process ------------------------------------

def nft_ruleset(pid):
    if not shutil.which("nsenter") or not shutil.which("nft"):
        return None
    p = subprocess.run(["nsenter", "--net=/proc/%d/ns/net" % pid, "nft", "list", "ruleset"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
    return p.stdout.decode() if p.returncode == 0 else "nft failed: " + p.stderr.decode()[:200]


def probe(pid, cid, root):
    """The sandbox of process pid as the host sees it, with the container id,
    the state root (a file the runtime binds from it: /etc/hosts) and
    pid-specific numbers taken out, for comparison with the clean run."""
    out = {}
    status = read("/proc/%d/status" % pid) or ""
    for line in status.splitlines():
        k, _, v = line.partition(":")
        if k in STATUS_KEYS:
            out[k] = v.strip()
    for f in ("uid_map", "gid_map", "limits"):
        out[f] = " ".join((read("/proc/%d/%s" % (pid, f)) or "").split())
    own = []
    for ns in NS_TYPES:
        try:
            if os.stat("/proc/%d/ns/%s" % (pid, ns)).st_ino != os.stat("/proc/self/ns/%s" % ns).st_ino:
                own.append(ns)
        except OSError:
            own.append(ns + "?")
    out["own namespaces"] = own
    mounts = []
    for line in (read("/proc/%d/mountinfo" % pid) or "").splitlines():
        pre, post = line.split(" - ", 1)
        f, pf = pre.split(), post.split()
        # The source of a pseudo filesystem is only a name ("tmpfs", "none")
        source = "-" if pf[0] in PSEUDO_FS else pf[1]
        mounts.append(" ".join([f[3], f[4], f[5], pf[0], source, pf[2]]).replace(root, "ROOT").replace(cid, "ID"))
    # What is mounted where, and in which order on each mount point (what
    # is on top); the order across mount points is only the order they were
    # made in (mountinfo lists them so since Linux 6.8), and the runtime may
    # remake one or not (mount.c, remake_in_order).
    by_point = {}
    for m in mounts:
        by_point.setdefault(m.split(" ")[1], []).append(m)
    out["mounts"] = [" | ".join(v) for k, v in sorted(by_point.items())]
    out["cgroups"] = sorted((read("/proc/%d/cgroup" % pid) or "").replace(cid, "ID").splitlines())
    rules = nft_ruleset(pid)
    if rules is not None:
        out["nftables"] = rules
    return out


def diff(ref, got):
    bad = []
    for k in sorted(set(ref) | set(got)):
        a, b = ref.get(k), got.get(k)
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            extra = [x for x in b if x not in a]
            missing = [x for x in a if x not in b]
            bad.append("%s: %s%s%s" % (k, "extra %s" % extra if extra else "",
                                         " missing %s" % missing if missing else "",
                                         " (the order differs)" if not extra and not missing else ""))
        else:
            bad.append("%s: %r, clean run %r" % (k, str(b)[:300], str(a)[:300]))
    return bad


# ---- leftovers ---------------------------------------------------------------------

def leftovers(s, root, cid, known):
    """What is left of container cid on the host: one line per thing."""
    left = []
    try:
        entries = os.listdir(root)
    except OSError:
        entries = []
    if entries:
        left.append("state root entries %s" % entries)
    name = "agentbox-" + cid
    for parent in s.cg_parents:
        if os.path.isdir(os.path.join(parent, name)):
            left.append("cgroup %s/%s" % (parent, name))
    mntns, procs = set(), []
    for pid in pids():
        cg = read("/proc/%d/cgroup" % pid)
        if cg and name in cg and alive(pid):
            procs.append(pid)
        try:
            ino = os.stat("/proc/%d/ns/mnt" % pid).st_ino
        except OSError:
            continue
        if ino in mntns:
            continue
        mntns.add(ino)
        for line in (read("/proc/%d/mountinfo" % pid) or "").splitlines():
            if root + "/" in line or cid in line or (known.get("netns") and known["netns"] in line):
                left.append("mount in the mount namespace of pid %d: %s" % (pid, line[:200]))
    if procs:
        left.append("processes in its cgroups %s" % procs)
    for pid, st in known.get("procs", []):
        if alive(pid, st):
            left.append("process %d (recorded) still runs" % pid)
    # The container's links and nftables table live in its network
    # namespace (gone with its last process and mount, checked here); none
    # may ever be in the host's.
    links = [n for n in os.listdir("/sys/class/net") if cid in n or s.prefix in n]
    if links:
        left.append("host links %s" % links)
    if shutil.which("nft"):
        tables = subprocess.run(["nft", "list", "tables"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL).stdout.decode()
        if re.search(r"^table inet agentbox$", tables, re.M):
            left.append("an agentbox nftables table in the host's network namespace")
    if known.get("netns"):
        # A namespace's inode number is reused once it is gone: a process
        # started after the container's end is in another one (parallel
        # tests make new ones all the time).
        for pid in pids():
            try:
                st = start_time(pid)
                if ("net:[%s]" % os.stat("/proc/%d/ns/net" % pid).st_ino == known["netns"] and st is not None
                        and int(st) <= known.get("ended", float("inf"))):
                    left.append("process %d is in its network namespace" % pid)
            except OSError:
                pass
    return left


# ---- one point ---------------------------------------------------------------------

def launch(s, root, cid, cmd, strace_args, trace):
    argv = [s.rt, "--root", root]
    if cmd == "create":
        argv += ["create", "--bundle", s.bundle, cid]
    elif cmd == "run":
        argv += ["run", "--bundle", s.bundle, cid]
    else:
        argv += ["run", "--default", cid, "--", "sleep", "infinity"]
    errf = open(trace + ".err", "wb")
    # -D: strace runs as a grandchild, and the runtime is our own child
    # (its exit status is ours to wait for, strace's buffers do not matter);
    # a session of its own holds strace, the runtime and the container.
    p = subprocess.Popen(["strace", "-D", "-f", "-q", "-o", trace] + strace_args + argv, env=s.env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True)
    errf.close()
    return p


def session(sid):
    """Live processes of session sid (strace, the runtime, the container)."""
    found = []
    for pid in pids():
        st = read("/proc/%d/stat" % pid)
        if st is None:
            continue
        f = st.rsplit(")", 1)[1].split()
        if f[0] not in ("Z", "X") and int(f[3]) == sid:
            found.append(pid)
    return found


def container_gone(cid, secs):
    """Whether no process is left in the cgroups of container cid (waiting
    up to secs for the kernel to finish killing)."""
    t0 = time.monotonic()
    while True:
        if not [q for q in pids() if "agentbox-" + cid in (read("/proc/%d/cgroup" % q) or "")]:
            return True
        if time.monotonic() - t0 > secs:
            return False
        time.sleep(0.05)


def program_was_killed(trace, sysc):
    """Whether the process strace killed at its call of sysc had executed
    the container's program first."""
    text = read(trace) or ""
    programs = set(re.findall(r"^\s*(\d+)\s+execve\(\"[^\"]*/(?:abtest|sleep)\".* = 0$", text, re.M))
    hit = re.findall(r"^\s*(\d+)\s+%s\(.*= \?$" % sysc, text, re.M)
    return bool(hit) and all(pid in programs for pid in hit)


def state_of(root, cid):
    try:
        st = json.loads(read(os.path.join(root, cid, "state.json")) or "")
        return st.get("status"), int(st.get("pid") or 0)
    except ValueError:
        return None, 0


def program_pid(root, cid, want):
    """The container's pid once its program runs (state running, the
    process exec'd), else 0."""
    status, pid = state_of(root, cid)
    if status == "running" and pid > 0 and (read("/proc/%d/comm" % pid) or "").strip() == want:
        return pid
    return 0


def rt(s, root, *args, timeout=60):
    try:
        return subprocess.run([s.rt, "--root", root] + list(args), env=s.env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, 124, b"", b"hung for %ds" % timeout)


# Before main(): the dynamic loader's own one-line messages (exit 127).
LOADER = re.compile(r"error while loading shared libraries|cannot set up thread-local storage|"
                    r"cannot allocate TLS|cannot allocate memory in static TLS block")


# A --enable-sanitizers build: the sanitizer's runtime makes syscalls of
# its own (mmap, sigaltstack, prlimit64, ...) and stops with a report of
# its own when one fails.  Those are its failures, not agentbox's; a report
# of a bug (an overflow, a use after free, UBSan's runtime error) is one.
SANITIZER_SELF = re.compile(r"Sanitizer: CHECK failed|Sanitizer failed to (de)?allocate|Sanitizer [gs]etrlimit\(\) failed|"
                            r"Sanitizer: allocator is out of memory|Sanitizer has encountered a fatal error")


def one_line_failure(status, err):
    lines = err.decode("utf-8", "replace").splitlines()
    if status == 0:
        return "exited 0 but the program never ran"
    if len(lines) == 1 and status == 127 and LOADER.search(lines[0]):
        return None
    if any(SANITIZER_SELF.search(ln) for ln in lines):
        return None
    # One error line; a warning may come before it when the same point
    # also failed a step that may fail (the seccomp cache, say): strace
    # injects into every thread that makes that call.
    errors = [ln for ln in lines if not ln.startswith("agentbox: warning: ")]
    if len(errors) != 1 or not errors[0].startswith("agentbox: ") or errors[0] != lines[-1]:
        return "exit %s with %d lines on stderr: %r" % (status, len(lines), lines[:4])
    return None


def run_point(s, cmd, point, ref, workdir):
    """Run cmd with the fault of point (syscall, N, error or KILL); returns
    (passed, what happened, the problems found)."""
    sysc, n, action = point
    root = os.path.join(workdir, "root")
    cid = s.new_id()
    trace = os.path.join(workdir, "trace")
    killing = action == "KILL"
    inject = "%s:%s:when=%d" % (sysc, "signal=KILL" if killing else "error=" + action, n)
    want = "sleep" if cmd == "run-default" else "abtest"
    known, problems, outcome = {}, [], None
    p = launch(s, root, cid, cmd, ["-e", "trace=%s,execve" % sysc, "-e", "inject=" + inject], trace)
    killed_program = None  # to be decided from the trace, once strace is done
    try:
        deadline = time.monotonic() + POINT_TIMEOUT
        pid = 0
        # until the program runs, or the runtime is done
        while time.monotonic() < deadline:
            if cmd != "create":
                pid = program_pid(root, cid, want)
            if pid or p.poll() is not None:
                break
            time.sleep(0.01)
        else:
            problems.append("hung: neither ran its program nor ended in %ds" % POINT_TIMEOUT)
        err = read(trace + ".err", "rb") or b""
        status = p.returncode
        if cmd == "create" and not problems:
            if status == 0:
                r = rt(s, root, "start", cid)
                if r.returncode != 0:
                    why = one_line_failure(r.returncode, r.stderr)
                    if why:
                        problems.append("start after create: " + why)
                    outcome = "start failed with one line"
                else:
                    for _ in range(500):
                        pid = program_pid(root, cid, want)
                        if pid:
                            break
                        time.sleep(0.01)
                    if not pid:
                        problems.append("start succeeded but the program does not run")
            elif status < 0:
                outcome = "killed by " + signal.Signals(-status).name
                if not killing and sysc not in LIBC_FATAL:
                    problems.append("a failure of %s crashed create (%s)" % (sysc, signal.Signals(-status).name))
            else:
                why = one_line_failure(status, err)
                if why:
                    problems.append(why)
                outcome = "failed with one line"
        elif not problems and not pid:
            if status < 0:
                outcome = "killed by " + signal.Signals(-status).name
                if not killing and sysc not in LIBC_FATAL:
                    problems.append("a failure of %s crashed the runtime (%s)" % (sysc, signal.Signals(-status).name))
                if killing and not container_gone(cid, 5):
                    # the supervisor died: so must the container, by itself
                    problems.append("the supervisor was killed, the container's processes run on")
            elif killing and status > 128 and not err.strip():
                # the program itself was killed by the fault: a run that
                # says so by its status, as for any program killed
                killed_program = status - 128
            else:
                why = one_line_failure(status, err)
                if why:
                    problems.append(why)
                outcome = "failed with one line"
        if pid:
            try:
                known["procs"] = [(pid, start_time(pid))]
                known["netns"] = "net:[%d]" % os.stat("/proc/%d/ns/net" % pid).st_ino
                got = probe(pid, cid, root)
            except OSError:
                got = None
            if got is None or not alive(pid, known["procs"][0][1]) or not has_namespaces(pid):
                # strace injects into the program too: it may die of it;
                # or a supervisor killed took it along while it was looked at
                outcome = "the program ran, and died of the fault"
            else:
                bad = diff(ref, got)
                if bad:
                    problems.append("the sandbox differs from the clean run: " + "; ".join(bad))
                outcome = "the full sandbox"
            if killing and cmd != "create":
                # a supervisor killed while its program runs: the container
                # must die with it, by itself
                try:
                    p.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    pass
                if p.returncode == -signal.SIGKILL and not container_gone(cid, 5):
                    problems.append("the supervisor was killed while its program ran, the container runs on")
    finally:
        d = rt(s, root, "delete", "--force", cid)
        known["ended"] = uptime_ticks()
        if d.returncode != 0:
            problems.append("delete --force failed: %s" % d.stderr.decode("utf-8", "replace").strip()[:300])
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            problems.append("the runtime still runs after delete --force")
        t0 = time.monotonic()
        while session(p.pid) and time.monotonic() - t0 < 15:
            time.sleep(0.02)
        if session(p.pid):
            problems.append("processes %s (strace and what it traces) remain after delete --force" % session(p.pid))
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
        if p.poll() is None:
            p.kill()
            p.wait()
    if killed_program is not None:
        if program_was_killed(trace, sysc):
            outcome = "the program ran, and was killed (status %d)" % (128 + killed_program)
        else:
            problems.append("exit %d, nothing on stderr, and no program ran: a setup that died unreported"
                            % (128 + killed_program))
    problems += leftovers(s, root, cid, known)
    if problems:
        scrub(s, root, cid)
    return not problems, outcome or "?", problems


def scrub(s, root, cid):
    """After a failed point, leave the host clean for the next one even when
    the runtime cannot: its processes killed, its cgroups and the mounts in
    its state root removed (as lib.sh's leftover check does)."""
    rt(s, root, "delete", "--force", cid)
    name = "agentbox-" + cid
    for pid in pids():
        if name in (read("/proc/%d/cgroup" % pid) or ""):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    container_gone(cid, 5)
    for parent in s.cg_parents:
        try:
            os.rmdir(os.path.join(parent, name))
        except OSError:
            pass
    for line in (read("/proc/self/mountinfo") or "").splitlines():
        mnt = line.split()[4]
        if mnt.startswith(root + "/"):
            subprocess.run(["umount", "-l", mnt], stderr=subprocess.DEVNULL)
    shutil.rmtree(root, ignore_errors=True)


# ---- the clean run -----------------------------------------------------------------

class SweepError(Exception):
    pass


def reference(s, cmd, workdir):
    """The clean run: the probe of its sandbox and the points (syscall, N)."""
    root = os.path.join(workdir, "root")
    cid = s.new_id()
    trace = os.path.join(workdir, "trace.ref")
    want = "sleep" if cmd == "run-default" else "abtest"
    p = launch(s, root, cid, cmd, [], trace)
    pid, started = 0, False
    try:
        for _ in range(3000):
            if cmd == "create" and not started and p.poll() is not None:
                if p.returncode != 0:
                    raise SweepError("the clean create failed: %s" % read(trace + ".err"))
                r = rt(s, root, "start", cid)
                if r.returncode != 0:
                    raise SweepError("the clean start failed: %s" % r.stderr.decode())
                started = True
            pid = program_pid(root, cid, want)
            if pid or (cmd != "create" and p.poll() is not None):
                break
            time.sleep(0.01)
        if not pid:
            raise SweepError("the clean %s does not run its program: %s" % (cmd, read(trace + ".err")))
        got = probe(pid, cid, root)
    except (SweepError, OSError):
        scrub(s, root, cid)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        raise
    rt(s, root, "delete", "--force", cid)
    p.wait(timeout=30)
    for _ in range(1500):
        if not session(p.pid):
            break
        time.sleep(0.02)
    left = leftovers(s, root, cid, {})
    if left:
        scrub(s, root, cid)
        raise SweepError("the clean %s leaves %s" % (cmd, left))
    counts = {}
    for line in (read(trace) or "").splitlines():
        m = re.match(r"\s*(\d+)\s+([a-z_0-9]+)\(", line)
        if m:
            key = (m.group(1), m.group(2))
            counts[key] = counts.get(key, 0) + 1
    most = {}
    for (tid, sysc), c in counts.items():
        most[sysc] = max(most.get(sysc, 0), c)
    # exit_group/exit never return: a failure cannot be injected there
    for sysc in ("exit_group", "exit", "execve", "rt_sigreturn"):
        most.pop(sysc, None)
    return got, sorted((sysc, n) for sysc, c in most.items() for n in range(1, c + 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runtime", default=os.environ.get("AGENTBOX") or os.path.join(TOP, "_build", "agentbox"))
    ap.add_argument("--abtest", default=os.environ.get("ABTEST"))
    ap.add_argument("--commands", default="create,run,run-default")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--sample", type=int, default=0, help="at most N points per command (0: all)")
    ap.add_argument("--seed", type=int, default=None, help="for --sample (default: the day)")
    ap.add_argument("--kill-stride", type=int, default=3, help="a SIGKILL point at every K-th point")
    ap.add_argument("--points", default="", help="only these, e.g. mount#7:EIO,close#21:KILL")
    ap.add_argument("--tap", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    out = sys.stdout

    def say(line):
        out.write(line + "\n")
        out.flush()

    if os.geteuid() != 0 or not shutil.which("strace"):
        say("1..0 # SKIP needs root and strace" if args.tap else "fault-sweep: needs root and strace")
        return 0
    if not args.abtest:
        for c in (os.path.join(os.environ.get("AB_TOP_BUILDDIR", ""), "tests/helper/abtest"),
                  os.path.join(os.path.dirname(os.path.abspath(args.runtime)), "tests/helper/abtest")):
            if os.access(c, os.X_OK):
                args.abtest = c
                break
    if not args.abtest or not os.access(args.abtest, os.X_OK):
        say("1..0 # SKIP the abtest helper is not built" if args.tap else "fault-sweep: build tests/helper/abtest")
        return 0 if args.tap else 1
    seed = args.seed if args.seed is not None else int(time.time()) // 86400
    s = Setup(args)
    sizes = {}
    n_ok = n_bad = 0
    try:
        for cmd in args.commands.split(","):
            refdir = tempfile.mkdtemp(dir=s.dir)
            ref, points = reference(s, cmd, refdir)
            # An injected error replaces the syscall: a close(2) "failing"
            # so would leave the fd open, which Linux never does (the fd is
            # released whatever close returns).  Its points are kill points.
            no_errors = (NO_ERRORS | (SANITIZER_FATAL if s.sanitized else set())
                         | (MUSL_FATAL if s.musl else set()))
            plan = [(sysc, n, ERRORS[i % len(ERRORS)]) for i, (sysc, n) in enumerate(points)
                    if sysc not in no_errors]
            plan += [(sysc, n, "KILL") for i, (sysc, n) in enumerate(points)
                     if i % args.kill_stride == 0 or sysc in no_errors]
            if args.points:
                plan = []
                for spec in args.points.split(","):
                    m = re.match(r"(\w+)#(\d+):(\w+)$", spec)
                    if not m:
                        sys.exit("fault-sweep: --points: `%s` is not SYSCALL#N:ERROR|KILL" % spec)
                    plan.append((m.group(1), int(m.group(2)), m.group(3)))
            elif args.sample and len(plan) > args.sample:
                plan = random.Random("%d-%s" % (seed, cmd)).sample(plan, args.sample)
                plan.sort()
            sizes[cmd] = (len(plan), len(points))
            say("# %s: %d syscall occurrences (per thread); %d points%s" % (
                cmd, len(points), len(plan), " (sample, seed %d)" % seed if args.sample else ""))
            dirs = [tempfile.mkdtemp(dir=s.dir) for _ in range(max(1, args.jobs))]
            free = list(dirs)
            flock = threading.Lock()

            def job(pt):
                with flock:
                    d = free.pop()
                try:
                    return pt, run_point(s, cmd, pt, ref, d)
                finally:
                    with flock:
                        free.append(d)

            with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
                for pt, (ok, outcome, problems) in ex.map(job, plan):
                    name = "%s: %s #%d %s: %s" % (cmd, pt[0], pt[1], "SIGKILL" if pt[2] == "KILL" else pt[2], outcome)
                    if ok:
                        n_ok += 1
                    else:
                        n_bad += 1
                    if args.tap:
                        say("%s %d - %s" % ("ok" if ok else "not ok", n_ok + n_bad, name))
                        for p in problems:
                            say("#   " + p)
                    elif not ok or args.verbose:
                        say(("ok   " if ok else "FAIL ") + name)
                        for p in problems:
                            say("     " + p)
    except SweepError as e:
        say(("Bail out! " if args.tap else "") + "fault-sweep: %s" % str(e)[:2000])
        return 1
    finally:
        s.cleanup()
    say("# fault sweep: " + ", ".join("%s %d points (of %d occurrences)" % (c, a, b) for c, (a, b) in sizes.items()))
    say("# fault sweep: %d passed, %d failed" % (n_ok, n_bad) if args.tap else
        "fault sweep: %d passed, %d failed" % (n_ok, n_bad))
    if args.tap:
        say("1..%d" % (n_ok + n_bad))
    return 0 if n_bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The hand-made fixtures of `agentbox audit`: one bundle per case.

    fixtures.py OUTDIR        write OUTDIR/<name>/config.json for every case,
                              and the symlinks and directories some cases need
    fixtures.py --tree DIR    the same without those (the copies kept in the source
                              tree: a symlink to /etc has no place in a tarball)

Every fixture is CLEAN (a config that triggers no rule at all: the hardened
profile of `agentbox spec`, with a CPU quota and a short seccomp
allowlist) with one change.  tests/audit/cases.txt says which rule each one
must trigger and which fixture must not.  The copies under
tests/audit/fixtures/ are this script's output (t-audit-rules checks they
are up to date); regenerate them with

    python3 tests/audit/fixtures.py --tree tests/audit/fixtures

The real-world fixtures (runc spec, podman, agentbox spec) come from
capture.sh instead.
"""

import copy
import json
import os
import sys

MASKED = ["/proc/acpi", "/proc/asound", "/proc/interrupts", "/proc/kcore", "/proc/keys",
          "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
          "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap"]
READONLY = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
SETS = ("bounding", "effective", "inheritable", "permitted", "ambient")
CLONE_NEW_MASK = 0x7E020000
ALLOWED = ["read", "write", "openat", "close", "fstat", "newfstatat", "lseek", "mmap", "mprotect",
           "munmap", "brk", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "ioctl", "pread64",
           "access", "pipe2", "dup2", "getpid", "wait4", "kill", "uname", "fcntl", "getcwd",
           "chdir", "getuid", "getgid", "geteuid", "getegid", "arch_prctl", "set_tid_address",
           "exit", "exit_group", "execve", "futex", "getrandom", "prlimit64", "rseq"]

CLEAN = {
    "ociVersion": "1.3.0",
    "process": {
        "terminal": False,
        "user": {"uid": 0, "gid": 0},
        "args": ["/bin/sh"],
        "env": ["PATH=/usr/bin:/bin"],
        "cwd": "/",
        "capabilities": {k: [] for k in SETS},
        "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024},
                    {"type": "RLIMIT_CORE", "hard": 0, "soft": 0}],
        "noNewPrivileges": True,
    },
    "root": {"path": "rootfs", "readonly": True},
    "hostname": "agentbox",
    "mounts": [
        {"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
         "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
        {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
         "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
        {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
         "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
        {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
        {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]},
    ],
    "linux": {
        "namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount", "user", "cgroup", "time")],
        "uidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],
        "gidMappings": [{"containerID": 0, "hostID": 100000, "size": 65536}],
        "resources": {
            "devices": [{"allow": False, "access": "rwm"}],
            "memory": {"limit": 1073741824, "swap": 1073741824},
            "pids": {"limit": 512},
            "cpu": {"quota": 100000, "period": 100000},
        },
        "maskedPaths": MASKED,
        "readonlyPaths": READONLY,
        "seccomp": {
            "defaultAction": "SCMP_ACT_ERRNO",
            "defaultErrnoRet": 1,
            "architectures": ["SCMP_ARCH_X86_64"],
            "syscalls": [
                {"names": ALLOWED, "action": "SCMP_ACT_ALLOW"},
                {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
                 "args": [{"index": 0, "value": CLONE_NEW_MASK, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]},
            ],
        },
    },
}


# ---- edits ---------------------------------------------------------------------

def drop_ns(c, t):
    c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != t]
    if t == "user":
        del c["linux"]["uidMappings"], c["linux"]["gidMappings"]
    if t == "uts":
        del c["hostname"]


def join_ns(c, t, path):
    for n in c["linux"]["namespaces"]:
        if n["type"] == t:
            n["path"] = path


def caps(c, names, sets=("bounding", "effective", "inheritable", "permitted")):
    for s in sets:
        c["process"]["capabilities"][s] = list(names)


def bind(c, src, dest, options=("rbind", "ro", "rro")):
    c["mounts"].append({"destination": dest, "type": "bind", "source": src, "options": list(options)})


def allow_syscall(c, names, args=None):
    rule = {"names": names, "action": "SCMP_ACT_ALLOW"}
    if args:
        rule["args"] = args
    c["linux"]["seccomp"]["syscalls"].append(rule)


def hook(c, kind, path, args=None):
    h = {"path": path}
    if args:
        h["args"] = args
    c.setdefault("hooks", {}).setdefault(kind, []).append(h)


def mount_opts(c, dest, options):
    for m in c["mounts"]:
        if m["destination"] == dest:
            m["options"] = options


def annotate(c, key, value):
    c.setdefault("annotations", {})[key] = value


def res(c):
    return c["linux"]["resources"]


ALL_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
            "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
            "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
            "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
            "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
            "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL",
            "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
            "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"]


def as_user(c, uid=1000):
    c["process"]["user"] = {"uid": uid, "gid": uid}


def seccomp_default(c, action):
    sc = c["linux"]["seccomp"]
    sc["defaultAction"] = action
    sc.pop("defaultErrnoRet", None)
    sc["syscalls"] = [{"names": ["kexec_load", "init_module"], "action": "SCMP_ACT_ERRNO"}]


def userns_off_bind(c, opts):
    drop_ns(c, "user")
    bind(c, "/srv/data", "/data", opts)


# name -> edit (a function of the config); the symlinks after the table.
CASES = {
    "clean": lambda c: None,
    # namespaces
    "no-pid-ns": lambda c: drop_ns(c, "pid"),
    "no-net-ns": lambda c: drop_ns(c, "network"),
    "no-ipc-ns": lambda c: drop_ns(c, "ipc"),
    "no-mount-ns": lambda c: drop_ns(c, "mount"),
    "no-uts-ns": lambda c: drop_ns(c, "uts"),
    "no-cgroup-ns": lambda c: drop_ns(c, "cgroup"),
    "join-host-net": lambda c: join_ns(c, "network", "/proc/1/ns/net"),
    "join-pod-net": lambda c: join_ns(c, "network", "/run/netns/pod"),
    "join-pod-net-wall": lambda c: (join_ns(c, "network", "/run/netns/pod"),
                                    annotate(c, "dev.agentbox.net.allow", "93.184.216.34:443/tcp")),
    # users
    "no-user-ns": lambda c: drop_ns(c, "user"),
    "map-host-root": lambda c: c["linux"].update(uidMappings=[{"containerID": 0, "hostID": 0, "size": 65536}]),
    "map-system-ids": lambda c: c["linux"].update(gidMappings=[{"containerID": 0, "hostID": 500, "size": 65536}]),
    # capabilities
    "cap-sys-admin": lambda c: caps(c, ["CAP_SYS_ADMIN"]),
    "cap-sys-ptrace": lambda c: caps(c, ["CAP_SYS_PTRACE"]),
    "cap-net-admin": lambda c: caps(c, ["CAP_NET_ADMIN"]),
    "cap-dac-read-search": lambda c: caps(c, ["CAP_DAC_READ_SEARCH"]),
    "cap-sys-module": lambda c: caps(c, ["CAP_SYS_MODULE"]),
    "cap-sys-rawio": lambda c: caps(c, ["CAP_SYS_RAWIO"]),
    "cap-net-raw": lambda c: caps(c, ["CAP_NET_RAW"]),
    "cap-sys-time": lambda c: caps(c, ["CAP_SYS_TIME"]),
    "cap-bpf": lambda c: caps(c, ["CAP_BPF"]),
    "cap-all": lambda c: caps(c, ALL_CAPS),
    "cap-chown": lambda c: caps(c, ["CAP_CHOWN", "CAP_KILL"]),
    "cap-bounding-nnp-off": lambda c: (as_user(c), caps(c, ["CAP_SYS_CHROOT"], ["bounding"]),
                                       c["process"].update(noNewPrivileges=False)),
    "cap-bounding-nnp-on": lambda c: (as_user(c), caps(c, ["CAP_SYS_CHROOT"], ["bounding"])),
    "cap-ambient": lambda c: (as_user(c), caps(c, ["CAP_NET_BIND_SERVICE"], SETS)),
    "cap-ambient-not-inheritable": lambda c: (as_user(c), caps(c, ["CAP_NET_BIND_SERVICE"],
                                                                 ["bounding", "effective", "permitted", "ambient"])),
    # privileges
    "nnp-off": lambda c: c["process"].update(noNewPrivileges=False),
    "oom-protected": lambda c: c["process"].update(oomScoreAdj=-500),
    "oom-positive": lambda c: c["process"].update(oomScoreAdj=500),
    "sched-fifo": lambda c: c["process"].update(scheduler={"policy": "SCHED_FIFO", "priority": 10}),
    "sched-batch": lambda c: c["process"].update(scheduler={"policy": "SCHED_BATCH"}),
    # seccomp
    "no-seccomp": lambda c: c["linux"].pop("seccomp"),
    "seccomp-default-allow": lambda c: seccomp_default(c, "SCMP_ACT_ALLOW"),
    "seccomp-io-uring": lambda c: allow_syscall(c, ["io_uring_setup", "io_uring_enter"]),
    "seccomp-unshare-masked": lambda c: allow_syscall(
        c, ["unshare"], [{"index": 0, "value": CLONE_NEW_MASK, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]),
    "seccomp-unshare-cond": lambda c: allow_syscall(
        c, ["unshare"], [{"index": 1, "value": 0, "op": "SCMP_CMP_EQ"}]),
    "seccomp-mount-sys-admin": lambda c: (caps(c, ["CAP_SYS_ADMIN"]), allow_syscall(c, ["mount"])),
    "seccomp-unknown-name": lambda c: allow_syscall(c, ["no_such_syscall"]),
    # mounts
    "root-writable": lambda c: c["root"].update(readonly=False),
    "bind-host-root": lambda c: bind(c, "/", "/host"),
    "bind-host-proc": lambda c: bind(c, "/proc", "/host/proc"),
    "bind-host-sys": lambda c: bind(c, "/sys", "/host/sys"),
    "bind-docker-sock": lambda c: bind(c, "/var/run/docker.sock", "/var/run/docker.sock", ["bind", "rw"]),
    "bind-host-dev": lambda c: bind(c, "/dev", "/host/dev"),
    "bind-host-etc": lambda c: bind(c, "/etc", "/host/etc", ["rbind", "rw"]),
    "bind-host-home": lambda c: bind(c, "/home/user", "/home/user"),
    "bind-data": lambda c: bind(c, "/srv/data", "/data"),
    "bind-through-symlink": lambda c: bind(c, "data-link/secrets", "/data"),
    "bind-bundle-dir": lambda c: bind(c, "data-dir/secrets", "/data"),
    "bind-dotdot": lambda c: bind(c, "../../etc", "/data"),
    "bind-rshared": lambda c: bind(c, "/srv/data", "/data", ["rbind", "ro", "rshared"]),
    "bind-rbind-ro": lambda c: bind(c, "/srv/data", "/data", ["rbind", "ro"]),
    "bind-rbind-rro": lambda c: bind(c, "/srv/data", "/data", ["rbind", "ro", "rro"]),
    "bind-writable-no-userns": lambda c: userns_off_bind(c, ["bind", "rw"]),
    "bind-writable-userns": lambda c: bind(c, "/srv/data", "/data", ["bind", "rw"]),
    "sysfs-rw-no-userns": lambda c: (drop_ns(c, "user"), mount_opts(c, "/sys", ["nosuid", "noexec", "nodev"])),
    "sysfs-rw-userns": lambda c: mount_opts(c, "/sys", ["nosuid", "noexec", "nodev"]),
    "cgroup-rw": lambda c: c["mounts"].append({"destination": "/sys/fs/cgroup", "type": "cgroup",
                                               "source": "cgroup", "options": ["nosuid", "noexec", "nodev"]}),
    "cgroup-ro": lambda c: c["mounts"].append({"destination": "/sys/fs/cgroup", "type": "cgroup",
                                               "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "ro"]}),
    # masked and read-only paths
    "masked-removed": lambda c: c["linux"].update(maskedPaths=["/proc/acpi"]),
    "proc-sys-writable": lambda c: (drop_ns(c, "user"),
                                    c["linux"].update(readonlyPaths=[p for p in READONLY if p != "/proc/sys"])),
    "readonly-removed": lambda c: c["linux"].update(readonlyPaths=["/proc/sys"]),
    # cgroups
    "no-pids-limit": lambda c: res(c).pop("pids"),
    "no-memory-limit": lambda c: res(c).pop("memory"),
    "no-cpu-limit": lambda c: res(c).pop("cpu"),
    "oom-killer-disabled": lambda c: res(c)["memory"].update(disableOOMKiller=True),
    "cgroups-path-absolute": lambda c: c["linux"].update(cgroupsPath="/system.slice/sshd.service"),
    "cgroups-path-relative": lambda c: c["linux"].update(cgroupsPath="agents/box1"),
    "swap-unlimited": lambda c: res(c)["memory"].update(swap=-1),
    # rlimits
    "rlimit-nofile-huge": lambda c: c["process"]["rlimits"].__setitem__(
        0, {"type": "RLIMIT_NOFILE", "hard": 4194304, "soft": 4194304}),
    "rlimit-nofile-1m": lambda c: c["process"]["rlimits"].__setitem__(
        0, {"type": "RLIMIT_NOFILE", "hard": 1048576, "soft": 1048576}),
    "rlimit-memlock": lambda c: c["process"]["rlimits"].append(
        {"type": "RLIMIT_MEMLOCK", "hard": 18446744073709551615, "soft": 18446744073709551615}),
    "rlimit-core": lambda c: c["process"]["rlimits"].__setitem__(
        1, {"type": "RLIMIT_CORE", "hard": 18446744073709551615, "soft": 18446744073709551615}),
    "rlimit-rtprio": lambda c: c["process"]["rlimits"].append({"type": "RLIMIT_RTPRIO", "hard": 50, "soft": 50}),
    # sysctl
    "sysctl-global": lambda c: c["linux"].update(sysctl={"kernel.core_pattern": "|/tmp/x"}),
    "sysctl-host-net": lambda c: (join_ns(c, "network", "/proc/1/ns/net"),
                                  c["linux"].update(sysctl={"net.ipv4.ip_forward": "1"})),
    "sysctl-own-net": lambda c: c["linux"].update(sysctl={"net.ipv4.ip_forward": "1"}),
    # devices
    "devices-allow-all": lambda c: res(c)["devices"].append({"allow": True, "access": "rwm"}),
    "device-mem": lambda c: (c["linux"].update(devices=[{"path": "/dev/mem", "type": "c", "major": 1, "minor": 1}]),
                             res(c)["devices"].append({"allow": True, "type": "c", "major": 1, "minor": 1,
                                                       "access": "rw"})),
    "device-mem-denied": lambda c: c["linux"].update(devices=[{"path": "/dev/mem", "type": "c", "major": 1,
                                                               "minor": 1}]),
    "device-block": lambda c: c["linux"].update(devices=[{"path": "/dev/sda", "type": "b", "major": 8, "minor": 0}]),
    "device-kvm": lambda c: res(c)["devices"].append({"allow": True, "type": "c", "major": 10, "minor": 232,
                                                      "access": "rwm"}),
    # network
    "net-allow-all": lambda c: annotate(c, "dev.agentbox.net.allow", "0.0.0.0/0"),
    "net-allow-private": lambda c: annotate(c, "dev.agentbox.net.allow", "10.0.0.0/8:5432/tcp"),
    "net-allow-public": lambda c: annotate(c, "dev.agentbox.net.allow", "93.184.216.34:443/tcp"),
    "net-device": lambda c: c["linux"].update(netDevices={"eth1": {"name": "eth0"}}),
    "domains-tld": lambda c: annotate(c, "dev.agentbox.net.allow-domains", "*.com"),
    "domains-exact": lambda c: annotate(c, "dev.agentbox.net.allow-domains", "pypi.org,*.pythonhosted.org"),
    "net-wall-off": lambda c: annotate(c, "dev.agentbox.net.wall", "off"),
    # hooks
    "hook-create-runtime": lambda c: hook(c, "createRuntime", "/usr/libexec/oci/hooks.d/setup"),
    "hook-create-container": lambda c: hook(c, "createContainer", "/usr/libexec/oci/hooks.d/inside"),
    "hook-start-container": lambda c: hook(c, "startContainer", "/bin/true"),
    "hook-writable": lambda c: (bind(c, "/srv/hooks", "/hooks", ["bind", "rw"]),
                                hook(c, "poststop", "/srv/hooks/cleanup")),
    "hook-inline": lambda c: hook(c, "poststop", "/bin/sh", ["sh", "-c", "rm -rf /var/lib/x"]),
    # the document
    "unknown-property": lambda c: c["process"].update(futureIsolation={"mode": "strict"}),
    "annotation-crun": lambda c: annotate(c, "run.oci.keep_original_groups", "1"),
    "annotation-other": lambda c: annotate(c, "org.example.owner", "team-a"),
    "refused-mount-label": lambda c: c["linux"].update(mountLabel="system_u:object_r:container_file_t:s0"),
    # landlock
    "landlock-beyond-mount": lambda c: annotate(c, "dev.agentbox.landlock", json.dumps(
        {"abi": 4, "auto": True, "pathBeneath": [{"paths": ["/etc"], "allowedAccess": ["read_file", "write_file"]}]})),
    "landlock-within-mounts": lambda c: annotate(c, "dev.agentbox.landlock", json.dumps(
        {"abi": 4, "pathBeneath": [{"paths": ["/"], "allowedAccess": ["execute", "read_file", "read_dir"]},
                                   {"paths": ["/tmp"], "allowedAccess": ["read_file", "write_file", "make_reg"]}]})),
}

# Symlinks and directories inside a bundle (relative to it).
LINKS = {
    "bind-through-symlink": [("data-link", "/etc")],
}
DIRS = {
    "bind-bundle-dir": ["data-dir/secrets"],
}


def write(outdir, links=True):
    for name, edit in CASES.items():
        c = copy.deepcopy(CLEAN)
        edit(c)
        d = os.path.join(outdir, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as f:
            json.dump(c, f, indent=2)
            f.write("\n")
        if not links:
            continue
        for link, target in LINKS.get(name, []):
            p = os.path.join(d, link)
            if not os.path.islink(p):
                os.symlink(target, p)
        for sub in DIRS.get(name, []):
            os.makedirs(os.path.join(d, sub), exist_ok=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    tree = args[:1] == ["--tree"]
    if len(args) != 1 + tree:
        sys.exit("usage: fixtures.py [--tree] OUTDIR")
    write(args[-1], links=not tree)

#!/bin/bash
# Configs as the OCI conformance suite (opencontainers/runtime-tools
# validation) and Docker-style generators write them: no user namespace,
# runc's default capabilities raised in every set (ambient too), no
# no_new_privs and a seccomp allowlist that predates openat2, so the filter
# is installed before the privilege drop and governs every syscall the
# runtime makes after it.  Each test checks its effect from the host: a file
# the process created relative to its cwd in a host directory, its exit
# status.  Runs against any runtime: RUNTIME=/usr/sbin/runc t-oci-configs.sh.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run delete
plan_later

caps='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FSETID","CAP_FOWNER","CAP_MKNOD","CAP_NET_RAW","CAP_SETGID","CAP_SETUID","CAP_SETFCAP","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT","CAP_KILL","CAP_AUDIT_WRITE"]'
cap_edits=()
for set in bounding effective inheritable permitted ambient; do cap_edits+=("process.capabilities.$set=$caps"); done

# A Docker-style allowlist: every syscall a program needs, none of the new
# ones (openat2, open_tree, mount_setattr, clone3, close_range, pidfd_*),
# default action ERRNO (EPERM).  Built from the names the abtest helper and
# busybox use, so it is the same for every runtime under test.
"$PYTHON3" - "$T/seccomp.json" <<'EOF'
import json, sys
names = """accept accept4 access alarm arch_prctl bind brk capget capset chdir chmod chown
clock_getres clock_gettime clock_nanosleep close connect dup dup2 dup3 epoll_create epoll_create1
epoll_ctl epoll_pwait epoll_wait eventfd2 execve execveat exit exit_group faccessat faccessat2
fadvise64 fallocate fchdir fchmod fchmodat fchown fchownat fcntl fdatasync flock fork fstat
fstatfs fsync ftruncate futex getcwd getdents64 getegid geteuid getgid getgroups getitimer
getpeername getpgid getpgrp getpid getppid getpriority getrandom getresgid getresuid getrlimit
get_robust_list getrusage getsid getsockname getsockopt gettid gettimeofday getuid getxattr ioctl
kill lchown lgetxattr link linkat listen lseek lstat madvise mkdir mkdirat mknod mknodat mmap
mprotect mremap munmap nanosleep newfstatat open openat pause pipe pipe2 poll ppoll prctl pread64
prlimit64 pselect6 pwrite64 read readlink readlinkat readv recvfrom recvmsg rename renameat
renameat2 restart_syscall rmdir rt_sigaction rt_sigpending rt_sigprocmask rt_sigqueueinfo
rt_sigreturn rt_sigsuspend rt_sigtimedwait rseq sched_getaffinity sched_yield select sendmsg
sendto set_robust_list set_tid_address setgid setgroups setitimer setpgid setregid setresgid
setresuid setreuid setsid setsockopt setuid shutdown sigaltstack socket socketpair stat statfs
statx symlink symlinkat sysinfo tgkill time timer_create timer_delete timer_settime times tkill
truncate umask uname unlink unlinkat utimensat vfork wait4 waitid write writev""".split()
json.dump({"defaultAction": "SCMP_ACT_ERRNO",
           "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
           "syscalls": [{"names": names, "action": "SCMP_ACT_ALLOW"}]}, open(sys.argv[1], "w"))
EOF
profile="linux.seccomp=$(cat "$T/seccomp.json")"

# run_in BUNDLE: `run` it to completion; prints the exit status.
run_in ()
{
  local id st
  id=$(new_id)
  rt run --bundle "$1" "$id" </dev/null >"$1/stdout" 2>"$1/stderr"
  st=$?
  [ -s "$1/stderr" ] && diag "$(head -3 "$1/stderr")"
  rt delete --force "$id" >/dev/null 2>&1
  echo $st
}

# ---- the runtime-tools default: early seccomp, no no_new_privs ---------------

make_bundle --out "$T/early" "${cap_edits[@]}" "$profile" process.noNewPrivileges=false \
  'process.args=["/bin/abtest","touch","marker"]' process.cwd:=/out/sub
mkdir -p "$T/early/out/sub"
is "$(run_in "$T/early")" 0 "a filter installed before the privilege drop (no no_new_privs) that lacks openat2 still lets the process start"
ok "$([ -f "$T/early/out/sub/marker" ]; echo $?)" \
  "... in its cwd: the file it made relative to process.cwd appears in that directory on the host"

make_bundle --out "$T/late" "${cap_edits[@]}" "$profile" process.noNewPrivileges=true \
  'process.args=["/bin/abtest","touch","marker"]' process.cwd:=/out/sub
mkdir -p "$T/late/out/sub"
is "$(run_in "$T/late")" 0 "the same profile installed last (no_new_privs) runs the process"
ok "$([ -f "$T/late/out/sub/marker" ]; echo $?)" "... in its cwd, seen from the host"

# The cwd itself is a symlink inside the rootfs: resolved in the container.
make_bundle --out "$T/link" "${cap_edits[@]}" "$profile" process.noNewPrivileges=false \
  'process.args=["/bin/abtest","touch","marker"]' process.cwd:=/work
mkdir -p "$T/link/out/sub"
ln -s /out/sub "$T/link/rootfs/work"
is "$(run_in "$T/link")" 0 "a cwd that is a symlink in the rootfs is followed inside it under that filter"
ok "$([ -f "$T/link/out/sub/marker" ]; echo $?)" "... the file lands at the link's target inside the container"

# ---- a cwd only root may search, for a non-root process ----------------------

make_bundle --out "$T/priv" "${cap_edits[@]}" "$profile" process.noNewPrivileges=false \
  'process.args=["/bin/abtest","cwd"]' process.cwd:=/root/inner 'process.user={"uid":65534,"gid":65534}'
mkdir -p "$T/priv/rootfs/root/inner"
chmod 0700 "$T/priv/rootfs/root"
is "$(run_in "$T/priv")" 0 "a non-root process starts in a cwd below a directory only root may search (as with runc)"
is "$(head -1 "$T/priv/stdout")" cwd=/root/inner "... and its cwd is that directory"

# ---- rlimits that leave no room for another fd -------------------------------

# (runc 1.1 fails here: it lists /proc/self/fd to close fds after the limit.)
if is_agentbox; then
make_bundle --out "$T/nofile" "${cap_edits[@]}" "$profile" process.noNewPrivileges=false \
  'process.args=["/bin/abtest","touch","marker"]' process.cwd:=/out \
  'process.rlimits=[{"type":"RLIMIT_NOFILE","hard":4,"soft":4}]'
is "$(run_in "$T/nofile")" 0 "RLIMIT_NOFILE 4 (one fd above stdio, for the process) does not keep the runtime from entering the cwd"
ok "$([ -f "$T/nofile/out/marker" ]; echo $?)" "... the process ran in it"
fi

# ---- exec into such a container ---------------------------------------------

make_bundle --out "$T/ex" "${cap_edits[@]}" "$profile" process.noNewPrivileges=false \
  'process.args=["/bin/abtest","sleep-forever"]'
mkdir -p "$T/ex/out/sub"
id=$(new_id)
start_bg "$id" "$T/ex"
rt exec --cwd /out/sub "$id" /bin/abtest touch exec-marker </dev/null >"$T/ex/exec.out" 2>&1
is $? 0 "exec under the same profile (inherited from the config) runs"
ok "$([ -f "$T/ex/out/sub/exec-marker" ]; echo $?)" "... in the --cwd it was given, seen from the host"
rt delete --force "$id" >/dev/null 2>&1

# ---- a missing cwd is made, as runc makes it ---------------------------------
# (before the filter: this profile lacks openat2, which the lookup uses)

make_bundle --out "$T/missing" "${cap_edits[@]}" "$profile" process.noNewPrivileges=false \
  'process.args=["/bin/abtest","touch","/out/ran"]' process.cwd:=/no/such/dir
is "$(run_in "$T/missing")" 0 "a cwd that does not exist in the rootfs is made and the process runs"
ok "$([ -e "$T/missing/out/ran" ] && [ -d "$T/missing/rootfs/no/such/dir" ]; echo $?)" \
  "... the directory is in the rootfs, seen from the host"

# ---- a bind mount with filesystem options, as the suite's mounts test writes --

mkdir -p "$T/fsopt-src"
make_bundle "$T/fsopt" "${cap_edits[@]}" process.noNewPrivileges=false \
  'process.args=["/bin/abtest","touch","marker"]' process.cwd:=/data \
  "mounts+={\"destination\":\"/data\",\"source\":\"$T/fsopt-src\",\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"size=1k\",\"bind\",\"private\"]}"
is "$(run_in "$T/fsopt")" 0 "a bind mount with tmpfs-style key=value options (mode=755, size=1k) runs, as with runc"
ok "$([ -f "$T/fsopt-src/marker" ]; echo $?)" "... and the bind is in place: the file made in it is in the host directory"
if is_agentbox; then
  like "$(cat "$T/fsopt/stderr")" 'mode=755,size=1k.*ignored by a bind mount' "... with a warning that names the ignored options"
fi

# ---- linux.devices the host does not have, under a deny-all device policy -----
# The suite's linux_devices test: nodes with numbers no host device has, no
# rule in linux.resources.devices for them.  The runtime makes them (the
# container process is in its devices cgroup by then); the config's policy
# still decides access.

make_bundle "$T/devs" "${cap_edits[@]}" process.noNewPrivileges=false \
  'process.args=["/bin/abtest","stat","/dev/abtest-c"]' \
  'linux.devices+={"path":"/dev/abtest-c","type":"c","major":42,"minor":7,"fileMode":432,"uid":0,"gid":0}' \
  'linux.devices+={"path":"/dev/abtest-b","type":"b","major":42,"minor":8,"fileMode":432,"uid":0,"gid":0}' \
  'linux.resources.devices=[{"allow":false,"access":"rwm"}]'
is "$(run_in "$T/devs")" 0 "linux.devices absent from the host (char and block 42:7, 42:8) under a deny-all policy: the container runs"
like "$(tr '\n' ' ' <"$T/devs/stdout")" 'type=char mode=0660 uid=0 gid=0 rdev=42:7 ' "... with the node it asked for"
ok "$([ ! -e /dev/abtest-c ] && [ ! -e /dev/abtest-b ]; echo $?)" "... made in the container's /dev, not the host's"

# A linux.devices entry for a node the runtime has made already: the same
# numbers are that node; other numbers are refused by name.
make_bundle "$T/devdup" "${cap_edits[@]}" process.noNewPrivileges=false \
  'process.args=["/bin/abtest","stat","/dev/null"]' \
  'linux.devices+={"path":"/dev/null","type":"c","major":1,"minor":3,"fileMode":438,"uid":0,"gid":0}'
is "$(run_in "$T/devdup")" 0 "linux.devices naming /dev/null 1:3, a default device: the container runs"
like "$(tr '\n' ' ' <"$T/devdup/stdout")" 'type=char .*rdev=1:3 ' "... and its /dev/null is 1:3"
if is_agentbox; then
  make_bundle "$T/devclash" "${cap_edits[@]}" process.noNewPrivileges=false \
    'linux.devices+={"path":"/dev/null","type":"c","major":42,"minor":9,"fileMode":438,"uid":0,"gid":0}'
  isnt "$(run_in "$T/devclash")" 0 "linux.devices naming /dev/null as 42:9 fails the run"
  like "$(cat "$T/devclash/stderr")" 'linux.devices\[0\].*/dev/null.*exists and is not the requested device' \
    "... with an error naming the entry and the path"
fi

# ---- capabilities the runtime itself does not hold ---------------------------
# config.md: a capability that cannot be granted MUST be logged as a warning,
# and runtimes SHOULD NOT fail (the suite's privileged test asks for every
# one).  The runtime runs here without CAP_SYS_NICE in any set (setpriv);
# the container gets the rest.  (runc 1.1 fails the capset.)

if is_agentbox; then
  make_bundle "$T/nocap" process.noNewPrivileges=false 'process.args=["/bin/abtest","status"]' \
    "process.capabilities.bounding=[\"CAP_SYS_NICE\",\"CAP_KILL\"]" "process.capabilities.permitted=[\"CAP_SYS_NICE\",\"CAP_KILL\"]" \
    "process.capabilities.effective=[\"CAP_SYS_NICE\",\"CAP_KILL\"]" "process.capabilities.inheritable=[\"CAP_SYS_NICE\",\"CAP_KILL\"]"
  id=$(new_id)
  # Out of the bounding set, root's execve of the runtime leaves it out of
  # permitted and effective too.
  /usr/bin/setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice -- \
    "$RUNTIME" --root "$AB_STATE" run --bundle "$T/nocap" "$id" </dev/null >"$T/nocap/stdout" 2>"$T/nocap/stderr"
  is $? 0 "a capability the runtime does not hold is dropped with a warning, not a failure"
  # CAP_KILL is bit 5 (0x20), CAP_SYS_NICE bit 23: the container has only CAP_KILL.
  is "$(sed -n 's/^CapPrm=//p' "$T/nocap/stdout")" 0000000000000020 "... the process has the others (permitted: CAP_KILL alone)"
  is "$(sed -n 's/^CapInh=//p' "$T/nocap/stdout")" 0000000000000020 "... and the same inheritable set"
  like "$(cat "$T/nocap/stderr")" 'permitted: CAP_SYS_NICE cannot be granted.*dropped' "... the warning names the set and the capability"
  rt delete --force "$id" >/dev/null 2>&1
fi

# ---- mounts listed in config order, a "shared" bind shared ------------------
# config.md: mounts in the listed order; the suite's runtimetest reads that
# order back from /proc/self/mountinfo (which kernels since 6.8 list in the
# order mounts were made).  A bind with "shared" is in a peer group of its
# own inside the container.

mkdir -p "$T/order-src"
make_bundle "$T/order" "${cap_edits[@]}" process.noNewPrivileges=false \
  'process.args=["/bin/abtest","cat","/proc/self/mountinfo"]' \
  'mounts+={"destination":"/tmp/first","type":"tmpfs","source":"tmpfs","options":["nosuid"]}' \
  "mounts+={\"destination\":\"/data\",\"source\":\"$T/order-src\",\"options\":[\"bind\",\"shared\"]}" \
  'mounts+={"destination":"/tmp/last","type":"tmpfs","source":"tmpfs","options":["nosuid"]}'
is "$(run_in "$T/order")" 0 "tmpfs, bind, tmpfs mounts run"
is "$(awk '$5 == "/tmp/first" || $5 == "/data" || $5 == "/tmp/last" { printf "%s ", $5 }' "$T/order/stdout")" \
  "/tmp/first /data /tmp/last " "... and the container's mountinfo lists them in config.json's order"
like "$(awk '$5 == "/data"' "$T/order/stdout")" ' shared:[0-9]+ ' "... the \"shared\" bind is shared in the container"

# ---- a cgroup mount without a cgroup namespace -------------------------------
# runc's default config mounts "cgroup" at /sys/fs/cgroup but has no cgroup
# namespace.  A new cgroup2 superblock made there would show the host's whole
# tree (every other container's cgroup) and would reset the host's
# system-wide cgroup2 options; agentbox binds the container's own cgroup
# read-only instead (at /sys/fs/cgroup on a v2 host; at its unified
# directory where v1 hierarchies are mounted too: t-cgroup-view.sh).  From
# the host: a sibling cgroup made next to the container's must not be
# visible to it.
own2=$(sed -n 's/^0:://p' /proc/self/cgroup)
read -r root2 mnt2 < <(awk '{ for (i = 7; i < NF; i++) if ($i == "-") break; if ($(i + 1) == "cgroup2") { print $4, $5; exit } }' /proc/self/mountinfo)
cgv2=/sys/fs/cgroup
grep -q ' - cgroup ' /proc/self/mountinfo && cgv2=/sys/fs/cgroup/${mnt2##*/}
if agentbox_only 4 && [ -n "${mnt2:-}" ]; then
  rel2=${own2#"${root2%/}"}
  sib="$mnt2${rel2%/}/abtest-sib-$$"
  mkdir "$sib"
  make_bundle "$T/cgview" "process.args=[\"/bin/abtest\",\"ls\",\"$cgv2\"]"
  is "$(run_in "$T/cgview")" 0 "a cgroup mount in a config without a cgroup namespace runs"
  unlike "$(cat "$T/cgview/stdout")" "abtest-sib-$$" "... the container does not see a sibling cgroup the host made next to its own"
  like "$(cat "$T/cgview/stdout")" 'cgroup.procs' "... it sees its own cgroup's files"
  make_bundle "$T/cgview-ro" 'process.args=["/bin/abtest","cat","/proc/self/mountinfo"]'
  run_in "$T/cgview-ro" >/dev/null
  like "$(awk -v d="$cgv2" '$5 == d' "$T/cgview-ro/stdout")" "^[0-9]+ [0-9]+ [0-9:]+ /[^ ]*agentbox-[^ ]* $cgv2 ro," \
    "... which is its own cgroup directory, mounted read-only"
  rmdir "$sib"
fi

done_testing

#!/bin/bash
# The isolation the hardened profile (`agentbox spec`) gives a container,
# proved from the host: namespaces by /proc/PID/ns inodes, ids by
# /proc/PID/uid_map and status, capabilities, no_new_privs, seccomp mode and
# rlimits by /proc/PID/status and limits, the container's /dev and fds by
# /proc/PID/root and /proc/PID/fd, sysctls and the hostname through nsenter
# into the container's namespaces.  What the container itself reports is
# only used for what the host cannot see (the errno of a refused call).
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run state delete spec
plan_later

is_agentbox || skip_all "the hardened profile is agentbox's own \`spec\`; $AB_RUNTIME_KIND has another"
AB_BASE_CONFIG=runtime

# in_box BUNDLE CMD...: run CMD to completion in a fresh container of BUNDLE
# (process.args replaced for this run only); prints its stdout, returns its
# exit status.
in_box ()
{
  local b=$1 id args st
  shift
  id=$(new_id)
  args=$("$PYTHON3" -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@")
  cp "$b/config.json" "$b/config.saved" && cfg "$b/config.json" "process.args=$args" || return 125
  rt run --bundle "$b" "$id" </dev/null 2>"$b/run.err"
  st=$?
  mv "$b/config.saved" "$b/config.json"
  return $st
}

# status_field PID KEY: a line of /proc/PID/status, value only, tabs squeezed.
status_field () { awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "/proc/$2/status" 2>/dev/null; }

ns_ino () { [[ $1 =~ ^[0-9]+$ ]] && stat -L -c %i "/proc/$1/ns/$2" 2>/dev/null; }

sleeper='process.args=["/bin/abtest","sleep-forever"]'
make_bundle "$T/hard" "$sleeper"
ok $? "the hardened profile of \`agentbox spec\` makes a bundle"
hard_id=$(new_id)
start_bg "$hard_id" "$T/hard"
ok $? "a container of the hardened profile starts"
hpid=$(pid_of "$hard_id")

# ---- namespaces --------------------------------------------------------------------------

for ns in pid net ipc uts mnt user cgroup time; do
  a=$(ns_ino "$hpid" $ns) && b=$(ns_ino $$ $ns) && [ "$a" != "$b" ]
  ok $? "the hardened profile gives the container a new $ns namespace (/proc/PID/ns/$ns ${a:-?} vs host ${b:-?})"
done

# ---- ids ---------------------------------------------------------------------------------

is "$(tr -s ' ' <"/proc/$hpid/uid_map" 2>/dev/null | sed 's/^ //')" "0 100000 65536" \
  "uid_map maps container root to host uid 100000 (65536 ids)"
is "$(tr -s ' ' <"/proc/$hpid/gid_map" 2>/dev/null | sed 's/^ //')" "0 100000 65536" \
  "gid_map maps container root to host gid 100000 (65536 ids)"
is "$(status_field Uid "$hpid")" "100000 100000 100000 100000" \
  "the container's root runs as host uid 100000 (real, effective, saved, fs)"
is "$(status_field Gid "$hpid")" "100000 100000 100000 100000" "... and as host gid 100000"
is "$(stat -c %u "/proc/$hpid")" 100000 "the host sees /proc/PID owned by uid 100000, not root"

# ---- capabilities, no_new_privs, seccomp ----------------------------------------------------

for c in CapInh CapPrm CapEff CapBnd CapAmb; do
  is "$(status_field $c "$hpid")" 0000000000000000 "$c is empty in /proc/PID/status read from the host"
done
is "$(status_field NoNewPrivs "$hpid")" 1 "NoNewPrivs is 1"
is "$(status_field Seccomp "$hpid")" 2 "a seccomp filter is installed (Seccomp: 2)"

# ---- rlimits -----------------------------------------------------------------------------

limit_of () { awk -v n="$1" 'index($0, n) == 1 { sub(n, ""); print $1 ":" $2 }' "/proc/$2/limits" 2>/dev/null; }
is "$(limit_of 'Max open files' "$hpid")" 1024:1024 "RLIMIT_NOFILE is 1024:1024 as the profile says (/proc/PID/limits)"
is "$(limit_of 'Max core file size' "$hpid")" 0:0 "RLIMIT_CORE is 0:0: no core dumps on the host"
is "$(limit_of 'Max file size' "$hpid")" 1073741824:1073741824 "RLIMIT_FSIZE is 1 GiB"

host_hard=$(ulimit -Hn)
make_bundle "$T/rlim" "process.rlimits[0]={\"type\":\"RLIMIT_NOFILE\",\"hard\":$((host_hard + 1)),\"soft\":1024}"
err=$(rt run --bundle "$T/rlim" "$(new_id)" </dev/null 2>&1 >/dev/null)
isnt $? 0 "raising RLIMIT_NOFILE above the host's hard limit ($host_hard) fails"
like "$err" 'process\.rlimits\[0\].*RLIMIT_NOFILE' "... with an error naming process.rlimits[0] and RLIMIT_NOFILE"
# runc refuses it at create (its init sets rlimits before waiting for
# start); podman and containerd then report create's error, not start's.
id=$(new_id)
rt create --bundle "$T/rlim" "$id" </dev/null >/dev/null 2>&1
isnt $? 0 "... and it is create that fails"
rt state "$id" >/dev/null 2>&1
isnt $? 0 "... leaving no container behind"

make_bundle "$T/rlim2" "process.rlimits[0]={\"type\":\"RLIMIT_NOFILE\",\"hard\":512,\"soft\":256}" \
  'process.rlimits+={"type":"RLIMIT_NPROC","hard":300,"soft":200}'
out=$(in_box "$T/rlim2" /bin/abtest rlimits)
like "$out" '^RLIMIT_NOFILE=256:512$' "a configured RLIMIT_NOFILE 256:512 is what the process gets"
like "$out" '^RLIMIT_NPROC=200:300$' "a configured RLIMIT_NPROC 200:300 is what the process gets"

# ---- signals -----------------------------------------------------------------------------

# Only an ignored disposition survives execve, and the runtime resets just the
# ones it inherited ignored: a caller's `trap ''` must not reach the program.
out=$(trap '' HUP USR1 PIPE; in_box "$T/hard" /bin/abtest sigmask)
like "$out" '^ignored=$' "signals the runtime's caller ignores (HUP, USR1, PIPE) are at SIG_DFL in the container"
like "$out" '^blocked=$' "... and none is blocked"

# ---- seccomp -----------------------------------------------------------------------------

# keyctl and io_uring_setup are refused by the profile, not by a capability
# check: without the filter the kernel answers something else.
out=$(in_box "$T/hard" /bin/abtest syscall keyctl io_uring_setup add_key)
is "$out" "keyctl=EPERM
io_uring_setup=EPERM
add_key=EPERM" "syscalls outside the profile's allowlist fail with EPERM"
make_bundle "$T/noseccomp" '!linux.seccomp'
out=$(in_box "$T/noseccomp" /bin/abtest syscall keyctl io_uring_setup)
unlike "$out" 'EPERM' "without the filter the same probes are not refused with EPERM (the test can tell)"

make_bundle "$T/kill" 'linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["keyctl"],"action":"SCMP_ACT_KILL_PROCESS"}]}'
in_box "$T/kill" /bin/abtest syscall keyctl >/dev/null
is $? 159 "a SCMP_ACT_KILL_PROCESS rule kills the process with SIGSYS: run exits 128+31"

# ---- read-only root ------------------------------------------------------------------------

# The rootfs belongs to the container's root, so only the read-only mount
# can refuse the write (the profile has no capabilities to bypass modes).
make_bundle --out "$T/ro" 'process.args=["/bin/abtest","true"]'
chown -R 100000:100000 "$T/ro/rootfs"
out=$(in_box "$T/ro" /bin/abtest touch /newfile)
is "$out" EROFS "a write to the read-only root fails with EROFS"
out=$(in_box "$T/ro" /bin/abtest mkdir /bin/newdir)
is "$out" EROFS "mkdir on the read-only root fails with EROFS"
[ ! -e "$T/ro/rootfs/newfile" ] && [ ! -e "$T/ro/rootfs/bin/newdir" ]
ok $? "nothing appeared in the rootfs on the host"
cfg "$T/ro/config.json" root.readonly=false
out=$(in_box "$T/ro" /bin/abtest touch /newfile)
[ "$out" = ok ] && [ -e "$T/ro/rootfs/newfile" ]
ok $? "control: with root.readonly false the same write lands in the rootfs (the test can tell)"
rm -f "$T/ro/rootfs/newfile"

# ---- /tmp --------------------------------------------------------------------------------

out=$(in_box "$T/hard" /bin/abtest fill /tmp/big)
bytes=$(sed -n 's/^bytes=//p' <<<"$out")
like "$out" '^errno=ENOSPC$' "filling /tmp stops with ENOSPC"
[[ $bytes =~ ^[0-9]+$ ]] && [ "$bytes" -le 268435456 ] && [ "$bytes" -gt $((268435456 - 1048576)) ]
ok $? "... at the profile's 256 MiB size (wrote ${bytes:-?} bytes)"

# ---- masked and read-only paths --------------------------------------------------------------

# (The masks are mounts in the container's namespace: the host reads
# /proc/PID/mountinfo; the contents are read inside, where the mask applies.)
mi=$(cat "/proc/$hpid/mountinfo" 2>/dev/null)
for p in /proc/kcore /proc/interrupts /proc/keys /proc/timer_list; do
  # (the host must have something there, or an empty read proves nothing;
  # kcore is as large as memory: its existence is enough)
  if [ ! -e "$p" ] || { [ "$p" != /proc/kcore ] && [ -z "$(head -c 1 "$p")" ]; }; then
    skip "$p does not exist or is empty on this host"
    continue
  fi
  out=$(in_box "$T/hard" /bin/abtest cat "$p" | wc -c)
  is "$out" 0 "masked $p reads empty in the container (the host's is not)"
done
for d in /proc/acpi /sys/firmware; do
  [ -d "$d" ] || { skip "$d does not exist on this host"; continue; }
  out=$(in_box "$T/hard" /bin/abtest ls "$d")
  [ $? = 0 ] && [ -z "$out" ]
  ok $? "masked $d is an empty directory in the container"
  like "$mi" "^[0-9]+ [0-9]+ [0-9:]+ / $d ro,.* - tmpfs " "... an empty read-only tmpfs on $d (host's view of the container's mountinfo)"
done
out=$(in_box "$T/hard" /bin/abtest write /proc/sys/kernel/domainname evil)
is "$out" EROFS "a write to /proc/sys fails with EROFS (read-only path)"
like "$mi" '^[0-9]+ [0-9]+ [0-9:]+ /sys /proc/sys ro,' "/proc/sys is a read-only mount in the container's mountinfo"
if [ -e /proc/sysrq-trigger ]; then
  out=$(in_box "$T/hard" /bin/abtest write /proc/sysrq-trigger h)
  is "$out" EROFS "a write to /proc/sysrq-trigger fails with EROFS"
else
  skip "this kernel has no /proc/sysrq-trigger"
fi

# ---- sysctl, hostname ------------------------------------------------------------------------

make_bundle "$T/sysctl" "$sleeper" 'linux.sysctl={"net.ipv4.ip_default_ttl":"42","kernel.shmmax":"123456789"}' \
  hostname:=box-iso
id=$(new_id)
start_bg "$id" "$T/sysctl"
ok $? "a container with namespaced sysctls and a hostname starts"
spid=$(pid_of "$id")
is "$(nsenter --target "$spid" --net cat /proc/sys/net/ipv4/ip_default_ttl 2>&1)" 42 \
  "net.ipv4.ip_default_ttl is 42 in the container's network namespace"
isnt "$(cat /proc/sys/net/ipv4/ip_default_ttl)" 42 "... and unchanged on the host"
is "$(nsenter --target "$spid" --ipc cat /proc/sys/kernel/shmmax 2>&1)" 123456789 \
  "kernel.shmmax is set in the container's IPC namespace"
is "$(nsenter --target "$spid" --uts hostname 2>&1)" box-iso "the hostname is set in the container's UTS namespace"
isnt "$(hostname)" box-iso "... not on the host"
rt delete --force "$id"
is "$(nsenter --target "$hpid" --uts hostname 2>&1)" agentbox "the profile's hostname is agentbox"

swap_before=$(cat /proc/sys/vm/swappiness)
make_bundle "$T/sysctl-bad" 'linux.sysctl={"vm.swappiness":"1"}'
err=$(rt run --bundle "$T/sysctl-bad" "$(new_id)" </dev/null 2>&1 >/dev/null)
isnt $? 0 "a sysctl that is not namespaced (vm.swappiness) is refused"
like "$err" 'linux\.sysctl.*vm\.swappiness' "... with an error naming linux.sysctl and the key"
is "$(cat /proc/sys/vm/swappiness)" "$swap_before" "... and the host's vm.swappiness is unchanged"

# ---- /dev ------------------------------------------------------------------------------------

make_bundle "$T/dev" "$sleeper" 'linux.devices=[{"path":"/dev/fuse","type":"c","major":10,"minor":229,"fileMode":438}]'
id=$(new_id)
start_bg "$id" "$T/dev"
dpid=$(pid_of "$id")
is "$(ls -A "/proc/$dpid/root/dev" 2>&1 | tr '\n' ' ')" \
  "fd full fuse mqueue null ptmx pts random shm stderr stdin stdout tty urandom zero " \
  "/dev holds exactly the default devices, linux.devices, pts, shm, mqueue and the standard links"
devs=""
for n in null zero full random urandom tty fuse; do
  devs="$devs $n=$(stat -L -c '%F %t:%T' "/proc/$dpid/root/dev/$n" 2>&1)"
done
is "$devs" " null=character special file 1:3 zero=character special file 1:5 full=character special file 1:7 random=character special file 1:8 urandom=character special file 1:9 tty=character special file 5:0 fuse=character special file a:e5" \
  "each device node is the right character device (major:minor in hex)"
for n in sda vda kmsg mem kvm loop0 console; do
  [ -e "/proc/$dpid/root/dev/$n" ] && break
done
[ ! -e "/proc/$dpid/root/dev/$n" ]
ok $? "none of the host's devices (sda, vda, kmsg, mem, kvm, loop0, console) is in the container's /dev"
is "$(readlink "/proc/$dpid/root/dev/ptmx")" pts/ptmx "/dev/ptmx is a symlink to pts/ptmx"
is "$(readlink "/proc/$dpid/root/dev/fd"):$(readlink "/proc/$dpid/root/dev/stdin"):$(readlink "/proc/$dpid/root/dev/stdout"):$(readlink "/proc/$dpid/root/dev/stderr")" \
  "/proc/self/fd:/proc/self/fd/0:/proc/self/fd/1:/proc/self/fd/2" "/dev/fd, stdin, stdout and stderr link to /proc/self/fd"
is "$(stat -c '%F %t:%T' "/proc/$dpid/root/dev/pts/ptmx" 2>&1)" "character special file 5:2" \
  "/dev/pts/ptmx is the container's own devpts multiplexer"
rt delete --force "$id"

# ---- file descriptors --------------------------------------------------------------------------

# fds as the host sees them in /proc/PID/fd of the running program.
fds_of () { ls "/proc/$1/fd" 2>/dev/null | sort -n | tr '\n' ' '; }
id=$(new_id)
exec 5<"$T/hard/config.json" 6>"$T/extra-fd"
rt create --bundle "$T/hard" "$id" </dev/null >"$T/hard/stdout" 2>"$T/hard/stderr" && rt start "$id"
exec 5<&- 6>&-
is "$(fds_of "$(pid_of "$id")")" "0 1 2 " "fds 5 and 6 open in the runtime's caller do not reach the container: only 0 1 2"
rt delete --force "$id"
id=$(new_id)
exec 3<"$T/hard/config.json" 4>"$T/extra-fd"
rt create --bundle "$T/hard" --preserve-fds 1 "$id" </dev/null >"$T/hard/stdout" 2>"$T/hard/stderr" && rt start "$id"
exec 3<&- 4>&-
ppid_=$(pid_of "$id")
is "$(fds_of "$ppid_")" "0 1 2 3 " "--preserve-fds 1 passes fd 3 and nothing above it"
is "$(readlink "/proc/$ppid_/fd/3")" "$T/hard/config.json" "... and fd 3 is the caller's file"
rt delete --force "$id"
# A hole in the preserved range would be filled by an fd of agentbox's own
# (its signalfd, a cgroup or root filesystem directory), which would then
# reach the container with close-on-exec cleared: refused before anything
# is made.
id=$(new_id)
exec 3<"$T/hard/config.json"
rt create --bundle "$T/hard" --preserve-fds 2 "$id" </dev/null >"$T/hole.out" 2>"$T/hole.err"
rc=$?
exec 3<&-
is "$rc" 2 "--preserve-fds 2 with fd 4 closed in the caller exits 2 (usage)"
grep -q -- "--preserve-fds 2: fd 4 is not open" "$T/hole.err"
ok $? "... and the error names fd 4"
test ! -e "$AB_STATE/$id"
ok $? "... and leaves no state directory"
exec 3<&-
rt --log "$T/hole.log" run --bundle "$T/hard" --preserve-fds 1 "$id" </dev/null >"$T/hole.out" 2>"$T/hole.err"
is "$?" 2 "--preserve-fds 1 with fd 3 closed and --log: the log took fd 3, refused with exit 2"
grep -q -- "fd 3 is agentbox's own log file" "$T/hole.err"
ok $? "... and the error says fd 3 is agentbox's log file"
test ! -e "$AB_STATE/$id"
ok $? "... and leaves no state directory"

# systemd socket activation, as runc: LISTEN_FDS=N with LISTEN_PID ours
# passes fds 3 .. N+2 on before the --preserve-fds ones, and the process
# is told LISTEN_FDS=N and LISTEN_PID=1; another process's LISTEN_FDS
# (LISTEN_PID not ours, or none) passes nothing.
# (agentbox: run through its own wrapper, which bypasses the cgroup wrapper of other runtimes)
if agentbox_only 6; then
  listen_env () { tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep -E '^LISTEN_(FDS|PID)=' | sort | tr '\n' ' '; }
  # activated N PID ARGS...: agentbox ARGS with LISTEN_FDS=N and LISTEN_PID
  # its own pid (PID "self") or PID.
  activated ()
  {
    local n=$1 pid=$2
    shift 2
    LISTEN_FDS=$n sh -c '[ "$1" = self ] && LISTEN_PID=$$ || LISTEN_PID=$1; export LISTEN_PID; shift; exec "$@"' \
      _ "$pid" "$RUNTIME" --root "$AB_STATE" "$@"
  }
  id=$(new_id)
  exec 3<"$T/hard/config.json" 4>"$T/extra-fd" 5<"$T/hard/config.json"
  activated 2 self create --bundle "$T/hard" --preserve-fds 1 "$id" </dev/null >"$T/hard/stdout" 2>"$T/hard/stderr" &&
    rt start "$id"
  exec 3<&- 4>&- 5<&-
  lpid=$(pid_of "$id")
  is "$(fds_of "$lpid")" "0 1 2 3 4 5 " "LISTEN_FDS=2 and --preserve-fds 1 pass fds 3, 4 and 5 on"
  is "$(readlink "/proc/$lpid/fd/4")" "$T/extra-fd" "... each the caller's"
  is "$(listen_env "$lpid")" "LISTEN_FDS=2 LISTEN_PID=1 " "... and the process is told LISTEN_FDS=2 and LISTEN_PID=1"
  rt delete --force "$id"
  for other in 1 ""; do
    id=$(new_id)
    exec 3<"$T/hard/config.json"
    activated 1 "$other" create --bundle "$T/hard" "$id" </dev/null >"$T/hard/stdout" 2>"$T/hard/stderr" &&
      rt start "$id"
    exec 3<&-
    lpid=$(pid_of "$id")
    is "$(fds_of "$lpid"):$(listen_env "$lpid")" "0 1 2 :" "LISTEN_FDS with LISTEN_PID=${other:-(empty)}, not ours, passes nothing on"
    rt delete --force "$id"
  done
  id=$(new_id)
  activated 1 self create --bundle "$T/hard" "$id" </dev/null >"$T/hole.out" 2>"$T/hole.err"
  is "$?:$(cat "$T/hole.err")" "2:agentbox: create: LISTEN_FDS=1: fd 3 is not open (fds 3 to 3 must be) (see \`agentbox create --help\`)" \
    "LISTEN_FDS=1 with fd 3 closed: exit 2, naming it"
fi

# ---- oomScoreAdj -------------------------------------------------------------------------------

make_bundle "$T/oom" "$sleeper" process.oomScoreAdj=345
id=$(new_id)
start_bg "$id" "$T/oom"
is "$(cat "/proc/$(pid_of "$id")/oom_score_adj" 2>&1)" 345 "process.oomScoreAdj 345 is the process's oom_score_adj on the host"
rt delete --force "$id"

# Below our own score (containerd's CRI gives every pod sandbox -998): that
# takes CAP_SYS_RESOURCE, which root lacks on some hosts; there the container
# is refused at create, as runc refuses it (docs/runc-compat.md).
make_bundle "$T/oom-low" "$sleeper" process.oomScoreAdj=-998
id=$(new_id)
if (($(printf '%d' "0x$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status)") >> 24 & 1)); then
  start_bg "$id" "$T/oom-low"
  is "$(cat "/proc/$(pid_of "$id")/oom_score_adj" 2>&1)" -998 "process.oomScoreAdj -998 is applied (we hold CAP_SYS_RESOURCE)"
  rt delete --force "$id"
else
  err=$(rt create --bundle "$T/oom-low" "$id" </dev/null 2>&1 >/dev/null)
  isnt $? 0 "without CAP_SYS_RESOURCE, process.oomScoreAdj -998 is refused at create"
  like "$err" 'oom_score_adj' "... the error names oom_score_adj"
  ! rt state "$id" >/dev/null 2>&1
  ok $? "... and no container is left"
fi

rt delete --force "$hard_id"
wait_gone "$hpid"
ok $? "the hardened container's process is gone after delete --force"


done_testing

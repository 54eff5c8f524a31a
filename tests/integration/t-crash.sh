#!/bin/bash
# Crash safety: a failure injected into one syscall of the runtime (strace
# -e inject), a supervisor killed with SIGKILL, an unusable cache.  Each
# case checks from the host that the command either failed with one line
# or did its whole job (the full sandbox), and that `delete --force` then
# leaves nothing -- which the leftover check of done_testing verifies on
# the host for every container this file made.  The broad sweep over every
# syscall is scripts/fault-sweep.py (make fault-sweep); these are the cases
# it once found, and the cases that drove it.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run state delete list spec
is_agentbox || skip_all "the hardened profile, run --default and their fault handling are agentbox's own"
command -v strace >/dev/null || skip_all "strace not installed (scripts/install-deps.sh)"
AB_BASE_CONFIG=runtime
plan_later
# The runtime runs under strace (ptrace) throughout this file, where
# LeakSanitizer cannot: it would stop with a fatal report of its own, not
# one about agentbox (a --enable-sanitizers build).
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

# st ARGS... -- RUNTIME-ARGS...: the runtime (this file's state root) under
# `strace -f` with the strace options before `--`.  Not through rt: the
# injection must reach the runtime and its children themselves.
st ()
{
  local opts=()
  while [ "$1" != -- ]; do
    opts+=("$1")
    shift
  done
  shift
  timeout -k 5 "$AB_RT_TIMEOUT" strace -f -qq -o /dev/null "${opts[@]}" \
    "$RUNTIME" --root "$AB_STATE" "$@" 7>&-
}

# capbnd PID: the bounding set of a host process, from the host.
capbnd () { awk '$1 == "CapBnd:" { print $2 }' "/proc/$1/status" 2>/dev/null; }

# lines TEXT: how many lines
lines () { [ -z "$1" ] && echo 0 || printf '%s\n' "$1" | wc -l; }

make_bundle --out "$T/sleeper" 'process.args=["/bin/abtest","sleep-forever"]'
make_bundle "$T/true" 'process.args=["/bin/abtest","true"]'

# ---- the bounding set, whatever libcap's first probe says (#28, 1) -----------
#
# libcap's constructor asks PR_CAPBSET_READ once and reads a failure as "32
# capabilities": the runtime once dropped 0..31 only and left 32..40 (CapBnd
# 000001ff00000000).  Every prctl of the runtime, and of the container
# process, fails in turn: each run either fails with one line or runs with
# an empty bounding set, read from the host.

n_prctl=$(strace -f -qq -c -e trace=prctl -o "$T/prctl.count" "$RUNTIME" --root "$AB_STATE" run --bundle "$T/true" "$(new_id)" \
  </dev/null >/dev/null 2>&1 7>&-; awk '$NF == "prctl" { print $4 }' "$T/prctl.count")
diag "a hardened run makes ${n_prctl:-?} prctl calls"
bad=""
for ((w = 1; w <= ${n_prctl:-50}; w++)); do
  id=$(new_id)
  st -e trace=prctl -e inject=prctl:error=EIO:when=$w -- run --bundle "$T/sleeper" "$id" \
    </dev/null >/dev/null 2>"$T/err.$w" &
  spid=$!
  pid=""
  for ((i = 0; i < 1200; i++)); do
    pid=$(pid_of "$id") && [ -n "$pid" ] && [ "$pid" != 0 ] && [ "$(state_of "$id")" = running ] && break
    alive "$spid" || break
    pid=""
    sleep 0.05
  done
  if [ -n "$pid" ]; then
    b=$(capbnd "$pid")
    [ "$b" = 0000000000000000 ] || bad+=" when=$w:CapBnd=$b"
  fi
  rt delete --force "$id" >/dev/null 2>&1
  wait "$spid"
  rc=$?
  if [ -z "$pid" ] && { [ "$rc" = 0 ] || [ "$(lines "$(cat "$T/err.$w")")" != 1 ]; }; then
    bad+=" when=$w:rc=$rc:$(head -c 200 "$T/err.$w")"
  fi
done
is "$bad" "" "a failure of any prctl: the run fails with one line, or its bounding set is empty (CapBnd from the host)"

# ---- a session keyring that cannot be joined ---------------------------------
#
# A session keyring that cannot be joined (the key quota of the
# container's uid, which every container of the same mapping shares, used
# up by one of them: EDQUOT) once left the container in the caller's
# session keyring, whose keys a process possesses and may read (without
# a seccomp profile that refuses keyctl, as the hardened one does).
make_bundle "$T/keyring" 'process.args=["/bin/abtest","keyring"]' '!linux.seccomp'
# in_ring CMD...: CMD in a session keyring of its own (the test's shell may
# have none, and then each uid gets its own "user session" keyring anyway,
# which would prove nothing); its id in $T/ring.
in_ring ()
{
  "$PYTHON3" -c '
import ctypes, os, sys
keyctl = ctypes.CDLL(None, use_errno=True).syscall
if keyctl(250, 1, b"ab-crash-ring") < 0:  # KEYCTL_JOIN_SESSION_KEYRING
    sys.exit("keyctl join: " + os.strerror(ctypes.get_errno()))
open(sys.argv[1], "w").write("%d" % keyctl(250, 0, -3, 0))  # KEYCTL_GET_KEYRING_ID of the session
os.execvp(sys.argv[2], sys.argv[2:])' "$T/ring" "$@"
}
out=$(in_ring strace -f -qq -o /dev/null -e trace=keyctl -e inject=keyctl:error=EDQUOT:when=1 \
  "$RUNTIME" --root "$AB_STATE" run --bundle "$T/keyring" "$(new_id)" </dev/null 2>&1 7>&-)
rc=$?
like "$rc $out" "^0 session=[0-9]+$" "a session keyring that cannot be joined (EDQUOT): the run gets a fresh one"
isnt "${out#session=}" "$(cat "$T/ring")" "... never the caller's session keyring"
out=$(st -e trace=keyctl -e inject=keyctl:error=EDQUOT -- run --bundle "$T/keyring" "$(new_id)" </dev/null 2>&1)
rc=$?
like "$rc $(lines "$out") $out" "^125 1 agentbox: join a new session keyring: .*Disk quota exceeded" \
  "no session keyring can be had: the run fails with one line"

# ---- a mount made the fd-based way -------------------------------------------

# nth_call TRACE SYSCALL PATTERN: which call of SYSCALL, counted in the
# thread that made it (as strace's when= counts), is the first whose line
# matches PATTERN.
nth_call ()
{
  awk -v s="$2(" -v p="$3" 'index($2, s) == 1 { n[$1]++; if ($0 ~ p) { print n[$1]; exit } }' "$1"
}

# A mount(2) that fails makes the runtime take the fd-based way (fsopen);
# a read-only filesystem made so was once writable under a read-only mount.
strace -f -qq -o "$T/mount.trace" -e trace=mount "$RUNTIME" --root "$AB_STATE" run --bundle "$T/true" "$(new_id)" \
  </dev/null >/dev/null 2>&1 7>&-
w=$(nth_call "$T/mount.trace" mount '"sysfs"')
id=$(new_id)
st -e trace=mount -e inject=mount:error=EIO:when=${w:-1} -- run --bundle "$T/sleeper" "$id" </dev/null >/dev/null 2>&1 &
tracer=$!
wait_for_status "$id" running
pid=$(pid_of "$id")
like "$(awk '$5 == "/sys" { split($0, a, " - "); print a[2] }' "/proc/$pid/mountinfo" 2>/dev/null)" "^sysfs [^ ]+ ro" \
  "sysfs mounted the fd-based way (mount(2) failed): the filesystem is read-only too, not only its mount"
rt delete --force "$id"
wait "$tracer"

# ---- a foreground run dies with its supervisor (#28, 2) ----------------------
#
# An agent host cancels a tool call with SIGKILL of `agentbox run`: the
# program and the daemon it setsid'd once ran on with no timeout, and
# `state` said running (or creating, killed between exec and the state
# write).

# ns_members FD: host pids of the processes in the pid namespace open on FD.
ns_members ()
{
  local p out=""
  for p in /proc/[0-9]*; do
    [ "$p/ns/pid" -ef "/dev/fd/$1" ] 2>/dev/null && alive "${p#/proc/}" && out+=" ${p#/proc/}"
  done
  echo "${out# }"
}

# cg_procs ID: the processes in the cgroups of container ID, every hierarchy.
cg_procs ()
{
  find /sys/fs/cgroup -maxdepth 6 -type d -name "agentbox-$1" -exec cat {}/cgroup.procs \; 2>/dev/null | sort -u |
    tr '\n' ' '
}

# stopped_and_deletable NAME ID: `state` says stopped and a plain `delete`
# removes the container.
stopped_and_deletable ()
{
  is "$(state_of "$2")" stopped "$1: ... and \`state\` says stopped"
  rt delete "$2" >/dev/null 2>"$T/delete.err"
  is "$?:$(cat "$T/delete.err")" "0:" "$1: ... and a plain \`delete\` removes it"
}

# killed_supervisor NAME ID SUPERVISOR-PID: the container ID's program runs
# and has started a daemon; SIGKILL its supervisor, then check from the
# host that nothing of the container is left running, that `state` says
# stopped and that a plain `delete` removes it.
killed_supervisor ()
{
  local name=$1 id=$2 spid=$3 pid="" i members start fd
  for ((i = 0; i < 1200; i++)); do
    pid=$(pid_of "$id") && [ -n "$pid" ] && [ "$pid" != 0 ] && [ -e "/proc/$pid/ns/pid" ] && break
    pid=""
    sleep 0.05
  done
  if [ -z "$pid" ]; then
    ok 1 "$name: the container runs"
    kill -KILL "$spid" 2>/dev/null
    return
  fi
  exec {fd}<"/proc/$pid/ns/pid"
  # the daemon: a second process in the namespace
  for ((i = 0; i < 1200; i++)); do
    members=$(ns_members "$fd")
    [ "$(wc -w <<<"$members")" -ge 2 ] && break
    sleep 0.05
  done
  start=$(ab_start_times $members)
  kill -KILL "$spid"
  wait "$spid" 2>/dev/null
  for ((i = 0; i < 400; i++)); do
    [ -z "$(ns_members "$fd")" ] && break
    sleep 0.05
  done
  is "$(ns_members "$fd")" "" "$name: SIGKILL of the supervisor: no process is left in the container's pid namespace (it had: $members)"
  is "$(ab_still_running "$start")" "" "$name: ... none of its processes runs on (pid and start time)"
  is "$(cg_procs "$id")" "" "$name: ... and its cgroups are empty"
  exec {fd}<&-
  stopped_and_deletable "$name" "$id"
}

# ab_start_times PID...: "pid:starttime ..." ; ab_still_running LIST: those alive with the same start time
ab_start_times ()
{
  local p
  for p in "$@"; do echo -n "$p:$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $20 }') "; done
}
ab_still_running ()
{
  local e out=""
  for e in $1; do
    [ "$(sed 's/.*) //' "/proc/${e%%:*}/stat" 2>/dev/null | awk '{ print $20 }')" = "${e#*:}" ] &&
      alive "${e%%:*}" && out+=" ${e%%:*}"
  done
  echo "${out# }"
}

make_bundle "$T/daemon" 'process.args=["/bin/sh","-c","/bin/abtest setsid-sleeper; exec /bin/abtest sleep-forever"]'

id=$(new_id)
"$RUNTIME" --root "$AB_STATE" run --bundle "$T/daemon" "$id" </dev/null >/dev/null 2>&1 7>&- &
killed_supervisor "run" "$id" $!

id=$(new_id)
"$RUNTIME" --root "$AB_STATE" run --timeout 5m --record "$T/record" --bundle "$T/daemon" "$id" </dev/null \
  >/dev/null 2>&1 7>&- &
killed_supervisor "run --timeout 5m --record" "$id" $!

id=$(new_id)
"$RUNTIME" --root "$AB_STATE" run --default "$id" -- sh -c 'setsid sleep 1000 & exec sleep 1000' </dev/null \
  >/dev/null 2>&1 7>&- &
killed_supervisor "run --default" "$id" $!

# Killed right at the state write that follows the exec (the program runs,
# the state still says creating): strace delivers the SIGKILL at the
# supervisor's pwrite64 of "running" -- counted in the supervisor's main
# thread, as strace counts (per thread).
# The measuring run is deleted only once its state says "running" (a fixed
# pause once ended a slow sanitizer build's run before that write, and the
# kill then fell on an earlier one).
id=$(new_id)
strace -f -qq -s 4096 -e trace=pwrite64 -o "$T/pwrite.trace" "$RUNTIME" --root "$AB_STATE" run --bundle "$T/daemon" \
  "$id" </dev/null >/dev/null 2>&1 7>&- &
wait_for_status "$id" running 60 || diag "the measuring run never said running: $(state_of "$id")"
rt delete --force "$id"; wait $!
w=$(awk '/pwrite64\(/ { n[$1]++ } /pwrite64\(.*\\"status\\":\\"running\\"/ { print n[$1]; exit }' "$T/pwrite.trace")
diag "the state write of \"running\" is pwrite64 number ${w:-?} of its thread"
id=$(new_id)
name="run killed at its state write after exec"
timeout -k 5 "$AB_RT_TIMEOUT" strace -f -qq -s 4096 -o "$T/killed.trace" -e trace=pwrite64 \
  -e inject=pwrite64:signal=KILL:when=${w:-1} "$RUNTIME" --root "$AB_STATE" run --bundle "$T/daemon" "$id" \
  </dev/null >/dev/null 2>&1 7>&- &
tracer=$!
# Its write never returned ("= ?", or "<unfinished ...>" when another
# process's line came between) and the writer is gone (or reported
# killed): strace's lines of other processes, and of the writer's own end,
# come in any order and at any time, and a line is written in two parts
# (its end only once the writer is gone: wait for it).
gone ()
{
  local st
  st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
  [ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ] || grep -q "^$1 +++ killed by SIGKILL" "$T/killed.trace"
}
ended=' = \?|<unfinished \.\.\.>'
for ((i = 0; i < 1200; i++)); do
  wline=$(grep -m1 'status\\":\\"running' "$T/killed.trace" 2>/dev/null)
  [ -n "$wline" ] && gone "${wline%% *}" && [[ $wline =~ ($ended)\ *$ ]] && break
  sleep 0.05
done
like "$wline $(gone "${wline%% *}" && echo gone)" 'pwrite64.*( = \?|<unfinished \.\.\.>) +gone$' \
  "$name: the supervisor was killed at its write of \"running\""
pid=$(json_get pid <"$AB_STATE/$id/state.json")
for ((i = 0; i < 400; i++)); do
  alive "$pid" || [ -n "$(cg_procs "$id")" ] || break
  sleep 0.05
done
ok "$(alive "$pid" && echo 1 || echo 0)" "$name: ... the container's process ($pid, recorded in the state) is gone"
is "$(cg_procs "$id")" "" "$name: ... and its cgroups are empty"
kill -KILL "$tracer" 2>/dev/null # a strace still running traces a survivor: it lets go
wait "$tracer" 2>/dev/null
stopped_and_deletable "$name" "$id"

# A container process killed during its last steps, after `start` (here:
# while it drops its bounding set, late enough that no other thread makes
# that many prctl calls): the end of its socket once read as a
# program that was executed.
strace -f -qq -o "$T/prctl.trace" -e trace=prctl "$RUNTIME" --root "$AB_STATE" run --bundle "$T/true" "$(new_id)" \
  </dev/null >/dev/null 2>&1 7>&-
w=$(nth_call "$T/prctl.trace" prctl 'PR_CAPBSET_DROP, CAP_AUDIT_READ')
id=$(new_id)
out=$(st -e trace=prctl -e inject=prctl:signal=KILL:when=${w:-1} -- run --bundle "$T/sleeper" "$id" </dev/null 2>&1)
like "$? $(lines "$out") $out" "^125 1 agentbox: the container process was killed by SIGKILL before the program ran" \
  "run: a container process killed before its program ran is a setup failure (125, one line), not a program killed"
id=$(new_id)
st -e trace=prctl -e inject=prctl:signal=KILL:when=${w:-1} -- create --bundle "$T/sleeper" "$id" </dev/null \
  >/dev/null 2>&1 &
tracer=$!
wait_for_status "$id" created
out=$(rt start "$id" 2>&1)
like "$? $(lines "$out") $out" "^1 1 agentbox: the container process died before its program ran" \
  "start: the same is a failed start, with one line"
is "$(state_of "$id")" stopped "... and the container is stopped"
rt delete --force "$id"
wait "$tracer"

# ---- delete --force cleans any state directory of its id (#28, 4) ------------
#
# An umount2 that fails once (in the container process and in the
# runtime's own clean-up alike): create once left R/ID without state.json
# but with its netns still mounted; delete --force said nothing and left
# it, and the id could never be created again.

# mounts_under DIR: mount points at or below DIR (our mount namespace).
mounts_under () { awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo; }
# cg_dirs ID: the cgroup directories of container ID, every hierarchy.
cg_dirs () { find /sys/fs/cgroup -maxdepth 6 -type d -name "agentbox-$1" 2>/dev/null | sort | tr '\n' ' '; }

# (A bundle without bind mounts: the container's first umount2 is then the
# one that detaches the old root, which cannot be done without.)
make_bundle "$T/nobind" 'process.args=["/bin/abtest","sleep-forever"]'
id=$(new_id)
out=$(st -e trace=umount2 -e inject=umount2:error=ENOMEM:when=1 -- create --bundle "$T/nobind" "$id" </dev/null 2>&1)
like "$? $(lines "$out") $out" "^1 1 agentbox: .*Cannot allocate memory" "create with an umount2 that fails once: fails with one line"
rt delete --force "$id" >/dev/null 2>"$T/delete.err"
is "$?:$(cat "$T/delete.err")" "0:" "... delete --force succeeds"
is "$(mounts_under "$AB_STATE/$id")$(cg_dirs "$id")" "" "... and leaves no mount (the held netns) and no cgroup"
ok "$([ ! -e "$AB_STATE/$id" ]; echo $?)" "... nor its state directory"
rt create --bundle "$T/nobind" "$id" </dev/null >/dev/null 2>"$T/create.err"
is "$?:$(cat "$T/create.err")" "0:" "... and the id can be created again"
rt delete --force "$id"

# A directory of the id without state.json, with a mount in it (what a
# create killed at the wrong moment, or an earlier runtime, leaves).
id=$(new_id)
mkdir -m 0700 "$AB_STATE/$id" && : >"$AB_STATE/$id/netns" && mount --bind "$T/sleeper/config.json" "$AB_STATE/$id/netns"
rt delete --force "$id" >/dev/null 2>"$T/delete.err"
is "$?:$(cat "$T/delete.err")$(mounts_under "$AB_STATE/$id")" "0:" \
  "delete --force of a state directory without state.json unmounts what is mounted in it"
ok "$([ ! -e "$AB_STATE/$id" ]; echo $?)" "... and removes it"

# ---- every cgroup is removed, or recorded for delete --force (#28, 5) --------
#
# One rmdir that fails (EIO) once stopped the removal of the container's
# cgroups at that hierarchy: run exited 0 and the other hierarchies' cgroups
# were left, recorded nowhere.

id=$(new_id)
out=$(st -e trace=unlinkat -e inject=unlinkat:error=EIO:when=3 -- run --bundle "$T/true" "$id" </dev/null 2>&1)
is "$?:$out" "0:" "run with an rmdir that fails once: exits 0, silently"
is "$(cg_dirs "$id")" "" "... and leaves no cgroup in any hierarchy (the failed one is tried again)"
ok "$([ ! -e "$AB_STATE/$id" ]; echo $?)" "... nor its state directory"

id=$(new_id)
out=$(st -e trace=unlinkat -e inject=unlinkat:error=EIO:when=3+ -- run --bundle "$T/true" "$id" </dev/null 2>&1)
like "$?:$(lines "$out"):$out" "^0:1:agentbox: warning: .*delete --force $id" \
  "run whose rmdirs keep failing: exits 0 with one warning, naming delete --force"
isnt "$(cg_dirs "$id")" "" "... (cgroups are left)"
like "$(rt list -q)" "^$id\$" "... the container stays listed"
is "$(state_of "$id")" stopped "... as stopped"
rt delete --force "$id" >/dev/null 2>"$T/delete.err"
is "$?:$(cat "$T/delete.err")$(cg_dirs "$id")" "0:" "... and delete --force removes every cgroup of it"
ok "$([ ! -e "$AB_STATE/$id" ]; echo $?)" "... and its state directory"

# ---- a start socket whose accept fails once (#28, 6) -------------------------

make_bundle --out "$T/marker" 'process.args=["/bin/abtest","touch","/out/ran"]'
chmod 0777 "$T/marker/out"
id=$(new_id)
st -e trace=accept4 -e inject=accept4:error=EIO:when=1 -- create --bundle "$T/marker" "$id" </dev/null >/dev/null 2>&1 &
tracer=$!
wait_for_status "$id" created
rt start "$id" 2>"$T/start.err"
is "$?:$(cat "$T/start.err")" "0:" "accept4 on the start socket fails once: start succeeds"
for ((i = 0; i < 1200; i++)); do
  [ -e "$T/marker/out/ran" ] && break
  sleep 0.05
done
ok "$([ -e "$T/marker/out/ran" ]; echo $?)" "... and the program runs (its file appears on the host)"
rt delete --force "$id"
wait "$tracer"

# ---- a failed run leaves no hidden state directory (#28, 7) ------------------

bad=""
for ((w = 1; w <= 24; w++)); do
  id=$(new_id)
  st -e trace=openat -e inject=openat:error=EIO:when=$w -- run --bundle "$T/true" "$id" </dev/null >/dev/null 2>&1
  rt delete --force "$id" >/dev/null 2>&1
  left=$(ls -A "$AB_STATE" 2>/dev/null)
  [ -z "$left" ] || bad+=" when=$w:$left"
  rm -rf "${AB_STATE:?}/.$id"
done
is "$bad" "" "an openat that fails (each of the first 24): the state root is left empty (no hidden .ID)"

# ---- a full state root ---------------------------------------------------------
#
# The state root on a full filesystem: the one line says which directory,
# not a bare "write `config.json`" that reads like the bundle's file, and
# not that namespaces cannot be set up here (run --default's hint, or its
# fallback without them); nothing is left in it.

full=$T/full
mkdir -p "$full" && mount -t tmpfs -o size=64k,mode=0755 ab-full-root "$full"
[ "$AB_ROOTLESS" = 1 ] && chown "$AB_RL_UID:$AB_RL_GID" "$full"
head -c 1M /dev/zero >"$full/fill" 2>/dev/null
for how in bundle default fallback; do
  id=$(new_id)
  case $how in
    bundle) set -- --bundle "$T/true" "$id" && what="run --bundle" ;;
    default) set -- --default "$id" -- true && what="run --default" ;;
    # a sandbox that opted in to run without namespaces where they cannot
    # be had must not take a full disk for that
    fallback) set -- --default --fallback landlock "$id" -- true && what="run --default --fallback landlock" ;;
  esac
  out=$(_ab_wrap "${_ab_as[@]}" "$RUNTIME" --root "$full/state" run "$@" </dev/null 2>&1)
  is "$?:$(lines "$out")" "125:1" "$what, the state root full: one line, exit status 125 (it did not run)"
  like "$out" "^agentbox: state directory \`$full/state/$id\`: [a-z]+ \`[a-z.]+\`: No space left on device\$" \
    "... which names the container's state directory under the root"
  is "$(ls -A "$full/state")" "" "... and nothing is left in the state root"
done
set --
umount "$full"

# ---- run --default with a cache it cannot use (#28, 8) -----------------------
#
# runtime/cache.h promises that a broken cache makes a run slower, never
# fails it: the rootfs skeleton is then built privately for the run.

mkdir -m 0755 "$T/ro" "$T/other"
mount --bind "$T/ro" "$T/ro" && mount -o remount,bind,ro "$T/ro"
echo x >"$T/cachefile"
chown 1000:1000 "$T/other"
for c in "read-only:$T/ro" "missing under a read-only parent:$T/ro/cache" "a file:$T/cachefile" \
  "owned by another uid:$T/other"; do
  id=$(new_id)
  out=$(AGENTBOX_CACHE_DIR=${c#*:} rt run --default "$id" -- sh -c 'ls /proc/self/status; cat /etc/shadow' \
    </dev/null 2>"$T/run.err")
  is "$?:$out:$(lines "$(cat "$T/run.err")")" "0:/proc/self/status:1" \
    "run --default, cache ${c%%:*}: runs (with /proc, /etc/shadow masked) with one warning"
  like "$(cat "$T/run.err")" "^agentbox: warning: cache not used" "... which says the cache is not used"
  is "$(ls -A "$AB_STATE")" "" "... and leaves nothing in the state root"
done
umount "$T/ro"
# A bundle's root is checked against the cache too (it may not hold it):
# a cache path that is a file is compared by its directory, not refused.
out=$(AGENTBOX_CACHE_DIR=$T/cachefile rt run --bundle "$T/true" "$(new_id)" </dev/null 2>"$T/run.err")
is "$?:$(lines "$(cat "$T/run.err")")" "0:1" "run --bundle, cache a file: runs with one warning"
id=$(new_id)
AGENTBOX_CACHE_DIR=$T/cachefile rt run --default --detach "$id" </dev/null >/dev/null 2>&1
is "$(state_of "$id")" running "run --default --detach, cache a file: the sandbox runs"
rt delete --force "$id"
is "$(ls -A "$AB_STATE")" "" "... and delete --force removes its private rootfs skeleton too"

# ---- a state lock that could not be given back -------------------------------

# A state lock that could not be given back (flock LOCK_UN failing) was
# kept for the whole of a foreground run: every other command on the
# container, delete --force included, waited for the program to end.
# (The program says it runs through a file: `state` would wait for the
# lock too.)
make_bundle --out "$T/up" 'process.args=["/bin/sh","-c","touch /out/up; exec /bin/abtest sleep-forever"]'
chmod 0777 "$T/up/out"
id=$(new_id)
st -e trace=flock -e inject=flock:error=ENOSPC:when=2 -- run --bundle "$T/up" "$id" </dev/null >/dev/null 2>&1 &
tracer=$!
for ((i = 0; i < 1200; i++)); do
  [ -e "$T/up/out/up" ] && break
  sleep 0.05
done
AB_RT_TIMEOUT=10 rt delete --force "$id" 2>"$T/delete.err"
is "$?:$(cat "$T/delete.err")" "0:" "a run whose unlock failed: delete --force does not wait for the program's end"
wait "$tracer"

done_testing


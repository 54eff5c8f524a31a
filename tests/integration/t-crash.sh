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
  for ((i = 0; i < 200; i++)); do
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

done_testing


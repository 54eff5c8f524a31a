# tests/integration/lib.sh: sourced by every integration test (bash).
#
#   #!/bin/bash
#   . "$(dirname "$0")/lib.sh"
#   require_runtime_commands create start state delete
#   make_bundle "$T/b" 'process.args=["/bin/abtest","exit","42"]'
#   id=$(new_id)
#   rt run --bundle "$T/b" "$id" </dev/null >/dev/null 2>&1
#   is $? 42 "run exits with the process's exit code"
#   done_testing
#
# The runtime under test is $RUNTIME (default $AGENTBOX, which `make check`
# sets); any runc-compatible runtime works: RUNTIME=/usr/sbin/runc t-x.sh.
# Tests that check agentbox-only behaviour call `agentbox_only` first.
#
# Sourcing this file creates the test directory $T (removed at the end), the
# runtime state root $AB_STATE inside it, takes a snapshot of the host and
# installs an exit trap; done_testing deletes every container the file
# created, checks that nothing was left behind (each leftover is a failed
# test naming it) and prints the plan.
#
# TAP goes to fd 7 (a dup of the original stdout); the file's stdout is sent
# to stderr, so a command whose output a test forgets to capture lands in
# the log instead of corrupting the TAP stream.  Runtime invocations get fd 7
# closed, so no container can hold the harness's pipe open.
#
# Knobs (environment): RUNTIME, ABTEST (the helper binary; found in the build
# tree by default), BUSYBOX (/bin/busybox), PYTHON3, AB_RT_TIMEOUT (seconds
# before a hung runtime call is killed: status 124; default 60),
# AB_CGROUP_WRAP (0/1, see "cgroup discipline"), AB_BASE_CONFIG=builtin (start
# bundles from cfg.py's default instead of the runtime's `spec`), AB_ROOTLESS=1
# (see "rootless").

set -u

AB_TOP_SRCDIR=${AB_TOP_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
AB_LIBDIR=$AB_TOP_SRCDIR/tests/integration
PYTHON3=${PYTHON3:-/usr/bin/python3}
AB_RT_TIMEOUT=${AB_RT_TIMEOUT:-60}

exec 7>&1 1>&2

# ---- TAP --------------------------------------------------------------------

_ab_n=0
_ab_failed=0
_ab_done=0

# (A reader that went away must not stop the clean-up: write errors are ignored.)
_ab_tap () { printf '%s\n' "$*" >&7 2>/dev/null || :; }

diag ()
{
  local line
  while IFS= read -r line; do _ab_tap "# $line"; done <<<"$*"
}

# Plan printed at the end by done_testing (the number of tests depends on
# the leftover check).  Kept as a call for the reader.
plan_later () { :; }

# ok STATUS NAME: passes when STATUS is 0 (use `cmd; ok $? "name"`).
ok ()
{
  local st=$1
  shift
  _ab_n=$((_ab_n + 1))
  if [ "$st" = 0 ]; then
    _ab_tap "ok $_ab_n - $*"
    return 0
  fi
  _ab_tap "not ok $_ab_n - $*"
  _ab_failed=$((_ab_failed + 1))
  [ "$st" = 1 ] || diag "  status: $st"
  return 1
}

# is GOT WANT NAME: string equality.
is ()
{
  if [ "$1" = "$2" ]; then
    ok 0 "$3"
    return 0
  fi
  ok 1 "$3"
  diag "  got:      $(printf '%s' "$1" | sed '2,$s/^/            /')"
  diag "  expected: $(printf '%s' "$2" | sed '2,$s/^/            /')"
  return 1
}

# isnt GOT UNWANTED NAME
isnt ()
{
  if [ "$1" != "$2" ]; then
    ok 0 "$3"
    return 0
  fi
  ok 1 "$3"
  diag "  got $1, which it must not be"
  return 1
}

# like GOT ERE NAME: some line of GOT matches the extended regex.
like ()
{
  if printf '%s\n' "$1" | grep -Eq -- "$2"; then
    ok 0 "$3"
    return 0
  fi
  ok 1 "$3"
  diag "  got:  $(printf '%s' "$1" | head -20 | sed '2,$s/^/        /')"
  diag "  want: /$2/"
  return 1
}

# unlike GOT ERE NAME: no line of GOT matches.
unlike ()
{
  if ! printf '%s\n' "$1" | grep -Eq -- "$2"; then
    ok 0 "$3"
    return 0
  fi
  ok 1 "$3"
  diag "  matching: $(printf '%s\n' "$1" | grep -E -- "$2" | head -5)"
  return 1
}

# skip REASON [COUNT]: COUNT tests (default 1) that do not apply here.
skip ()
{
  local i
  for ((i = 0; i < ${2:-1}; i++)); do
    _ab_n=$((_ab_n + 1))
    _ab_tap "ok $_ab_n # SKIP $1"
  done
}

# skip_all REASON: the whole file does not apply (only before any test).
skip_all ()
{
  _ab_tap "1..0 # SKIP $1"
  _ab_done=1
  _ab_cleanup_dir
  exit 0
}

bail_out ()
{
  _ab_tap "Bail out! $*"
  _ab_done=1
  [ -n "${T:-}" ] && _ab_finish # TAP readers stop at "Bail out!"; the host is cleaned all the same
  exit 1
}

done_testing ()
{
  _ab_finish
  _ab_done=1
  _ab_tap "1..$_ab_n"
  [ "$_ab_failed" = 0 ] && exit 0
  exit 1
}

_ab_on_exit ()
{
  [ "$_ab_done" = 1 ] && return
  _ab_done=1
  ok 1 "test file ran to done_testing (it stopped after test $_ab_n)"
  _ab_finish
  _ab_tap "1..$_ab_n"
  exit 1
}

# ---- the runtime ------------------------------------------------------------

# AB_NO_RUNTIME=1 before sourcing: a file that tests the harness itself.
RUNTIME=${RUNTIME:-${AGENTBOX:-}}
AB_RUNTIME_KIND=none
if [ "${AB_NO_RUNTIME:-0}" != 1 ]; then
  [ -n "$RUNTIME" ] || { _ab_tap "1..0 # SKIP no runtime: set RUNTIME or AGENTBOX"; exit 0; }
  _ab_rt_path=$(command -v "$RUNTIME") || { _ab_tap "1..0 # SKIP runtime $RUNTIME not found"; exit 0; }
  RUNTIME=$(readlink -f "$_ab_rt_path")
  unset _ab_rt_path
  # runc, crun, agentbox, ...: the first word of `--version`.
  AB_RUNTIME_KIND=$("$RUNTIME" --version 2>/dev/null </dev/null | awk 'NR == 1 { print $1 }')
  AB_RUNTIME_KIND=${AB_RUNTIME_KIND:-unknown}
fi

is_agentbox () { [ "$AB_RUNTIME_KIND" = agentbox ]; }

# agentbox_only [COUNT]: returns 1 (and skips COUNT tests) under another runtime:
#   if agentbox_only 2; then ...two agentbox-specific tests...; fi
agentbox_only ()
{
  is_agentbox && return 0
  skip "agentbox-specific; $AB_RUNTIME_KIND does not promise it" "${1:-1}"
  return 1
}

# require_runtime_commands CMD...: skip the file if the runtime lacks one
# (agentbox grows its subcommands one by one; `CMD --help` exits 0 in runc).
require_runtime_commands ()
{
  local c
  for c in "$@"; do
    "$RUNTIME" "$c" --help </dev/null >/dev/null 2>&1 7>&- ||
      skip_all "$AB_RUNTIME_KIND has no \`$c\` command yet"
  done
}

# ---- cgroup discipline ------------------------------------------------------
#
# with_own_cgroup_root CMD... and the helper shell $_AB_CGROOT_SH live in
# cgroot.sh (shared with tests/bench/lib.sh); why and how is explained there.
. "$AB_LIBDIR/cgroot.sh"

if [ -z "${AB_CGROUP_WRAP:-}" ]; then
  if is_agentbox; then AB_CGROUP_WRAP=0; else AB_CGROUP_WRAP=1; fi
fi

_ab_wrap ()
{
  if [ "$AB_CGROUP_WRAP" = 1 ]; then
    timeout -k 5 "$AB_RT_TIMEOUT" /usr/bin/unshare --cgroup --mount --propagation private -- \
      /bin/sh -c "$_AB_CGROOT_SH" with_own_cgroup_root "$@" 7>&-
  else
    timeout -k 5 "$AB_RT_TIMEOUT" "$@" 7>&-
  fi
}

# ---- rootless ---------------------------------------------------------------
#
# AB_ROOTLESS=1: every `rt` runs the runtime as an unprivileged user (the file
# itself stays root, for the checks from the host side): $AB_RL_USER
# (AB_ROOTLESS_USER, default abuser), made if missing with a subordinate id
# range (useradd; idempotent, serialised by a lock so that files running in
# parallel make it once).  The test directory $T is that user's (its state
# root, cache and pid files live there), bundles map the user's own uid and
# gid to the container's root (make_bundle), and a bundle's --out directory
# is the user's.  A test that needs host root says so with rootful_only.

AB_ROOTLESS=${AB_ROOTLESS:-0}
AB_RL_USER=${AB_ROOTLESS_USER:-abuser}

# ab_user NAME: make the unprivileged user NAME if it does not exist (with a
# home and, where useradd gives one, a /etc/subuid range); prints
# "UID GID HOME".
ab_user ()
{
  (
    flock 9
    id -u "$1" >/dev/null 2>&1 || useradd -m -s /bin/sh "$1" >/dev/null 2>&1 || exit 1
  ) 9>/run/lock/agentbox-test-users.lock || return 1
  echo "$(id -u "$1") $(id -g "$1") $(getent passwd "$1" | cut -d: -f6)"
}

# as_user_cmd NAME: the command prefix that runs a command as NAME (setpriv,
# its groups, its HOME, no XDG_RUNTIME_DIR but what the caller gives), one
# word per line; as_user NAME CMD... runs CMD so.
as_user_cmd ()
{
  printf '%s\n' setpriv --reuid="$(id -u "$1")" --regid="$(id -g "$1")" --init-groups \
    env -u XDG_RUNTIME_DIR HOME="$(getent passwd "$1" | cut -d: -f6)" USER="$1" LOGNAME="$1"
}
as_user ()
{
  local -a pre
  mapfile -t pre < <(as_user_cmd "$1")
  shift
  "${pre[@]}" "$@"
}

if [ "$AB_ROOTLESS" = 1 ]; then
  command -v setpriv >/dev/null || { _ab_tap "1..0 # SKIP setpriv missing (util-linux)"; exit 0; }
  read -r AB_RL_UID AB_RL_GID AB_RL_HOME <<<"$(ab_user "$AB_RL_USER")" && [ -n "$AB_RL_UID" ] ||
    { _ab_tap "1..0 # SKIP cannot make the user $AB_RL_USER"; exit 0; }
  mapfile -t _ab_as < <(as_user_cmd "$AB_RL_USER")
else
  _ab_as=()
fi

# ab_rl_map ID FILE: the JSON id mapping of the rootless user: ID as 0, then
# its first range in FILE (/etc/subuid, /etc/subgid) when newuidmap is there.
ab_rl_map ()
{
  local range
  range=$(awk -F: -v u="$AB_RL_USER" -v n="$AB_RL_UID" '($1 == u || $1 == n) && $3 > 0 { print $2, $3; exit }' "$2" 2>/dev/null)
  if [ -n "$range" ] && [ -u /usr/bin/newuidmap ] && [ -u /usr/bin/newgidmap ]; then
    set -- "$1" $range
    echo "[{\"containerID\":0,\"hostID\":$1,\"size\":1},{\"containerID\":1,\"hostID\":$2,\"size\":$3}]"
  else
    echo "[{\"containerID\":0,\"hostID\":$1,\"size\":1}]"
  fi
}

# rootful_only [COUNT] [WHY]: returns 1 (and skips COUNT tests) when the
# runtime runs rootless (AB_ROOTLESS=1): for what needs host root.
rootful_only ()
{
  [ "$AB_ROOTLESS" = 1 ] || return 0
  skip "needs host root (AB_ROOTLESS=1)${2:+: $2}" "${1:-1}"
  return 1
}

# rt ARGS...: the runtime with this file's private state root, so tests
# never see each other's containers.  Global flags may follow: rt --debug state ID.
rt () { _ab_wrap "${_ab_as[@]}" "$RUNTIME" --root "$AB_STATE" "$@"; }

# rt_log FILE ARGS...: the same with --log FILE --log-format json.
rt_log ()
{
  local log=$1
  shift
  _ab_wrap "${_ab_as[@]}" "$RUNTIME" --root "$AB_STATE" --log "$log" --log-format json "$@"
}

# rt_v2only ARGS...: the runtime where the host looks cgroup v2-only
# (cgroot.sh's with_v2_only).  A container made so must be deleted so too:
# the normal view does not show the cgroup paths its state holds.
rt_v2only ()
{
  timeout -k 5 "$AB_RT_TIMEOUT" /usr/bin/unshare --mount --propagation private -- \
    /bin/sh -c "$_AB_V2ONLY_SH" with_v2_only "$RUNTIME" --root "$AB_STATE" "$@" 7>&-
}

# rt_noenv ARGS...: the runtime with an empty environment (no PATH, no HOME).
rt_noenv () { _ab_wrap "${_ab_as[@]}" /usr/bin/env -i "$RUNTIME" --root "$AB_STATE" "$@"; }

# ---- ids, state -------------------------------------------------------------

# new_id: a fresh container id, ab-<shell pid>-<n>, remembered for cleanup.
new_id ()
{
  local n
  n=$(($(wc -l <"$T/ids") + 1))
  echo "ab-$$-$n" >>"$T/ids"
  echo "ab-$$-$n"
}

# json_get KEY <JSON: a top-level (or dotted) field; strings bare, others as
# JSON with sorted keys.
json_get ()
{
  "$PYTHON3" -c '
import json, sys
try:
    v = json.load(sys.stdin)
    for k in sys.argv[1].split("."):
        v = v[int(k)] if isinstance(v, list) else v[k]
except (ValueError, KeyError, IndexError, TypeError):
    sys.exit(1)  # not JSON, or no such field: print nothing
print(v if isinstance(v, str) else json.dumps(v, sort_keys=True))' "$1"
}

# state_of ID: the status field of `state`, or nothing if state fails.
state_of ()
{
  local out
  out=$(rt state "$1" 2>/dev/null) || return 1
  printf '%s' "$out" | json_get status
}

# pid_of ID: the pid field of `state`.
pid_of ()
{
  local out
  out=$(rt state "$1" 2>/dev/null) || return 1
  printf '%s' "$out" | json_get pid
}

# wait_for_status ID STATUS [SECS]: poll until the container reaches STATUS.
# A bounded wait, not a timing assertion.
wait_for_status ()
{
  local i
  for ((i = 0; i < ${3:-20} * 10; i++)); do
    [ "$(state_of "$1")" = "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

# wait_for_file FILE [SECS]: until FILE exists and is not empty;
# wait_for_socket PATH [SECS]: until a daemon has bound its unix socket PATH.
wait_for_file () { _ab_wait_test -s "$1" "${2:-20}"; }
wait_for_socket () { _ab_wait_test -S "$1" "${2:-20}"; }

# _ab_wait_test OP PATH SECS: poll `[ OP PATH ]` for up to SECS.
_ab_wait_test ()
{
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    [ "$1" "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

# alive PID: the process exists and is not a zombie (kill -0 succeeds on
# zombies, and a killed container init may wait a while for its reaper).
alive ()
{
  local st
  [[ $1 =~ ^[0-9]+$ ]] || return 2
  kill -0 "$1" 2>/dev/null || return 1
  st=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [ "$st" != Z ] && [ "$st" != X ]
}

# wait_gone PID [SECS]: until PID is no longer alive (fails for a non-pid,
# so that a test never passes on an empty pid).
wait_gone ()
{
  local i
  [[ $1 =~ ^[0-9]+$ ]] || return 2
  for ((i = 0; i < ${2:-20} * 10; i++)); do
    alive "$1" || return 0
    sleep 0.1
  done
  return 1
}

# ppid_of PID: the parent pid of host process PID.
ppid_of () { awk '$1 == "PPid:" { print $2 }' "/proc/$1/status" 2>/dev/null; }

# held_fds PID: the fds above stdio that host process PID holds, sockets
# aside ("N -> TARGET" lines; "(no pid: PID)" when PID is not a pid).
held_fds ()
{
  local f n t
  [[ $1 =~ ^[0-9]+$ ]] || { echo "(no pid: $1)"; return; }
  for f in /proc/"$1"/fd/*; do
    n=${f##*/}
    [ "$n" -ge 3 ] || continue
    t=$(readlink "$f") || continue
    case $t in socket:*) ;; *) printf '%s -> %s\n' "$n" "$t" ;; esac
  done
}

# host_pid_of CONTAINER_PID NSPID: the host pid of the process that is NSPID in
# the pid namespace of host process CONTAINER_PID (e.g. the pid that
# `abtest setsid-sleeper` printed inside the container).
host_pid_of ()
{
  local p line
  [ -e "/proc/$1/ns/pid" ] || return 1
  # Builtins only (test -ef compares the namespaces' inodes, read parses
  # status): a fork per process made this take seconds on a loaded machine,
  # longer than the deadlines the callers race against.
  for p in /proc/[0-9]*; do
    [ "$p/ns/pid" -ef "/proc/$1/ns/pid" ] 2>/dev/null || continue
    while read -r line; do
      case $line in
        NSpid:*)
          [ "${line##*[[:space:]]}" = "$2" ] && { echo "${p#/proc/}"; return 0; }
          break
          ;;
      esac
    done 2>/dev/null <"$p/status"
  done
  return 1
}

# ---- cgroups seen from the host ---------------------------------------------
#
# The cgroup of a process is found from /proc/PID/cgroup (as the host's
# cgroup namespace sees it) and the mount point of each hierarchy in our
# /proc/self/mountinfo, so the checks hold on v1, hybrid and v2 hosts.

# cg_mount CONTROLLER: the mount point of the v1 hierarchy holding
# CONTROLLER, or of the cgroup2 mount if CONTROLLER is "unified"/on v2.
cg_mount ()
{
  awk -v c="$1" '{
    split($0, parts, " - "); split(parts[2], f, " "); n = split(f[3], o, ",")
    if (f[1] == "cgroup") { for (i = 1; i <= n; i++) if (o[i] == c) { print $5; exit } }
    else if (f[1] == "cgroup2" && c == "unified") { print $5; exit }
  }' /proc/self/mountinfo
}

# cg_path PID CONTROLLER: the cgroup of PID in that hierarchy ("0::" for unified).
cg_path ()
{
  local want=$2
  [ "$want" = unified ] && want=""
  awk -F: -v c="$want" '{ n = split($2, l, ","); if (c == "" && $1 == "0") { print $3; exit }
    for (i = 1; i <= n; i++) if (l[i] == c) { print $3; exit } }' "/proc/$1/cgroup" 2>/dev/null
}

# cg_dir PID CONTROLLER: the host directory of PID's cgroup (the hierarchies
# here are mounted at their root).
cg_dir ()
{
  local m p
  m=$(cg_mount "$2") && p=$(cg_path "$1" "$2") && [ -n "$m" ] && [ -n "$p" ] || return 1
  echo "$m$p"
}

# cg_read PID CONTROLLER V1FILE V2FILE: a limit file of PID's cgroup, from
# the v1 hierarchy of CONTROLLER or the unified one.
cg_read ()
{
  local d
  if [ -n "$(cg_mount "$2")" ] && d=$(cg_dir "$1" "$2") && [ -e "$d/$3" ]; then
    cat "$d/$3"
  elif d=$(cg_dir "$1" unified) && [ -e "$d/$4" ]; then
    cat "$d/$4"
  else
    echo "no $3 / $4"
  fi
}

# cg_frozen PID: "<v2 cgroup.freeze> <v1 freezer.state>" of PID's cgroup
# (on a hybrid host agentbox freezes both, runc v1 only).
cg_frozen ()
{
  echo "$(cat "$(cg_dir "$1" unified)/cgroup.freeze" 2>/dev/null) $(cat "$(cg_dir "$1" freezer)/freezer.state" 2>/dev/null)"
}

# remove_cgroup_parents PARENT: remove PARENT and every cgroup below it in
# every hierarchy, deepest first, within a bounded wait for their processes
# to leave.  For the parents a manager made (podman's --cgroup-parent, the
# kubelet's pod cgroups), which runtimes leave in place; done before
# done_testing, the leftover check then sees only what the runtime left.
remove_cgroup_parents ()
{
  local i
  for ((i = 0; i < 50; i++)); do
    find /sys/fs/cgroup -depth -type d -path "*$1*" -exec rmdir {} + 2>/dev/null
    [ -z "$(find /sys/fs/cgroup -type d -path "*$1*" 2>/dev/null)" ] && return 0
    sleep 0.1
  done
  return 1
}

# start_bg ID BUNDLE [CREATE-OPTION...]: create + start, the container's
# stdio on BUNDLE/stdout and BUNDLE/stderr.
start_bg ()
{
  local id=$1 b=$2
  shift 2
  rt create --bundle "$b" "$@" "$id" </dev/null >"$b/stdout" 2>"$b/stderr" && rt start "$id"
}

# ---- rootfs and bundles -----------------------------------------------------

ABTEST=${ABTEST:-}
if [ -z "$ABTEST" ]; then
  for _ab_c in "${AB_TOP_BUILDDIR:-}/tests/helper/abtest" "$PWD/tests/helper/abtest" \
    "$AB_TOP_SRCDIR/tests/helper/abtest"; do
    [ -x "$_ab_c" ] && { ABTEST=$(readlink -f "$_ab_c"); break; }
  done
  unset _ab_c
fi
BUSYBOX=${BUSYBOX:-/bin/busybox}
AB_BUSYBOX_APPLETS="sh ash cat cp echo env false grep head hostname id kill ln ls mkdir mount mv ps pwd
  readlink rm rmdir sed sleep stat tail test touch true umount uname wc"

# make_rootfs DIR: a minimal rootfs: /bin/abtest, a static busybox with its
# common applets, empty /proc /sys /dev /tmp /root, /etc/passwd and
# /etc/group with root and nobody; directories 0755, everything root's.
make_rootfs ()
{
  local d=$1 a
  [ -x "$ABTEST" ] || bail_out "abtest helper not built (set ABTEST or build tests/helper/abtest)"
  [ -x "$BUSYBOX" ] || bail_out "$BUSYBOX missing: install the Debian package busybox-static"
  mkdir -p "$d"/{bin,proc,sys,dev,tmp,etc,root} || return 1
  install -m 0755 "$ABTEST" "$d/bin/abtest" || return 1
  install -m 0755 "$BUSYBOX" "$d/bin/busybox" || return 1
  for a in $AB_BUSYBOX_APPLETS; do ln -sf busybox "$d/bin/$a" || return 1; done
  printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
    >"$d/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$d/etc/group"
  chmod 0755 "$d" "$d"/{bin,proc,sys,dev,tmp,etc,root}
  chmod 0644 "$d/etc/passwd" "$d/etc/group"
  chown -R 0:0 "$d"
}

# The config every bundle starts from: the runtime's own `spec` output when
# it has that command, else cfg.py's runc-like default (AB_BASE_CONFIG=builtin
# forces the latter).
_ab_base_config ()
{
  [ -s "$T/base-config.json" ] && return 0
  mkdir -p "$T/specgen"
  # The runtime-agnostic suites start from the same runc-like config for every
  # runtime (cfg.py --default); AB_BASE_CONFIG=runtime uses `$RUNTIME spec`
  # instead (agentbox's is the hardened profile, tested on its own).
  if [ "${AB_BASE_CONFIG:-generic}" = runtime ] &&
    (cd "$T/specgen" && "$RUNTIME" spec --bundle "$T/specgen" </dev/null >/dev/null 2>&1 7>&-) &&
    [ -s "$T/specgen/config.json" ]; then
    mv "$T/specgen/config.json" "$T/base-config.json"
  else
    "$PYTHON3" "$AB_LIBDIR/cfg.py" --default "$T/base-config.json"
  fi
  rmdir "$T/specgen"
}

# cfg FILE EDIT...: edit a config.json (see cfg.py for the edit syntax).
cfg () { "$PYTHON3" "$AB_LIBDIR/cfg.py" "$@"; }

# make_bundle [--out] DIR [EDIT...]: DIR/config.json from the base config with
# stdio passed through (terminal false), `abtest true` as the process, then
# EDITs; DIR/rootfs a copy of the file's base rootfs.  With --out, the host
# directory DIR/out is bind-mounted read-write at /out in the container,
# for effects the test checks from outside.
make_bundle ()
{
  local out=0 d
  [ "$1" = --out ] && { out=1; shift; }
  d=$1
  shift
  [ -e "$d/rootfs" ] && bail_out "make_bundle $d: the bundle exists"
  [ -d "$T/base-rootfs" ] || make_rootfs "$T/base-rootfs" || bail_out "cannot build the base rootfs"
  _ab_base_config
  mkdir -p "$d" && cp -a "$T/base-rootfs" "$d/rootfs" || bail_out "cannot copy the rootfs to $d"
  echo "$d/rootfs" >>"$T/rootfs-list"
  cp "$T/base-config.json" "$d/config.json"
  if [ $out = 1 ]; then
    mkdir -p "$d/out" "$d/rootfs/out"
    [ "$AB_ROOTLESS" = 1 ] && chown "$AB_RL_UID:$AB_RL_GID" "$d/out"
    set -- "mounts+={\"destination\":\"/out\",\"type\":\"bind\",\"source\":\"$d/out\",\"options\":[\"rbind\",\"rw\"]}" "$@"
  fi
  # Rootless: the user's own uid and gid as the container's root, in a user
  # namespace, then its subordinate ranges (as `agentbox spec --rootless`
  # writes them; what `runc spec --rootless` does, the network namespace
  # kept: agentbox walls it); no devpts gid=5 (unmapped without a range),
  # no v1 cgroup mount (a user namespace may not mount cgroup v1).  The
  # bundle directory is the user's (pid files, logs).
  if [ "$AB_ROOTLESS" = 1 ]; then
    chown "$AB_RL_UID:$AB_RL_GID" "$d" "$d/config.json"
    set -- linux.namespaces+=user "linux.uidMappings=$(ab_rl_map "$AB_RL_UID" /etc/subuid)" \
      "linux.gidMappings=$(ab_rl_map "$AB_RL_GID" /etc/subgid)" \
      'mounts[destination=/dev/pts].options-=gid=5' '!mounts[destination=/sys/fs/cgroup]' "$@"
  fi
  cfg "$d/config.json" process.terminal=false 'process.args=["/bin/abtest","true"]' "$@" ||
    bail_out "make_bundle $d: a config edit failed"
}

# ---- leftovers ----------------------------------------------------------------

snapshot_host () { "$PYTHON3" "$AB_LIBDIR/leftovers.py" snapshot "$T/snapshot.json"; }

_ab_leftovers ()
{
  "$PYTHON3" "$AB_LIBDIR/leftovers.py" check "$T/snapshot.json" --shell-pid $$ --dir "$T" \
    --state "$AB_STATE" --id-prefix "ab-$$-" --rootfs-list "$T/rootfs-list"
}

# check_leftovers: one failed test per thing the file left on the host, or
# one passing test.  Processes get a few seconds to finish dying first.
# Leftovers are then removed (processes killed, cgroups and mounts under $T
# removed) so that a failing runtime does not leave the machine dirty.
check_leftovers ()
{
  local out i line bad=0 pid
  for ((i = 0; i < 50; i++)); do
    out=$(_ab_leftovers) || { ok 1 "leftover check ran"; return 1; }
    grep -qv -e '^note:' -e '^$' <<<"$out" || break
    sleep 0.1
  done
  while IFS= read -r line; do
    case $line in
      '') ;;
      note:*) diag "${line#note: }" ;;
      *) ok 1 "nothing left behind: $line"; bad=1 ;;
    esac
  done <<<"$out"
  [ $bad = 0 ] && ok 0 "nothing left behind (processes, mounts, cgroups, state, netns, links)"
  [ $bad = 0 ] && return 0
  # clean up what was reported
  for pid in $(sed -n 's/^process: pid \([0-9]*\) .*/\1/p' <<<"$out"); do kill -KILL "$pid" 2>/dev/null; done
  for pid in $(sed -n 's/^process: pid \([0-9]*\) .*/\1/p' <<<"$out"); do wait_gone "$pid" 5; done
  sed -n 's/^cgroup: \(.*\) still exists$/\1/p' <<<"$out" | sort -r | while read -r line; do rmdir "$line"; done
  sed -n 's/^mount: \([^ ]*\) .*/\1/p' <<<"$out" | grep "^$T/" | sort -r | while read -r line; do
    umount -l "$line"
  done
  _AB_KEEP_T=$(grep -q '^mount:' <<<"$out" && echo 1)
  return 1
}

_ab_finish ()
{
  local id
  if [ -s "$T/ids" ]; then
    while read -r id; do rt delete --force "$id" </dev/null >/dev/null 2>&1; done <"$T/ids"
    # an overlay workspace's change set outlives its container
    [ -d "$AB_STATE/.changesets" ] &&
      while read -r id; do rt workspace discard "$id" </dev/null >/dev/null 2>&1; done <"$T/ids"
  fi
  check_leftovers
  _ab_cleanup_dir
}

_ab_cleanup_dir ()
{
  if [ -n "${_AB_KEEP_T:-}" ]; then
    diag "kept $T: a mount was left in it"
  elif [ -d "$T" ]; then
    rm -rf --one-file-system "$T"
  fi
}

# ---- set-up -----------------------------------------------------------------

[ "$(id -u)" = 0 ] || { _ab_tap "1..0 # SKIP integration tests run as root"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/abtest.XXXXXX") || bail_out "mktemp failed"
# Traversable (not listable) by the unprivileged host uids a user namespace maps to.
chmod 0711 "$T"
# Rootless: the runtime's user keeps its state, cache and pid files here.
[ "$AB_ROOTLESS" = 1 ] && chown "$AB_RL_UID:$AB_RL_GID" "$T"
AB_STATE=$T/state
# agentbox's cache (compiled seccomp programs, the skeleton of run
# --default) in the test directory too: nothing of a test outlives it.
export AGENTBOX_CACHE_DIR=$T/cache
: >"$T/ids"
: >"$T/rootfs-list"
trap _ab_on_exit EXIT
trap 'exit 130' INT TERM HUP
# A handler, not SIG_IGN: an ignored SIGPIPE would be inherited by the
# runtime and the container; a handler is reset at exec.
# TAP then goes nowhere, so the clean-up can still run and write.
_ab_sigpipe ()
{
  exec 7>/dev/null 1>/dev/null
  exit 141
}
trap _ab_sigpipe PIPE
snapshot_host || bail_out "cannot take the host snapshot"
if [ "${AB_NO_RUNTIME:-0}" = 1 ]; then
  diag "no runtime needed; test dir $T"
else
  diag "runtime: $RUNTIME ($AB_RUNTIME_KIND), test dir $T, cgroup wrapper $AB_CGROUP_WRAP${_ab_as:+, rootless as $AB_RL_USER (uid $AB_RL_UID)}"
fi

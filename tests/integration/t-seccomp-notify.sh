#!/bin/bash
# Seccomp user notification (config-linux.md: SCMP_ACT_NOTIFY rules,
# linux.seccomp.listenerPath, listenerMetadata).  A small agent of the test's
# (seccomp-agent.py) listens on a unix socket, receives the container process
# state and the seccompFd, and answers the container's mkdir calls: EMLINK
# for .../denied, success without a directory for .../faked, "continue" for
# the rest.  Checked from the host: the directories that do (not) exist, the
# state the agent received (metadata, the pid the kernel reports for the
# notified call), which process holds the listener; an agent that is absent
# or does not accept fails the start with one line naming listenerPath, the
# program never runs and nothing is left behind.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run exec state delete
plan_later

[ "$(uname -m)" = x86_64 ] || skip_all "the test agent decodes x86_64 syscall numbers"
# runc 1.1.5 (Debian 12) never reached this agent: its `run` hung with the
# container "running" and nothing sent to listenerPath.
is_agentbox || skip_all "written for agentbox ($AB_RUNTIME_KIND's run hangs with this agent)"

_agents=()
# agent NAME [--stall]: start seccomp-agent.py on $T/NAME.sock, output in $T/NAME/
agent ()
{
  local name=$1
  shift
  mkdir -p "$T/$name"
  "$PYTHON3" "$AB_LIBDIR/seccomp-agent.py" "$T/$name.sock" "$T/$name" "$@" </dev/null >/dev/null \
    2>"$T/$name.err" 7>&- &
  _agents+=($!)
  wait_for_file "$T/$name/ready" 10
}
stop_agents ()
{
  local p
  for p in "${_agents[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${_agents[@]}"; do wait "$p" 2>/dev/null; done
  _agents=()
}

# notify_seccomp SOCK META: the seccomp edit of a bundle: allow all, NOTIFY mkdir.
notify_seccomp ()
{
  printf 'linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","listenerPath":"%s","listenerMetadata":"%s",%s}' \
    "$1" "$2" '"syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_NOTIFY"}]'
}
# field FILE KEY: a field of a JSON file (json_get's output)
field () { json_get "$2" <"$1"; }
# notified_pid DIR PATH: the pid the kernel gave for the notified mkdir of PATH
notified_pid () { awk -v p="$2" '$3 == p { print $1; exit }' "$1/notifications" 2>/dev/null; }

agent a || bail_out "the test agent did not start: $(cat "$T/a.err")"

# ---- run: the agent decides the notified calls ------------------------------------------------

make_bundle --out "$T/r" "$(notify_seccomp "$T/a.sock" meta-run)" \
  'process.args=["/bin/sh","-c","mkdir /out/denied; echo d=$?; mkdir /out/faked; echo f=$?; exec mkdir /out/real"]'
ln -sf busybox "$T/r/rootfs/bin/mkdir"
id=$(new_id)
rt run --bundle "$T/r" "$id" </dev/null >"$T/r.out" 2>"$T/r.err"
is $? 0 "run with SCMP_ACT_NOTIFY rules and an agent at listenerPath succeeds"
like "$(cat "$T/r.out")" '^d=1$' "the agent's errno answer reaches the program (mkdir failed)"
like "$(cat "$T/r.err")" 'Too many links' "... and it is the errno the agent chose (EMLINK)"
# (out/real shows the program got that far.)
[ -d "$T/r/out/real" ] && [ ! -e "$T/r/out/denied" ]
ok $? "from the host: the denied directory does not exist"
like "$(cat "$T/r.out")" '^f=0$' "the agent's success answer reaches the program (mkdir returned 0)"
[ -d "$T/r/out/real" ] && [ ! -e "$T/r/out/faked" ]
ok $? "from the host: the faked directory does not exist (the agent answered in the kernel's place)"
[ -d "$T/r/out/real" ]
ok $? "from the host: the directory the agent let through (continue) exists"

# nonempty VALUE: a number or word to compare with (an empty one never matches).
nonempty () { [ -n "$1" ] && echo "$1" || echo "(nothing)"; }
st=$T/a/state-1.json
like "$(field "$st" ociVersion)" '^1\.' "the agent got a container process state with its ociVersion"
is "$(field "$st" fds)" '["seccompFd"]' "fds names the one descriptor: seccompFd"
is "$(field "$st" fds_received)" 1 "exactly one fd came with it (SCM_RIGHTS)"
is "$(field "$st" metadata)" meta-run "metadata is listenerMetadata"
is "$(field "$st" state.id)" "$id" "state.id is the container's"
is "$(field "$st" state.bundle)" "$T/r" "state.bundle is the bundle"
pid=$(nonempty "$(field "$st" pid)")
is "$(field "$st" state.pid)" "$pid" "state.pid is the pid of the process that loaded the filter (the init)"
is "$(notified_pid "$T/a" /out/real)" "$pid" \
  "that pid is the host pid the kernel reports for the init's own notified mkdir"
if agentbox_only; then
  is "$(field "$st" state.status)" created "state.status: created (start was called, the program not yet executed)"
fi

# ---- create + start, exec: the listener stays with the agent --------------------------------

make_bundle --out "$T/d" "$(notify_seccomp "$T/a.sock" meta-detached)" \
  'process.args=["/bin/sh","-c","mkdir /out/faked; exec /bin/abtest sleep-forever"]'
ln -sf busybox "$T/d/rootfs/bin/mkdir"
cid=$(new_id)
start_bg "$cid" "$T/d"
ok $? "create + start with a listenerPath"
cpid=$(nonempty "$(pid_of "$cid")")
st=$T/a/state-2.json
wait_for_file "$st" 10
is "$(field "$st" pid)" "$cpid" "the state's pid is the container's pid as \`state\` reports it"
is "$(field "$st" metadata)" meta-detached "the second container's metadata is its own"
for ((i = 0; i < 50; i++)); do [ -e "$T/a/notifications" ] && [ -n "$(notified_pid "$T/a" /out/faked)" ] && break; sleep 0.1; done
[ -n "$(notified_pid "$T/a" /out/faked)" ] && [ ! -e "$T/d/out/faked" ]
ok $? "from the host: the started container's notified mkdir was answered by the agent"
alive "$cpid" && ! ls -l "/proc/$cpid/fd" | grep -q 'seccomp notify'
ok $? "from the host: the container's running program holds no seccomp listener (close-on-exec)"
agent_pid=${_agents[0]}
[ "$(ls -l "/proc/$agent_pid/fd" 2>/dev/null | grep -c 'seccomp notify')" -ge 2 ]
ok $? "from the host: the agent process holds the listeners (one per container so far)"

rt exec "$cid" /bin/sh -c 'exec mkdir /out/faked-by-exec' </dev/null >/dev/null 2>&1
is $? 0 "exec under the container's profile: the agent answers the exec'd process too"
[ -n "$(notified_pid "$T/a" /out/faked-by-exec)" ] && [ ! -e "$T/d/out/faked-by-exec" ]
ok $? "from the host: the exec's mkdir went to the agent, and no directory was made"
st=$T/a/state-3.json
is "$(field "$st" pid)" "$(nonempty "$(notified_pid "$T/a" /out/faked-by-exec)")" \
  "the exec's state: pid is the exec'd process (as the kernel reports it)"
is "$(field "$st" state.pid)" "$cpid" "the exec's state: state.pid is the container's init"
if agentbox_only; then
  is "$(field "$st" state.status)" running "the exec's state: status running"
fi
rt delete --force "$cid"

# Without no_new_privs the filter is loaded before the privilege drop, so
# the agent is asked about the drop's own calls too; the handover is the same.
make_bundle --out "$T/e" "$(notify_seccomp "$T/a.sock" meta-early)" process.noNewPrivileges=false \
  'process.args=["/bin/sh","-c","exec mkdir /out/faked-early"]'
ln -sf busybox "$T/e/rootfs/bin/mkdir"
rt run --bundle "$T/e" "$(new_id)" </dev/null >/dev/null 2>&1
is $? 0 "without no_new_privs (filter loaded before the privilege drop) the run succeeds"
[ -n "$(notified_pid "$T/a" /out/faked-early)" ] && [ ! -e "$T/e/out/faked-early" ]
ok $? "... and the agent answered its mkdir (no directory on the host)"
is "$(field "$T/a/state-4.json" metadata)" meta-early "... after it got the state with the listener"

# ---- no agent: one line naming listenerPath, the program never runs -----------------------

make_bundle --out "$T/n" "$(notify_seccomp "$T/nobody.sock" x)" 'process.args=["/bin/sh","-c","echo ran >/out/ran"]'
id=$(new_id)
err=$(rt run --bundle "$T/n" "$id" </dev/null 2>&1 >/dev/null)
st=$?
if agentbox_only 3; then
  is "$st" 125 "run with no agent at listenerPath fails as a setup failure (125)"
  is "$(wc -l <<<"$err")" 1 "... with one line"
  like "$err" "linux.seccomp.listenerPath \`$T/nobody.sock\`: connect: No such file or directory" \
    "... naming listenerPath and the reason"
fi
[ ! -e "$T/n/out/ran" ]
ok $? "from the host: the program never ran"
is "$(state_of "$id")" "" "no container is left"

id=$(new_id)
rt create --bundle "$T/n" "$id" </dev/null >/dev/null 2>&1
ok $? "create with no agent yet succeeds (the filter is loaded at start)"
err=$(rt start "$id" 2>&1)
isnt $? 0 "start with no agent at listenerPath fails"
like "$err" "listenerPath|seccomp" "... naming the listener"
[ ! -e "$T/n/out/ran" ]
ok $? "from the host: the program never ran"
is "$(state_of "$id")" stopped "the container is stopped"
rt delete "$id"

# An agent that never accepts: a bounded wait, then the same.
agent stall --stall || bail_out "the stalled agent did not start"
make_bundle --out "$T/s" "$(notify_seccomp "$T/stall.sock" x)" 'process.args=["/bin/sh","-c","echo ran >/out/ran"]'
id=$(new_id)
err=$(rt run --bundle "$T/s" "$id" </dev/null 2>&1 >/dev/null)
isnt $? 0 "run with an agent that does not accept fails"
if agentbox_only; then
  like "$err" "linux.seccomp.listenerPath \`$T/stall.sock\`: the agent did not accept the connection within" \
    "... naming listenerPath and the timeout"
fi
[ ! -e "$T/s/out/ran" ]
ok $? "from the host: the program never ran"
is "$(state_of "$id")" "" "no container is left"

# ---- what create refuses --------------------------------------------------------------------

if agentbox_only 6; then
  # config-linux.md: without an SCMP_ACT_NOTIFY rule listenerPath is ignored.
  # Nothing listens there: a runtime that connected would fail as above.
  make_bundle --out "$T/v" "linux.seccomp={\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"$T/nobody.sock\"}" \
    'process.args=["/bin/sh","-c","echo ran >/out/ran"]'
  id=$(new_id)
  rt run --bundle "$T/v" "$id" </dev/null >/dev/null 2>&1
  is $? 0 "listenerPath without a NOTIFY rule is ignored: the container runs"
  [ -e "$T/v/out/ran" ]
  ok $? "... from the host: the program ran, and nothing connected to listenerPath"
  make_bundle "$T/w" 'linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","listenerPath":"/run/agent.sock","syscalls":[{"names":["getpid","sendmsg"],"action":"SCMP_ACT_NOTIFY"}]}'
  err=$(rt run --bundle "$T/w" "$(new_id)" </dev/null 2>&1 >/dev/null)
  like "$err" 'linux.seccomp.syscalls\[0\].names\[1\]: SCMP_ACT_NOTIFY cannot apply to sendmsg' \
    "NOTIFY on sendmsg (the handover) is refused, naming the entry"
  make_bundle "$T/x" 'linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getpid"],"action":"SCMP_ACT_NOTIFY"}]}'
  err=$(rt validate --bundle "$T/x" 2>&1)
  like "$err" 'linux.seccomp.syscalls\[0\].action: SCMP_ACT_NOTIFY requires linux.seccomp.listenerPath' \
    "validate: NOTIFY without listenerPath is refused"
  rt features 2>/dev/null | grep -q '"SCMP_ACT_NOTIFY"'
  ok $? "features lists SCMP_ACT_NOTIFY among the seccomp actions"
  out=$(rt audit --bundle "$T/n" 2>&1)
  ! grep -q "agentbox refuses this config" <<<"$out" && grep -q "listenerPath.*agent at $T/nobody.sock" <<<"$out"
  ok $? "audit of a NOTIFY config names the agent and, as create, does not refuse it"
fi

stop_agents
done_testing

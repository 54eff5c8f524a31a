#!/bin/bash
# The container lifecycle: create -> created -> start -> running -> stopped
# -> delete, as runc does it (OCI runtime.md "Lifecycle" and "Operations").
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start state kill delete list
plan_later

# create_bg ID BUNDLE [FLAGS...]: create with the container's stdio on files in
# the bundle (a created container holds its stdio open: never a pipe here).
create_bg ()
{
  local id=$1 b=$2
  shift 2
  rt create --bundle "$b" "$@" "$id" </dev/null >"$b/stdout" 2>"$b/stderr"
}

make_bundle "$T/sleeper" 'process.args=["/bin/abtest","sleep-forever"]'
make_bundle "$T/exit3" 'process.args=["/bin/abtest","exit","3"]'

# ---- create, start, stop, delete -------------------------------------------------

id=$(new_id)
create_bg "$id" "$T/sleeper" --pid-file "$T/pidfile"
ok $? "create succeeds"
st=$(rt state "$id")
is "$(json_get status <<<"$st")" created "after create the status is created"
is "$(json_get id <<<"$st")" "$id" "state names the container id"
is "$(json_get bundle <<<"$st")" "$T/sleeper" "state gives the absolute bundle path"
pid=$(json_get pid <<<"$st")
[[ $pid =~ ^[0-9]+$ ]] && [ "$pid" -gt 0 ]
ok $? "a created container has a pid > 0 ($pid)"
alive "$pid"
ok $? "the created container's pid is alive on the host (/proc/$pid/status, not a zombie)"
# The pid file is written for the orchestrator to read: bare digits, no newline.
pidfile=$(cat "$T/pidfile" 2>/dev/null)
[[ $pidfile =~ ^[0-9]+$ ]] && [ "$pidfile" = "$pid" ]
ok $? "--pid-file holds the pid as bare digits without a newline ($(od -An -c "$T/pidfile" 2>&1 | tr -s ' '))"
[ -r "/proc/$pid/cmdline" ] && ! grep -q '^/bin/abtest' "/proc/$pid/cmdline"
ok $? "before start the user process has not been executed"

rt start "$id"
ok $? "start succeeds"
is "$(state_of "$id")" running "after start the status is running"
[ -n "$pid" ] && [ "$(pid_of "$id")" = "$pid" ]
ok $? "start runs the process in the pid that create reported"
is "$(tr '\0' ' ' <"/proc/$pid/cmdline")" "/bin/abtest sleep-forever " "the pid now runs process.args"

# runc: exit 1, "cannot start an already running container"
err=$(rt start "$id" 2>&1)
isnt $? 0 "a second start fails"
like "$err" 'running' "the refusal says the container is running"
is "$(state_of "$id")" running "the failed second start leaves the container running"

err=$(rt delete "$id" 2>&1)
isnt $? 0 "delete of a running container without --force fails"
like "$err" 'not stopped|running' "the refusal says the container is not stopped"
alive "$pid"
ok $? "the refused delete leaves the process alive"

rt kill "$id" KILL
ok $? "kill KILL succeeds"
wait_for_status "$id" stopped
ok $? "once its process is dead the status is stopped"
wait_gone "$pid"
ok $? "the process is gone from the host"
# runc reports pid 0 for a stopped container; the OCI schema only requires
# pid while created or running.
err=$(rt start "$id" 2>&1)
isnt $? 0 "start of a stopped container fails"

rt delete "$id"
ok $? "delete of a stopped container succeeds"
err=$(rt state "$id" 2>&1)
isnt $? 0 "state of a deleted container fails"
# runc: exit 1, msg="container does not exist"
like "$err" 'does not exist' "the error says the container does not exist"
unlike "$(rt list -q)" "^$id\$" "list no longer shows the deleted container"
err=$(rt delete "$id" 2>&1)
isnt $? 0 "delete of a deleted container fails"
like "$err" 'does not exist' "... saying it does not exist"
rt delete --force "$id"
is $? 0 "delete --force of a non-existent container exits 0"

# ---- a process that exits by itself ------------------------------------------------

id=$(new_id)
create_bg "$id" "$T/exit3" && rt start "$id"
ok $? "create and start a process that exits with 3"
wait_for_status "$id" stopped
ok $? "a process that exits by itself leaves the container stopped"
rt delete "$id"
ok $? "delete removes the stopped container"

# ---- delete --force, delete of a created container ---------------------------------

id=$(new_id)
create_bg "$id" "$T/sleeper" && rt start "$id"
pid=$(pid_of "$id")
rt delete --force "$id"
ok $? "delete --force of a running container succeeds"
wait_gone "$pid"
ok $? "delete --force killed the running process"
rt state "$id" >/dev/null 2>&1
isnt $? 0 "delete --force removed the container"

id=$(new_id)
create_bg "$id" "$T/sleeper"
pid=$(pid_of "$id")
# runc kills the init of a created container on plain delete
rt delete "$id"
ok $? "delete of a created, never started container succeeds"
wait_gone "$pid"
ok $? "... and its waiting init process is gone"

# ---- ids --------------------------------------------------------------------------

id=$(new_id)
create_bg "$id" "$T/sleeper"
ok $? "create with a fresh id"
rt delete --force "$id"
create_bg "$id" "$T/sleeper"
ok $? "an id is reusable right after delete"
pid=$(pid_of "$id")
err=$(rt create --bundle "$T/sleeper" "$id" </dev/null 2>&1 >/dev/null)
isnt $? 0 "create with an id that exists fails"
# runc: "container with given ID already exists"
like "$err" 'exists' "the error says the id exists"
is "$(state_of "$id"):$(pid_of "$id")" "created:$pid" "the failed duplicate create leaves the first container alone"
rt delete --force "$id"

# runc accepts ^[\w+-.]+$ except "." and ".."; agentbox may be stricter, never looser.
# (A wrongly accepted id is left for the leftover check: deleting it could
# follow the traversal it names.)
for bad in 'a/b' '..' '.' '../escape' 'a b' 'a:b' "a\$b" 'tab	x' ''; do
  rt create --bundle "$T/sleeper" "$bad" </dev/null >/dev/null 2>&1
  isnt $? 0 "create refuses the invalid id '$bad'"
done
[ ! -e "$T/escape" ] && [ ! -e "$AB_STATE/a" ]
ok $? "no invalid id created anything outside or inside the state directory"
is "$(rt list -q)" "" "no container exists after the refused creates"
# Every command refuses an id that walks out of the state directory; run in
# a state root of their own, with a canary next to it.
mkdir -p "$T/trav/state" "$T/trav/state/inner"
touch "$T/trav/canary" "$T/trav/state/inner/canary"
for cmd in "delete --force" "delete" "state" "kill" "start"; do
  for bad in .. ../trav '.' 'inner/..'; do
    # shellcheck disable=SC2086
    _ab_wrap "$RUNTIME" --root "$T/trav/state" $cmd "$bad" </dev/null >/dev/null 2>&1
    [ -e "$T/trav/canary" ] && [ -e "$T/trav/state/inner/canary" ] || break 2
  done
done
[ -e "$T/trav/canary" ] && [ -e "$T/trav/state/inner/canary" ]
ok $? "delete/state/kill/start of ids like .. or ../x touch nothing outside or inside the state root"
rm -rf "$T/trav"

err=$(rt create --bundle "$T/nonexistent" "$(new_id)" </dev/null 2>&1 >/dev/null)
isnt $? 0 "create with a missing bundle fails"
like "$err" "$T/nonexistent" "the error names the missing bundle"

# ---- --pidfd-socket (runc 1.2): the process's pidfd, sent to the caller -------------------

# recv_start NAME [--kill SIG]: fd-recv.py on $T/NAME.sock (its pid in
# $recv_pid), logging each fd it receives to $T/NAME.log.
recv_start ()
{
  local name=$1
  shift
  rm -f "$T/$name.sock" "$T/$name.log" "$T/$name.log.pid"
  "$PYTHON3" "$AB_LIBDIR/fd-recv.py" "$T/$name.sock" "$T/$name.log" "$@" </dev/null >/dev/null 2>"$T/$name.err" 7>&- &
  recv_pid=$!
  wait_for_file "$T/$name.log.pid"
}
recv_stop () { kill "$recv_pid" 2>/dev/null; wait "$recv_pid" 2>/dev/null; }

if rt create --help 2>&1 | grep -q -- --pidfd-socket; then
  recv_start pf
  id=$(new_id)
  create_bg "$id" "$T/sleeper" --pidfd-socket "$T/pf.sock"
  ok $? "create --pidfd-socket succeeds"
  wait_for_file "$T/pf.log"
  is "$(cat "$T/pf.log")" "pidfd $(pid_of "$id")" "... and the socket received a pidfd of the container's init"
  rt start "$id"
  rm -f "$T/exec.pid"
  rt exec --detach --pid-file "$T/exec.pid" --pidfd-socket "$T/pf.sock" "$id" /bin/abtest sleep-forever \
    </dev/null >/dev/null 2>&1
  for ((i = 0; i < 50; i++)); do [ "$(wc -l <"$T/pf.log")" -ge 2 ] && break; sleep 0.1; done
  is "$(sed -n 2p "$T/pf.log")" "pidfd $(cat "$T/exec.pid" 2>/dev/null)" "exec --pidfd-socket sends a pidfd of the exec'd process"
  rt delete --force "$id"
  recv_stop

  # What containerd's shim does with it: signal the container through the pidfd.
  recv_start pfkill --kill SIGKILL
  id=$(new_id)
  create_bg "$id" "$T/sleeper" --pidfd-socket "$T/pfkill.sock"
  pid=$(pid_of "$id")
  wait_for_status "$id" stopped && wait_gone "$pid"
  ok $? "SIGKILL through the received pidfd ends the created container (state stopped, process gone)"
  rt delete "$id"
  recv_stop

  id=$(new_id)
  create_bg "$id" "$T/sleeper" --pidfd-socket "$T/absent.sock"
  is "$?:$(state_of "$id")" "2:" "create --pidfd-socket to a socket no one listens on fails (exit 2, as --console-socket), leaving no container"
  like "$(cat "$T/sleeper/stderr")" "--pidfd-socket: connect \`$T/absent.sock\`" "... naming the option and the socket"
else
  skip "$AB_RUNTIME_KIND has no --pidfd-socket (runc 1.2 added it)" 6
fi

done_testing

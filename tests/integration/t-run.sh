#!/bin/bash
# `run`: create + start + wait in one call, foreground or --detach; its exit
# status is the process's (128 + signal when a signal killed it).
. "$(dirname "$0")/lib.sh"
require_runtime_commands run state kill delete
plan_later

# run_with ARGS_JSON: a bundle running ARGS_JSON, then `run` it in the
# foreground with stdin from /dev/null; sets $out (stdout) and $rc.
run_with ()
{
  local b=$T/run-$((++runs)) id
  id=$(new_id)
  make_bundle "$b" "process.args=$1"
  out=$(rt run --bundle "$b" "$id" </dev/null 2>"$b/stderr")
  rc=$?
  last_id=$id last_bundle=$b
}
runs=0

run_with '["/bin/abtest","true"]'
is "$rc" 0 "run exits 0 when the process exits 0"
run_with '["/bin/abtest","exit","42"]'
is "$rc" 42 "run exits 42 when the process exits 42"
rt state "$last_id" >/dev/null 2>&1
isnt $? 0 "a foreground run deletes its container when the process is gone"
run_with '["/bin/abtest","exit","255"]'
is "$rc" 255 "run passes exit status 255 through"
run_with '["/bin/abtest","kill-self","SEGV"]'
is "$rc" 139 "run exits 128+11 when the process dies of SIGSEGV"
run_with '["/bin/abtest","echo","two  spaces","x"]'
is "$out" "two  spaces x" "process.args reach the process verbatim, one argv element each"
run_with '["/bin/abtest","pidns"]'
like "$out" '^pid=1$' "the process is pid 1 of its own pid namespace"

# A signal from outside: the foreground run reports 128 + 9.
make_bundle "$T/fg" 'process.args=["/bin/abtest","sleep-forever"]'
id=$(new_id)
rt run --bundle "$T/fg" "$id" </dev/null >/dev/null 2>&1 &
bg=$!
wait_for_status "$id" running
ok $? "a foreground run shows the container running"
rt kill "$id" KILL
wait "$bg"
is $? 137 "run exits 128+9 when the process is killed with SIGKILL"

# ---- missing or non-executable programs ---------------------------------------------

run_with '["/bin/nonexistent"]'
isnt "$rc" 0 "run of a missing program fails"
like "$(cat "$last_bundle/stderr")" '/bin/nonexistent' "the error names the missing program"
rt state "$last_id" >/dev/null 2>&1
isnt $? 0 "the failed run leaves no container"
# runc exits 1 in both cases; agentbox distinguishes them as a shell does.
if agentbox_only 1; then is "$rc" 127 "agentbox: run of a missing program exits 127"; fi
run_with '["/etc/passwd"]'
isnt "$rc" 0 "run of a non-executable file fails"
if agentbox_only 1; then is "$rc" 126 "agentbox: run of a non-executable file exits 126"; fi

# ---- --detach -----------------------------------------------------------------

id=$(new_id)
rt run --detach --pid-file "$T/fg/pid" --bundle "$T/fg" "$id" </dev/null >/dev/null 2>&1
ok $? "run --detach returns at once with status 0"
is "$(state_of "$id")" running "the detached container is running"
pid=$(pid_of "$id")
[ -n "$pid" ] && [ "$(cat "$T/fg/pid" 2>/dev/null)" = "$pid" ]
ok $? "run --pid-file holds the container's pid"
alive "$pid"
ok $? "the detached process is alive on the host"
rt delete --force "$id"
wait_gone "$pid"
ok $? "delete --force ends the detached container"

# ---- the runtime's own environment does not matter -------------------------------
# (process.env sets HOME: runc adds HOME from the container's /etc/passwd when
# process.env lacks it, "/" for a uid it does not list.)

make_bundle "$T/env" 'process.args=["/bin/abtest","env"]' 'process.env=["PATH=/bin","X=1","HOME=/root"]'
id=$(new_id)
out=$(rt_noenv run --bundle "$T/env" "$id" </dev/null 2>"$T/env/stderr")
is "$?" 0 "run works when the runtime is started with no PATH and no HOME (env -i)"
is "$out" "$(printf 'PATH=/bin\nX=1\nHOME=/root')" "the process gets exactly process.env"
id=$(new_id)
out=$(FOO_FROM_HOST=leak rt run --bundle "$T/env" "$id" </dev/null 2>/dev/null)
unlike "$out" 'FOO_FROM_HOST' "the runtime's environment does not leak into the container"

make_bundle "$T/cwd" 'process.args=["/bin/abtest","cwd"]' 'process.cwd="/tmp"'
id=$(new_id)
out=$(rt run --bundle "$T/cwd" "$id" </dev/null 2>/dev/null)
like "$out" '^cwd=/tmp$' "process.cwd is the working directory"
like "$out" "^ino=$(stat -c %i "$T/cwd/rootfs/tmp")\$" "... and it is the rootfs's /tmp, not the host's"

done_testing

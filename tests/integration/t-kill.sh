#!/bin/bash
# `kill`: signals by name and number, --all, and what is left of a process
# tree that daemonized (setsid + double fork) once the container is killed
# or deleted.  Liveness is always checked from the host (kill -0 on host pids).
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start state kill delete
plan_later

make_bundle "$T/sleeper" 'process.args=["/bin/abtest","sleep-forever"]'

# ---- kill by name and number ---------------------------------------------------------

for sig in 9 KILL SIGKILL; do
  id=$(new_id)
  start_bg "$id" "$T/sleeper"
  pid=$(pid_of "$id")
  rt kill "$id" "$sig"
  ok $? "kill ID $sig succeeds"
  wait_for_status "$id" stopped && wait_gone "$pid"
  ok $? "kill ID $sig ends the process and the container is stopped"
  rt delete "$id"
done

# wait-signal blocks the signals it names and prints the one it receives.
make_bundle "$T/waiter" 'process.args=["/bin/abtest","wait-signal","HUP","USR1","USR2","TERM"]'
signal_test ()
{
  local sent=$1 want=$2 id
  id=$(new_id)
  rm -rf "$T/waiter/stdout"
  start_bg "$id" "$T/waiter"
  wait_for_file "$T/waiter/stdout"
  if [ -n "$sent" ]; then rt kill "$id" "$sent"; else rt kill "$id"; fi
  wait_for_status "$id" stopped
  like "$(cat "$T/waiter/stdout")" "^signal=$want\$" "kill ID ${sent:-(no signal)} delivers $want"
  rt delete --force "$id"
}
signal_test USR1 SIGUSR1
signal_test SIGUSR2 SIGUSR2
signal_test 1 SIGHUP
signal_test "" SIGTERM # the default signal

id=$(new_id)
start_bg "$id" "$T/sleeper"
err=$(rt kill "$id" NOSUCHSIG 2>&1)
isnt $? 0 "kill with an unknown signal name fails"
like "$err" 'NOSUCHSIG' "the error names the signal"
rt kill "$id" 99 >/dev/null 2>&1
isnt $? 0 "kill with an out-of-range signal number fails"
# Signal 0 (runc sends it): nothing is delivered, the process must be there.
err=$(rt kill "$id" 0 2>&1)
is "$? $err" "0 " "kill ID 0 of a running container succeeds (the check that it is there)"
is "$(state_of "$id")" running "the refused kills leave the container running"
rt kill "$id" KILL && wait_for_status "$id" stopped
err=$(rt kill "$id" KILL 2>&1)
isnt $? 0 "kill of a stopped container fails"
# runc: msg="container not running"
like "$err" 'not running' "the error says the container is not running"
# runc: with --all a stopped container is no error; containerd's shim sends
# `kill --all ID 9` after every task exit.
err=$(rt kill --all "$id" KILL 2>&1)
is "$? $err" "0 " "kill --all of a stopped container exits 0 and says nothing"
err=$(rt kill --all "$id" TERM 2>&1)
is "$? $err" "0 " "... with any signal"
rt delete "$id"
err=$(rt kill --all "$id" KILL 2>&1)
like "$? $err" "^1 .*does not exist" "kill --all of a deleted container still fails (exit 1)"

id=$(new_id)
rt create --bundle "$T/sleeper" "$id" </dev/null >/dev/null 2>&1
pid=$(pid_of "$id")
rt kill "$id" KILL
wait_for_status "$id" stopped && wait_gone "$pid"
ok $? "kill KILL of a created, never started container stops it"
rt delete "$id"
err=$(rt kill "$id" KILL 2>&1)
isnt $? 0 "kill of a non-existent container fails"

# ---- daemonized grandchildren ------------------------------------------------------------
# The container's init starts a setsid'd, double-forked sleeper (its pid
# lands in /out/pid, on the host in $bundle/out/pid) and then sleeps itself.

daemon_args='process.args=["/bin/sh","-c","/bin/abtest setsid-sleeper >/out/pid && exec /bin/abtest sleep-forever"]'
make_bundle --out "$T/daemon" "$daemon_args"
make_bundle --out "$T/daemon-hostpid" "$daemon_args" 'linux.namespaces-=pid'

# start_daemon ID BUNDLE: sets $init and $grandchild (host pids).
start_daemon ()
{
  rm -f "$2/out/pid"
  start_bg "$1" "$2"
  wait_for_file "$2/out/pid"
  init=$(pid_of "$1")
  grandchild=$(sed -n 's/^pid=//p' "$2/out/pid")
  # In a pid namespace the printed pid is the namespace's; find the host's.
  if [ "$(readlink "/proc/$init/ns/pid")" != "$(readlink /proc/self/ns/pid)" ]; then
    grandchild=$(host_pid_of "$init" "$grandchild")
  fi
}

# Rootless, a container without a pid namespace of its own cannot mount
# /proc (t-rootless.sh checks the refusal), so only the first variant runs.
variants="daemon daemon-hostpid"
[ "$AB_ROOTLESS" = 1 ] && variants=daemon && skip "needs host root: /proc of the host's pid namespace" 5
for variant in $variants; do
  case $variant in
    daemon) where="in its own pid namespace" ;;
    *) where="sharing the host's pid namespace" ;;
  esac
  id=$(new_id)
  start_daemon "$id" "$T/$variant"
  alive "$grandchild" && [ "$(ps -o sid= -p "$grandchild" | tr -d ' ')" != "$(ps -o sid= -p "$init" | tr -d ' ')" ]
  ok $? "$where: the grandchild runs in its own session (host pid ${grandchild:-none})"
  rt delete --force "$id"
  wait_gone "$init" && wait_gone "$grandchild"
  ok $? "$where: delete --force ends the init and the setsid'd grandchild"

  id=$(new_id)
  start_daemon "$id" "$T/$variant"
  rt kill --all "$id" KILL
  ok $? "$where: kill --all KILL succeeds"
  wait_gone "$init" && wait_gone "$grandchild"
  ok $? "$where: kill --all KILL ends the init and the setsid'd grandchild"
  wait_for_status "$id" stopped
  ok $? "$where: the container is stopped after kill --all"
  rt delete "$id"
done

# Without a pid namespace, killing init alone leaves the grandchild (the
# kernel only reaps a pid namespace's processes with its init); --all is what
# reaches it.  runc signals every process in the container's cgroup.
if rootful_only 4 "/proc of the host's pid namespace"; then
id=$(new_id)
start_daemon "$id" "$T/daemon-hostpid"
rt kill "$id" KILL
wait_gone "$init"
ok $? "sharing the host's pid namespace: kill KILL ends the init"
# agentbox may well end the whole tree when init dies; it need not copy this.
if is_agentbox; then
  skip "runc behaviour, not a requirement: a plain kill leaves the grandchild"
else
  alive "$grandchild"
  ok $? "... but not the grandchild, which only --all or delete --force reach"
fi
wait_for_status "$id" stopped
err=$(rt kill --all "$id" KILL 2>&1)
is "$? $err" "0 " "kill --all KILL of the stopped container exits 0"
wait_gone "$grandchild"
ok $? "... and ends what was left in its cgroup (the grandchild)"
rt delete --force "$id"
fi

done_testing

#!/bin/bash
# pause, resume, ps and update, checked from the host: a paused container's
# ticker stops writing to a host file and starts again on resume; `ps`
# lists exactly the processes the host sees in the container's pid
# namespace (also a setsid'd, double-forked one); `update` changes the
# limit files of the container's cgroup and the kernel enforces the new
# pids limit; refused operations change nothing and name what was wrong.
# Rootless (AB_ROOTLESS=1) on a host that delegates the user no cgroup (v1,
# hybrid, v2 without delegation) the container has no cgroup: pause, resume
# and update are refused in one line naming it and --cgroup-parent, and
# change nothing (the ticker goes on); ps walks the pid namespace all the same.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start state kill delete pause resume ps update
plan_later

# freezer_view PID [V1 V2]: "<v1 freezer.state> <v2 cgroup.events frozen>"
# of PID's cgroup on the host, "-" for a freezer it does not have; with V1
# and V2, what it would read if each it has said that.
freezer_view ()
{
  local d v1=- v2=-
  if d=$(cg_dir "$1" freezer) && [ -e "$d/freezer.state" ]; then v1=${2:-$(cat "$d/freezer.state")}; fi
  if d=$(cg_dir "$1" unified) && [ -e "$d/cgroup.freeze" ]; then
    v2=${3:-$(awk '$1 == "frozen" { print $2 }' "$d/cgroup.events")}
  fi
  echo "$v1 $v2"
}

# tick BUNDLE: the ticker's last count (host side), or "none".
tick () { cat "$1/out/tick" 2>/dev/null || echo none; }

# wait_tick_after BUNDLE N [SECS]: until the count differs from N.
wait_tick_after ()
{
  local i
  for ((i = 0; i < ${3:-10} * 10; i++)); do
    [ "$(tick "$1")" != "$2" ] && [ "$(tick "$1")" != none ] && return 0
    sleep 0.1
  done
  return 1
}

make_bundle --out "$T/ticker" \
  'process.args=["/bin/sh","-c","i=0; while :; do i=$((i+1)); echo $i >/out/tick.new; mv /out/tick.new /out/tick; sleep 0.05; done"]'

# ---- pause and resume ---------------------------------------------------------------

id=$(new_id)
start_bg "$id" "$T/ticker"
pid=$(pid_of "$id")
wait_tick_after "$T/ticker" none
ok $? "the ticker runs (its count appears on the host)"

# no_cgroup_refusal WHAT ERR STATUS: the refusal of a rootless command that
# acts on the cgroup: exit 1, one line naming the missing cgroup and the fix.
no_cgroup_refusal ()
{
  is "$3" 1 "rootless, no cgroup: $1 is refused (exit 1)"
  like "$2" "no cgroup.*--cgroup-parent" "... naming the missing cgroup and --cgroup-parent"
  is "$(wc -l <<<"$2")" 1 "... in one line"
}

if [ "$AB_ROOTLESS" = 1 ]; then
  err=$(rt pause "$id" 2>&1)
  no_cgroup_refusal pause "$err" $?
  is "$(state_of "$id")" running "... state still says running"
  before=$(tick "$T/ticker")
  wait_tick_after "$T/ticker" "$before"
  ok $? "... and nothing was frozen: the count goes on moving (seen on the host)"
  err=$(rt resume "$id" 2>&1)
  isnt $? 0 "resume of the running container fails"
  out=$(rt ps --format json "$id")
  ok $? "ps works without a cgroup"
  like "$out" "\\b$pid\\b" "and lists the init"
  rt exec "$id" /bin/abtest true </dev/null >/dev/null 2>&1
  is $? 0 "exec into the container works (it was not paused)"
  rt kill "$id" KILL
  ok $? "SIGKILL is delivered"
  wait_for_status "$id" stopped && wait_gone "$pid"
  ok $? "SIGKILL ends the container (state stopped, process gone on the host)"
  err=$(rt pause "$id" 2>&1)
  isnt $? 0 "pause of a stopped container fails"
  like "$err" 'not running' "the error says the container is not running"
  rt delete "$id"
else
  rt pause "$id"
  ok $? "pause succeeds"
  is "$(state_of "$id")" paused "state says paused"
  before=$(tick "$T/ticker")
  sleep 0.5
  is "$(tick "$T/ticker")" "$before" "while paused the count does not move (the processes are frozen)"
  ok "$(alive "$pid"; echo $?)" "the paused init still exists"

  err=$(rt exec "$id" /bin/abtest true 2>&1 </dev/null)
  isnt $? 0 "exec into a paused container fails"
  like "$err" paused "the error says it is paused"
  rt pause "$id" >/dev/null 2>&1
  isnt $? 0 "a second pause fails"

  out=$(rt ps --format json "$id")
  ok $? "ps works on a paused container"
  like "$out" "\\b$pid\\b" "and lists its init"

  # Every freezer of the container's cgroup holds it, read on the host: v1's
  # freezer.state (what runc, podman, containerd and monitoring read on a
  # hybrid host) and v2's cgroup.events; the processes are in the v1
  # refrigerator (state D); ps lists the freezer cgroup's processes.
  fz_want=$(freezer_view "$pid" FROZEN 1)
  is "$(freezer_view "$pid")" "$fz_want" "on the host the container's freezers say frozen ($fz_want)"
  if fzdir=$(cg_dir "$pid" freezer) && [ -e "$fzdir/cgroup.procs" ]; then
    procs=$(sort -n "$fzdir/cgroup.procs")
    is "$(for p in $procs; do sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$p/status"; done | sort -u)" D \
      "... and every process of its v1 freezer cgroup is held in the refrigerator (state D)"
    is "$(rt ps --format json "$id" | tr -d '[] ' | tr ',' '\n' | sort -n)" "$procs" \
      "... ps lists exactly the processes of that cgroup"
  else
    skip "no v1 freezer hierarchy on this host" 2
  fi
  # A signal other than SIGKILL waits for resume: the container stays paused.
  rt kill --all "$id" WINCH
  ok $? "kill --all WINCH to the paused container succeeds"
  is "$(state_of "$id"):$(freezer_view "$pid")" "paused:$fz_want" "... it stays paused: state and freezers agree"

  # exec --ignore-paused: the process is made, frozen with the container,
  # and runs once it is resumed (what the flag is for: runc #3223);
  # meanwhile the container's lock is not held (the resume below would wait
  # for it).  runc 1.1.5 on a hybrid host thaws the whole container instead.
  ipx=
  if agentbox_only 2; then
    rt exec --ignore-paused "$id" /bin/abtest echo thawed </dev/null >"$T/ignore-paused.out" 2>&1 &
    ipx=$!
    sleep 0.5
    ok "$(alive "$ipx"; echo $?)" "exec --ignore-paused into the paused container waits"
    is "$(cat "$T/ignore-paused.out")" "" "... and its program has not run (no output yet)"
  fi

  rt resume "$id"
  ok $? "resume succeeds"
  if [ -n "$ipx" ]; then
    wait "$ipx"
    is "$?:$(cat "$T/ignore-paused.out")" "0:thawed" "... and once resumed the exec's program runs and exits 0"
  else
    skip "agentbox-specific; $AB_RUNTIME_KIND does not promise it" 1
  fi
  is "$(state_of "$id")" running "state says running again"
  is "$(freezer_view "$pid")" "$(freezer_view "$pid" THAWED 0)" "... and every freezer on the host says thawed"
  wait_tick_after "$T/ticker" "$before"
  ok $? "after resume the count moves again"
  rt resume "$id" >/dev/null 2>&1
  isnt $? 0 "resume of a running container fails"

  rt pause "$id"
  ipx=
  if is_agentbox; then
    nprocs () { rt ps --format json "$id" | tr ',' '\n' | grep -c '[0-9]'; }
    before=$(nprocs) # (frozen: the ticker's shell, and a sleep it may have had)
    rt exec --ignore-paused "$id" /bin/abtest echo never </dev/null >"$T/ignore-paused.out" 2>&1 &
    ipx=$!
    # Its frozen process: one more in the container's v1 freezer (ps), or,
    # where clone3 placed it, in an exec cgroup below the v2 one.
    for ((i = 0; i < 400; i++)); do
      [ "$(nprocs)" -gt "$before" ] && break
      d=$(cg_dir "$pid" unified) && cat "$d"/exec-*/cgroup.procs 2>/dev/null | grep -q . && break
      sleep 0.05
    done
  fi
  rt kill "$id" KILL 2>"$T/kill.err"
  ok $? "a paused container can be sent SIGKILL" || diag "$(cat "$T/kill.err")"
  if agentbox_only 2; then
    wait "$ipx"
    is "$?:$(wc -l <"$T/ignore-paused.out")" "255:1" "... an exec --ignore-paused waiting for it ends then (exit 255), one line"
    like "$(cat "$T/ignore-paused.out")" "^agentbox: container \`$id\` was killed while the exec waited for its resume" \
      "... which says why (its program never ran: no output)"
  fi
  wait_for_status "$id" stopped && wait_gone "$pid"
  ok $? "SIGKILL ends a paused container (state stopped, process gone on the host)"
  err=$(rt pause "$id" 2>&1)
  isnt $? 0 "pause of a stopped container fails"
  like "$err" 'not running' "the error says the container is not running"
  err=$(rt resume "$id" 2>&1)
  isnt $? 0 "resume of a stopped container fails"
  rt delete "$id"

  id=$(new_id)
  rm -f "$T/ticker/out/tick"
  start_bg "$id" "$T/ticker"
  pid=$(pid_of "$id")
  wait_tick_after "$T/ticker" none
  rt pause "$id"
  rt delete --force "$id"
  ok $? "delete --force of a paused container succeeds"
  wait_gone "$pid"
  ok $? "its processes are gone on the host"
  rt state "$id" >/dev/null 2>&1
  isnt $? 0 "and it no longer exists"
fi

# ---- pause where the cgroup lives in v2 only -------------------------------------------
# With the host seen as cgroup v2-only, pause freezes through cgroup.freeze
# (there is no v1 freezer): read on the host, cgroup.events says frozen,
# the ticker stops; resume thaws it.  The device filter is then a BPF
# program the kernel must accept for the container to start at all.
if agentbox_only 6 && rootful_only 6 "the v2-only view is a mount namespace of host root's" &&
  with_v2_only true 2>/dev/null; then
  id=$(new_id)
  rm -f "$T/ticker/out/tick"
  rt_v2only create --bundle "$T/ticker" "$id" </dev/null >"$T/ticker/stdout" 2>"$T/ticker/stderr" &&
    rt_v2only start "$id"
  ok $? "in a v2-only view the ticker starts (its device filter loads: runc's leading deny-all rule)"
  [ -s "$T/ticker/stderr" ] && diag "$(head -3 "$T/ticker/stderr")"
  pid=$(rt_v2only state "$id" 2>/dev/null | json_get pid)
  wait_tick_after "$T/ticker" none
  rt_v2only pause "$id"
  v2dir=$(cg_dir "${pid:-0}" unified)
  is "$(rt_v2only state "$id" | json_get status):$(awk '$1 == "frozen" { print $2 }' "$v2dir/cgroup.events" 2>&1)" \
    "paused:1" "v2-only: pause freezes through cgroup.freeze (state paused, cgroup.events frozen 1 on the host)"
  before=$(tick "$T/ticker")
  sleep 0.5
  is "$(tick "$T/ticker")" "$before" "v2-only: while paused the count does not move"
  rt_v2only resume "$id"
  is "$(rt_v2only state "$id" | json_get status):$(awk '$1 == "frozen" { print $2 }' "$v2dir/cgroup.events" 2>&1)" \
    "running:0" "v2-only: resume thaws it (state running, frozen 0)"
  wait_tick_after "$T/ticker" "$before"
  ok $? "v2-only: the count moves again"
  rt_v2only pause "$id" && rt_v2only delete --force "$id"
  ok $? "v2-only: delete --force of the paused container succeeds"
  [ -n "$pid" ] && wait_gone "$pid"
  ok $? "v2-only: its processes are gone on the host"
  rt_v2only delete --force "$id" >/dev/null 2>&1
fi

err=$(rt pause "ab-$$-nosuch" 2>&1)
is $? 1 "pause of a container that does not exist exits 1"
like "$err" 'does not exist|not exist' "the error says it does not exist"

# ---- ps ------------------------------------------------------------------------------

make_bundle --out "$T/daemon" \
  'process.args=["/bin/sh","-c","/bin/abtest setsid-sleeper >/out/pid && exec /bin/abtest sleep-forever"]'
id=$(new_id)
start_bg "$id" "$T/daemon"
pid=$(pid_of "$id")
wait_for_file "$T/daemon/out/pid"
daemon=$(host_pid_of "$pid" "$(sed -n 's/^pid=//p' "$T/daemon/out/pid")")
ok $? "the daemonized grandchild is found on the host (pid ${daemon:-none})"

json=$(rt ps --format json "$id")
ok $? "ps --format json succeeds"
got=$(printf '%s' "$json" | "$PYTHON3" -c 'import json, sys; print(" ".join(str(p) for p in sorted(json.load(sys.stdin))))')
ok $? "its output is a JSON array of pids"
ns=$(readlink "/proc/$pid/ns/pid")
want=$(for p in /proc/[0-9]*; do
  [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] && echo "${p#/proc/}"
done | sort -n | tr '\n' ' ' | sed 's/ $//')
is "$got" "$want" "ps lists exactly the processes the host sees in the container's pid namespace"
like " $got " " $daemon " "including the setsid'd, double-forked grandchild"

table=$(rt ps "$id")
ok $? "ps (table) succeeds"
like "$(head -1 <<<"$table")" 'PID' "the table has a header"
like "$table" "^ *(root +)?$pid " "and a row for the init"

if agentbox_only 2; then
  err=$(rt ps "$id" -ef 2>&1)
  is $? 2 "ps with ps(1) options is a usage error (exit 2)"
  like "$err" 'not supported' "the error says they are not supported"
fi
rt ps --format yaml "$id" >/dev/null 2>&1
isnt $? 0 "ps with an unknown format fails"

rt kill "$id" KILL && wait_for_status "$id" stopped
# As runc: the (empty) cgroup of a stopped container is listed, exit 0.
out=$(rt ps --format json "$id" 2>&1)
# (runc's empty list is `null`, agentbox's `[]`.)
like "$? $(printf '%s' "$out" | tr -d ' \n')" '^0 (\[\]|null)$' "ps --format json of a stopped container lists nothing, exit 0"
rt delete --force "$id"

# ---- update --------------------------------------------------------------------------

make_bundle "$T/limited" 'process.args=["/bin/abtest","sleep-forever"]' \
  'linux.resources={"memory":{"limit":268435456},"pids":{"limit":100}}'
# nproc PID: the RLIMIT_NPROC soft limit of host process PID (its /proc limits).
nproc () { awk '/^Max processes/ { print $3 }' "/proc/$1/limits" 2>/dev/null; }

if [ "$AB_ROOTLESS" = 1 ]; then
  id=$(new_id)
  err=$(rt create --bundle "$T/limited" "$id" </dev/null 2>&1)
  is $? 1 "rootless, no cgroup: a config with memory and pids limits is refused at create (exit 1)"
  like "$err" 'linux\.resources\.memory\.limit: cannot be enforced.*--cgroup-parent' \
    "... naming the limit and --cgroup-parent"
  is "$(wc -l <<<"$err")" 1 "... in one line"
  is "$(state_of "$id")" "" "... and no container is left"
  start_bg "$id" "$T/limited" --accept-degraded
  ok $? "with --accept-degraded it runs"
  pid=$(pid_of "$id")
  is "$(nproc "$pid")" 100 "... pids.limit kept as RLIMIT_NPROC 100 (the init's limits, read on the host)"
  err=$(rt update --memory 64M "$id" 2>&1)
  no_cgroup_refusal "update --memory" "$err" $?
  err=$(rt update --pids-limit 7 "$id" 2>&1)
  no_cgroup_refusal "update --pids-limit" "$err" $?
  err=$(printf '{"pids":{"limit":12}}' | rt update --resources - "$id" 2>&1)
  no_cgroup_refusal "update --resources -" "$err" $?
  printf '{"pids":{"limit":20}}' >"$T/res.json"
  rt update -r "$T/res.json" "$id" >/dev/null 2>&1
  is $? 1 "update -r FILE is refused too"
  is "$(nproc "$pid"):$(state_of "$id")" 100:running "the refused updates changed nothing: RLIMIT_NPROC 100, still running"
else
  id=$(new_id)
  start_bg "$id" "$T/limited"
  pid=$(pid_of "$id")
  is "$(cg_read "$pid" memory memory.limit_in_bytes memory.max)" 268435456 "the memory limit of config.json is in place"
  is "$(cg_read "$pid" pids pids.max pids.max)" 100 "the pids limit of config.json is in place"

  rt update --memory 64M "$id"
  ok $? "update --memory 64M succeeds"
  is "$(cg_read "$pid" memory memory.limit_in_bytes memory.max)" 67108864 "the cgroup's memory limit is now 64 MiB"

  rt update --pids-limit 7 "$id"
  ok $? "update --pids-limit 7 succeeds"
  is "$(cg_read "$pid" pids pids.max pids.max)" 7 "pids.max is now 7"
  # The container has one process; exec adds one; the fork bomb gets the rest.
  out=$(rt exec "$id" /bin/abtest forkbomb 50 </dev/null 2>&1)
  like "$out" '^forks=[1-5]$' "the kernel holds a fork bomb at the new limit (${out%%$'\n'*})"
  like "$out" '^errno=EAGAIN$' "fork fails with EAGAIN"

  printf '{"pids":{"limit":12},"memory":{"limit":100663296}}' | rt update --resources - "$id"
  ok $? "update --resources - (a LinuxResources document on stdin) succeeds"
  is "$(cg_read "$pid" pids pids.max pids.max)" 12 "pids.max is 12"
  is "$(cg_read "$pid" memory memory.limit_in_bytes memory.max)" 100663296 "the memory limit is 96 MiB"

  # --cpu-idle and --cpu-burst (runc 1.2), where the host's cpu controller has them
  upd_help=$(rt update --help 2>&1)
  if [[ $upd_help == *--cpu-idle* ]] && [ -n "$(cg_read "$pid" cpu cpu.idle cpu.idle | grep -v '^no ')" ]; then
    rt update --cpu-idle 1 "$id"
    is "$?:$(cg_read "$pid" cpu cpu.idle cpu.idle)" 0:1 "update --cpu-idle 1 sets the cgroup's cpu.idle (SCHED_IDLE)"
  else
    skip "no cpu.idle for the container's cgroup on this host, or no --cpu-idle in $AB_RUNTIME_KIND" 1
  fi
  if [[ $upd_help == *--cpu-burst* ]] && [ -n "$(cg_read "$pid" cpu cpu.cfs_burst_us cpu.max.burst | grep -v '^no ')" ]; then
    rt update --cpu-quota 50000 --cpu-period 100000 --cpu-burst 20000 "$id"
    is "$?:$(cg_read "$pid" cpu cpu.cfs_burst_us cpu.max.burst)" 0:20000 "update --cpu-burst 20000 sets the cgroup's burst"
  else
    skip "no CPU burst for the container's cgroup on this host, or no --cpu-burst in $AB_RUNTIME_KIND" 1
  fi

  printf '{"pids":{"limit":20}}' >"$T/res.json"
  rt update -r "$T/res.json" "$id"
  ok $? "update -r FILE succeeds"
  is "$(cg_read "$pid" pids pids.max pids.max)" 20 "pids.max is 20"

  printf '{"memory":{"limit":100663296,"swap":100663296}}' | rt update --resources - "$id"
  ok $? "update sets a memory limit with a swap limit"
  rt update --memory -1 "$id"
  ok $? "update --memory -1 then lifts the limit, the swap limit with it (as runc)"
  like "$(cg_read "$pid" memory memory.limit_in_bytes memory.max)" '^(max|9223372036854771712)$' \
    "... and the cgroup's memory limit is unlimited"
fi

err=$(printf '{"memory":{"limit":"lots"}}' | rt update --resources - "$id" 2>&1)
is $? 1 "a malformed document fails with exit 1"
if is_agentbox; then
  like "$err" 'memory\.limit' "the error names the field (memory.limit)"
  [ "$(wc -l <<<"$err")" = 1 ]
  ok $? "in one line"
  err=$(printf '{"pids":' | rt update --resources - "$id" 2>&1)
  is $? 1 "truncated JSON fails with exit 1"
  err=$(rt update --memory lots "$id" 2>&1)
  is $? 2 "update --memory with a non-size is a usage error (exit 2)"
  like "$err" '--memory' "the error names the option"
  rt update "$id" >/dev/null 2>&1
  is $? 2 "update with nothing to change is a usage error"
  rt update --resources "$T/res.json" --memory 1G "$id" >/dev/null 2>&1
  is $? 2 "--resources together with a limit option is a usage error"
  err=$(rt update --kernel-memory 1G "$id" 2>&1)
  is $? 2 "--kernel-memory is refused as a usage error"
  like "$err" 'kernel-memory' "naming the option"
else
  skip "agentbox's messages" 9
fi
if [ "$AB_ROOTLESS" = 1 ]; then
  is "$(nproc "$pid")" 100 "refused updates leave RLIMIT_NPROC as it was"
else
  is "$(cg_read "$pid" pids pids.max pids.max)" 20 "refused updates leave pids.max as it was"
  like "$(cg_read "$pid" memory memory.limit_in_bytes memory.max)" '^(max|9223372036854771712)$' "and the memory limit"
fi

rt kill "$id" KILL && wait_for_status "$id" stopped
err=$(rt update --pids-limit 30 "$id" 2>&1)
isnt $? 0 "update of a stopped container fails"
rt delete "$id"
rt update --pids-limit 30 "ab-$$-nosuch" >/dev/null 2>&1
isnt $? 0 "update of a container that does not exist fails"

done_testing

#!/bin/bash
# `events` (runc's): --stats prints one JSON line whose counters are the
# container's cgroup's, checked against what the host sees (the processes
# in the container's pid namespace, its cgroup's CPU time, OOM kills and a
# direct write's bytes); without --stats a stats line comes every
# --interval, an `oom` line for each OOM kill as it happens (well before
# the next interval), and the command ends by itself, status 0, when the
# container stops.  A missing or unknown id and a stopped container are
# refused in one line, as `state` refuses an unknown id.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start state kill delete exec events
plan_later

rootful_only 1 "events reads the cgroup a rootless container may not have" || { done_testing; exit; }

# nprocs PID: the processes the host sees in the pid namespace of PID.
nprocs ()
{
  local ns p n=0
  ns=$(readlink "/proc/$1/ns/pid") || { echo 0; return; }
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] && n=$((n + 1))
  done
  echo $n
}

# host_cpu_ns PID [unified]: the CPU time of PID's cgroup read on the host,
# ns: v1 cpuacct.usage, else (or with `unified`) v2 cpu.stat's usage_usec.
host_cpu_ns ()
{
  local d
  if [ -z "${2:-}" ] && [ -n "$(cg_mount cpuacct)" ] && d=$(cg_dir "$1" cpuacct) &&
    [ -e "$d/cpuacct.usage" ]; then
    cat "$d/cpuacct.usage"
  elif d=$(cg_dir "$1" unified) && [ -e "$d/cpu.stat" ]; then
    echo $(($(awk '$1 == "usage_usec" { print $2 }' "$d/cpu.stat") * 1000))
  else
    echo none
  fi
}

# host_oom_kills PID: the OOM kills of PID's memory cgroup, on the host.
host_oom_kills ()
{
  local d
  if [ -n "$(cg_mount memory)" ] && d=$(cg_dir "$1" memory); then
    awk '$1 == "oom_kill" { print $2 }' "$d/memory.oom_control"
  elif d=$(cg_dir "$1" unified); then
    awk '$1 == "oom_kill" { print $2 }' "$d/memory.events"
  fi
}

# ev_summary FILE ID: "stats=N oom=M other=K" over FILE's lines, each a
# JSON object of runc's event shape for ID (anything else is `other`).
ev_summary ()
{
  "$PYTHON3" -c '
import json, sys
n = {"stats": 0, "oom": 0, "other": 0}
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
        ok = isinstance(e, dict) and e.get("id") == sys.argv[2]
        ok = ok and (e.get("type") == "oom" and set(e) == {"type", "id"}
                     or e.get("type") == "stats" and isinstance(e.get("data"), dict))
        n[e["type"] if ok else "other"] += 1
    except (ValueError, KeyError):
        n["other"] += 1
print("stats=%d oom=%d other=%d" % (n["stats"], n["oom"], n["other"]))' "$1" "$2"
}

# wait_lines FILE N [SECS]: until FILE has N lines.
wait_lines ()
{
  local i
  for ((i = 0; i < ${3:-10} * 10; i++)); do
    [ "$(wc -l <"$1")" -ge "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

# wait_exit PID [SECS]: until the background job PID ended; $ev_status is
# its status, or "running" if it did not (it is then killed).  (Not in a
# command substitution: only this shell can wait for its job.)
wait_exit ()
{
  wait_gone "$1" "${2:-10}" || { kill "$1" 2>/dev/null; wait "$1"; ev_status=running; return; }
  wait "$1"
  ev_status=$?
}

# ---- refusals -------------------------------------------------------------------------

err=$(rt events 2>&1)
st=$?
isnt $st 0 "events without an id fails"
if agentbox_only 2; then
  is "$(wc -l <<<"$err")" 1 "... in one line (runc prints its usage)"
  is $st 2 "... as a usage error (exit 2)"
fi
err=$(rt events --stats "ab-$$-nosuch" 2>&1)
st=$?
serr=$(rt state "ab-$$-nosuch" 2>&1)
sst=$?
is "$st" "$sst" "events of an unknown id exits as state does ($st)"
isnt "$st" 0 "... which is a failure"
is "$(wc -l <<<"$err")" 1 "... in one line"
is "${err//events/X}" "${serr//state/X}" "... the same line as state's (but for the command's name)"

# ---- --stats of a running container ---------------------------------------------------

make_bundle --out "$T/b" 'process.args=["/bin/abtest","sleep-forever"]' \
  'linux.resources={"memory":{"limit":134217728},"pids":{"limit":64}}'
ln -s busybox "$T/b/rootfs/bin/dd"
id=$(new_id)
start_bg "$id" "$T/b"
pid=$(pid_of "$id")

out=$(rt events --stats "$id")
is $? 0 "events --stats of a running container exits 0"
is "$(wc -l <<<"$out")" 1 "... it prints one line"
printf '%s\n' "$out" >"$T/one.out"
is "$(ev_summary "$T/one.out" "$id")" "stats=1 oom=0 other=0" "... a JSON stats event for the container's id"
is "$(json_get data.pids.current <<<"$out")" "$(nprocs "$pid")" \
  "pids.current is the number of processes the host sees in the container ($(nprocs "$pid"))"
is "$(json_get data.pids.limit <<<"$out")" 64 "pids.limit is the config's"
is "$(json_get data.memory.usage.limit <<<"$out")" 134217728 "memory.usage.limit is the config's"
usage=$(json_get data.memory.usage.usage <<<"$out")
[ "${usage:-0}" -gt 0 ] && [ "$usage" -le 134217728 ]
ok $? "memory.usage.usage is above 0 and within the limit ($usage)"

rt exec --detach "$id" /bin/sleep 1000 </dev/null >/dev/null 2>&1 &&
  rt exec --detach "$id" /bin/sleep 1000 </dev/null >/dev/null 2>&1
ok $? "two sleeps are started in the container"
n=$(nprocs "$pid")
out=$(rt events --stats "$id")
is "$(json_get data.pids.current <<<"$out"):$n" "3:3" "pids.current follows: 3, as the host counts them"

# CPU: what events reports lies between two readings of the cgroup's
# counter on the host, and grows by the busy loop's time.
before=$(rt events --stats "$id" | json_get data.cpu.usage.total)
rt exec "$id" /bin/sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done' </dev/null
h1=$(host_cpu_ns "$pid")
after=$(rt events --stats "$id" | json_get data.cpu.usage.total)
h2=$(host_cpu_ns "$pid")
[ "${after:-0}" -ge "$h1" ] && [ "$after" -le "$h2" ]
ok $? "cpu.usage.total is the cgroup's CPU time read on the host ($h1 <= $after <= $h2 ns)"
[ "${after:-0}" -ge $((${before:-0} + 50000000)) ]
ok $? "... and grows by the busy loop's time (${before:-none} -> ${after:-none} ns)"

# A direct write of 1 MiB to /out, a directory of the test directory on
# the host: the disk's bytes grow (v1 blkio, v2 io.stat), if a block
# device holds the test directory (st_dev's major is not 0).
dev=$(stat -c %d "$T/b/out")
if [ $((dev >> 8)) -ne 0 ]; then
  rt exec "$id" /bin/dd if=/dev/zero of=/out/direct bs=64k count=16 oflag=direct </dev/null >/dev/null 2>&1
  got=$(rt events --stats "$id" | "$PYTHON3" -c '
import json, sys
d = json.load(sys.stdin)["data"]["blkio"].get("ioServiceBytesRecursive", [])
major = int(sys.argv[1])
print(sum(e.get("value", 0) for e in d if e.get("op") == "Write" and e.get("major", 0) == major))' \
    $(((dev >> 8) & 0xfff)))
  [ "${got:-0}" -ge 1048576 ]
  ok $? "a direct 1 MiB write shows in blkio's ioServiceBytesRecursive Write of the disk ($got bytes)"
else
  skip "the test directory is on no block device"
fi

rt pause "$id"
out=$(rt events --stats "$id")
is "$?:$(json_get data.pids.current <<<"$out")" "0:3" \
  "a paused container's stats are printed (pids.current 3)"
rt resume "$id"

# ---- streaming -------------------------------------------------------------------------

t0=$(date +%s%N)
rt events --interval 200ms "$id" >"$T/stream.out" 2>"$T/stream.err" &
evpid=$!
wait_lines "$T/stream.out" 3
ok $? "with --interval 200ms, stats lines come"
n=$(wc -l <"$T/stream.out")
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$n" -le $((ms / 200)) ]
ok $? "... no more often than every 200 ms ($n lines in $ms ms)"
rt kill "$id" KILL
# (runc on cgroup v1 goes on until the cgroup is removed, at delete.)
if agentbox_only 3; then
  wait_exit "$evpid"
  is "$ev_status" 0 "when the container is killed, events ends by itself with status 0"
  like "$(ev_summary "$T/stream.out" "$id")" '^stats=[0-9]+ oom=0 other=0$' \
    "... every line it printed was a stats event"
  is "$(cat "$T/stream.err")" "" "... and nothing went to stderr"
fi
wait_for_status "$id" stopped

err=$(rt events --stats "$id" 2>&1)
st=$?
isnt $st 0 "events --stats of a stopped container fails"
like "$err" 'not running' "... saying it is not running"
is "$(wc -l <<<"$err")" 1 "... in one line"
err=$(rt events --interval 200ms "$id" 2>&1)
isnt $? 0 "streaming events of a stopped container fails at once"
rt delete "$id"
is_agentbox || wait_exit "$evpid"

if agentbox_only 3; then
  id=$(new_id)
  rt create --bundle "$T/b" "$id" </dev/null >/dev/null 2>&1
  out=$(rt events --stats "$id")
  is "$?:$(json_get data.pids.current <<<"$out")" "0:$(nprocs "$(pid_of "$id")")" \
    "a created container's stats are printed (its waiting init counted)"
  rt events --interval 5x "$id" >/dev/null 2>&1
  is $? 2 "--interval that is no duration is a usage error (exit 2)"
  rt events --interval 0s "$id" >/dev/null 2>&1
  is $? 2 "--interval 0s is refused (exit 2)"
  rt delete --force "$id"
fi

# ---- OOM ----------------------------------------------------------------------------------
# A 10 s interval: the oom line must come from the kernel's notification,
# not from a stats round.

make_bundle "$T/oom" 'process.args=["/bin/abtest","sleep-forever"]' \
  'linux.resources={"memory":{"limit":33554432}}'
id=$(new_id)
start_bg "$id" "$T/oom"
pid=$(pid_of "$id")
rt events --interval 10s "$id" >"$T/oom.out" 2>"$T/oom.err" &
evpid=$!
# The hog starts once events waits in its poll (it counts the kills it
# reports from the count it read before; a fixed pause could end first).
polling ()
{
  local p
  for p in $(pgrep -f -- "events --interval 10s $id\$"); do # the runtime, and the timeout of rt
    grep -q poll "/proc/$p/wchan" 2>/dev/null && return 0
  done
  return 1
}
for ((i = 0; i < 200; i++)); do
  polling && break
  sleep 0.1
done
rt exec "$id" /bin/abtest memhog 256 </dev/null >/dev/null 2>&1
st=$?
kills=$(host_oom_kills "$pid")
if [ "$st" = 137 ] && [ "${kills:-0}" -ge 1 ]; then
  ok 0 "a memory hog in a 32 MiB container is OOM-killed (the host counts $kills kill)"
  wait_lines "$T/oom.out" 1 3
  is "$(ev_summary "$T/oom.out" "$id")" "stats=0 oom=$kills other=0" \
    "... events prints one {\"type\":\"oom\"} line per kill within seconds, before any stats round"
else
  skip "the memory hog was not OOM-killed here (exit $st, kills ${kills:-none})" 2
fi
rt delete --force "$id"
wait_exit "$evpid"
is "$ev_status" 0 "delete --force while events streams: events ends with status 0 (it held no lock)"

# ---- where the cgroup lives in v2 only ----------------------------------------------------
# With the host seen as cgroup v2-only (no controller there on a hybrid
# host): the CPU time comes from cpu.stat, pids.current counts the
# cgroup's processes.

if agentbox_only 4 && with_v2_only true 2>/dev/null; then
  make_bundle "$T/v2" 'process.args=["/bin/sh","-c","/bin/sleep 1000 & exec /bin/abtest sleep-forever"]'
  id=$(new_id)
  rt_v2only create --bundle "$T/v2" "$id" </dev/null >/dev/null 2>&1 && rt_v2only start "$id"
  pid=$(rt_v2only state "$id" 2>/dev/null | json_get pid)
  for ((i = 0; i < 100; i++)); do [ "$(nprocs "${pid:-0}")" -ge 2 ] && break; sleep 0.1; done
  h1=$(host_cpu_ns "${pid:-0}" unified)
  out=$(rt_v2only events --stats "$id")
  h2=$(host_cpu_ns "${pid:-0}" unified)
  total=$(json_get data.cpu.usage.total <<<"$out")
  [ "${total:-0}" -gt 0 ] && [ "$total" -ge "$h1" ] && [ "$total" -le "$h2" ]
  ok $? "v2-only: cpu.usage.total is cpu.stat's usage_usec x 1000 ($h1 <= $total <= $h2)"
  is "$(json_get data.pids.current <<<"$out")" "$(nprocs "${pid:-0}")" \
    "v2-only: pids.current counts the processes"
  rt_v2only events --interval 200ms "$id" >"$T/v2.out" 2>&1 &
  evpid=$!
  wait_lines "$T/v2.out" 2
  ok $? "v2-only: stats lines stream"
  rt_v2only kill "$id" KILL
  wait_exit "$evpid"
  is "$ev_status" 0 "v2-only: and end with status 0 when the container is killed"
  rt_v2only delete --force "$id" >/dev/null 2>&1
fi

done_testing

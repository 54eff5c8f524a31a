#!/bin/bash
# Cgroups, read from the host's cgroup filesystems while the container runs:
# limits land in the container's own cgroup files, the container's cgroup is
# below the test's own cgroup (relative or missing cgroupsPath, or an
# absolute one inside with_own_cgroup_root), memory and pids limits hold
# (OOM kill inside, a fork bomb stops at pids.max while the host still
# forks), and after delete no cgroup directory and no process is left, not
# even a setsid'd double-forked grandchild.
#
# The cgroup of a process is found with lib.sh's cg_dir / cg_read, so the
# checks hold on v1, hybrid and v2 hosts.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run state kill delete
plan_later

# cg_left ID: cgroup directories anywhere whose name contains ID.
cg_left () { find /sys/fs/cgroup -type d -name "*$1*" 2>/dev/null; }

# Every hierarchy PID is in, with its path: "controllers:path" lines.
cg_lines () { cut -d: -f2- "/proc/$1/cgroup" 2>/dev/null; }

sleeper='process.args=["/bin/abtest","sleep-forever"]'

# ---- limits land in the container's cgroup files --------------------------------------------------

make_bundle "$T/limits" "$sleeper" \
  'linux.resources.memory={"limit":134217728,"reservation":67108864}' \
  'linux.resources.cpu={"shares":512,"quota":50000,"period":100000,"cpus":"0"}' \
  'linux.resources.pids={"limit":77}'
id=$(new_id)
start_bg "$id" "$T/limits"
ok $? "a container with memory, cpu and pids limits starts"
pid=$(pid_of "$id")
is "$(cg_read "$pid" memory memory.limit_in_bytes memory.max)" 134217728 "memory.limit 128 MiB is in the container's memory cgroup"
is "$(cg_read "$pid" memory memory.soft_limit_in_bytes memory.low)" 67108864 "memory.reservation 64 MiB is its soft limit"
is "$(cg_read "$pid" pids pids.max pids.max)" 77 "pids.limit 77 is pids.max"
if [ -n "$(cg_mount cpu)" ]; then
  is "$(cg_read "$pid" cpu cpu.shares cpu.weight)" 512 "cpu.shares 512 is in the container's cpu cgroup"
  is "$(cg_read "$pid" cpu cpu.cfs_quota_us cpu.max):$(cg_read "$pid" cpu cpu.cfs_period_us cpu.max)" 50000:100000 \
    "cpu quota 50000 per period 100000 are cfs_quota_us and cfs_period_us"
else
  is "$(cg_read "$pid" cpu cpu.max cpu.max)" "50000 100000" "cpu quota 50000 per period 100000 are cpu.max"
  skip "cpu.shares has no exact v2 file"
fi
is "$(cg_read "$pid" cpuset cpuset.cpus cpuset.cpus)" 0 "cpus \"0\" is cpuset.cpus"

# ---- where the cgroup is ------------------------------------------------------------------------------

# under_own PID: every hierarchy's path of PID is ours or below it (a
# named hierarchy without controllers, name=systemd, may keep the
# container in our own cgroup), and those of memory and pids (and the
# unified one, if any) are strictly below.  Prints the first offender.
under_own ()
{
  local ctl path own
  while IFS=: read -r ctl path; do
    own=$(awk -F: -v c="$ctl" '{ x = $2 } x == c { print $3; exit }' /proc/self/cgroup)
    [ -n "$own" ] || { echo "$ctl: not ours"; return 1; }
    [ "$own" = / ] && own=""
    case $ctl:$path in
      *:"$own"/?*) ;;
      name=*:"${own:-/}") ;;
      *) echo "$ctl:$path (ours: ${own:-/})"; return 1 ;;
    esac
  done < <(cg_lines "$1")
}
out=$(under_own "$pid")
ok $? "without cgroupsPath the container's cgroup is below the test's own in every hierarchy ${out:+($out)}"
like "$(cg_path "$pid" memory)" "^$(cg_path $$ memory)/.*$id" "... e.g. memory: below $(cg_path $$ memory), named after the container"
# The init and an exec'd process move themselves into their v1 cgroups (a
# write of "0" to each `tasks` file: runtime/cgroup/cgroup-state.c): seen from the
# host, the exec'd process is in the init's cgroup in every hierarchy.
rt exec "$id" /bin/abtest sleep-forever </dev/null >/dev/null 2>&1 &
xbg=$!
xpid=""
for ((i = 0; i < 100; i++)); do
  for p in $(cat "$(cg_dir "$pid" pids)/cgroup.procs" 2>/dev/null); do
    [ "$p" != "$pid" ] && xpid=$p
  done
  [ -n "$xpid" ] && break
  sleep 0.05
done
# (in the unified hierarchy a foreground exec gets a cgroup of its own
# below the container's, to be killed by)
is "$(cg_lines "${xpid:-0}" | grep -v '^:')" "$(cg_lines "$pid" | grep -v '^:')" \
  "an exec'd process (host pid ${xpid:-none}) is in the init's cgroup in every v1 hierarchy"
like "$(cg_lines "${xpid:-0}" | grep '^:')" "^:$(cg_lines "$pid" | sed -n 's/^://p')(/|\$)" \
  "... and in the unified one at or below it"
kill "$xbg" 2>/dev/null
wait "$xbg" 2>/dev/null

# Cgroups below the container's own (a payload with a delegated cgroup makes
# them): delete removes them too, deepest first, before its own.
made=0
for c in memory pids; do
  d=$(cg_dir "$pid" "$c") && mkdir -p "$d/made-inside/deeper" && made=$((made + 1))
done
is "$made" 2 "cgroups two levels below the container's memory and pids cgroups can be made"
rt delete --force "$id"
wait_gone "$pid"
is "$(cg_left "$id")" "" "after delete no cgroup directory of the container is left in any hierarchy"

make_bundle "$T/rel" "$sleeper" "linux.cgroupsPath:=abtest-rel/$$"
id=$(new_id)
start_bg "$id" "$T/rel"
pid=$(pid_of "$id")
out=$(under_own "$pid")
ok $? "a relative cgroupsPath is below the test's own cgroup in every hierarchy ${out:+($out)}"
like "$(cg_path "$pid" pids)" "/abtest-rel/$$\$" "... at the relative path (pids: $(cg_path "$pid" pids))"
rt delete --force "$id"
wait_gone "$pid"
is "$(find /sys/fs/cgroup -type d -path "*abtest-rel/$$" 2>/dev/null)" "" "after delete the relative cgroup is gone"

# An absolute cgroupsPath is taken from each hierarchy's root: inside
# with_own_cgroup_root that root is our own cgroup, so it lands below it.
make_bundle "$T/abs" "$sleeper" "linux.cgroupsPath:=/abtest-abs-$$"
id=$(new_id)
AB_CGROUP_WRAP=1 start_bg "$id" "$T/abs"
ok $? "with its own cgroup root, a container with an absolute cgroupsPath starts"
pid=$(AB_CGROUP_WRAP=1 pid_of "$id")
out=$(under_own "$pid")
ok $? "the absolute cgroupsPath lands below the test's own cgroup in every hierarchy ${out:+($out)}"
like "$(cg_path "$pid" memory)" "^$(cg_path $$ memory)/abtest-abs-$$\$" "... memory: $(cg_path "$pid" memory)"
AB_CGROUP_WRAP=1 rt delete --force "$id"
ok $? "delete --force in the same view succeeds"
wait_gone "$pid"
is "$(find /sys/fs/cgroup -type d -name "abtest-abs-$$" 2>/dev/null)" "" "after delete the absolute cgroup is gone everywhere"

# ---- memory: OOM kill inside ---------------------------------------------------------------------------

make_bundle "$T/oom" 'process.args=["/bin/abtest","memhog","256"]' \
  'linux.resources.memory={"limit":33554432,"swap":33554432}'
id=$(new_id)
if is_agentbox; then
  rt run --record "$T/oom/record.json" --bundle "$T/oom" "$id" </dev/null >/dev/null 2>&1
else
  rt run --bundle "$T/oom" "$id" </dev/null >/dev/null 2>&1
fi
is $? 137 "a process that touches 256 MiB under a 32 MiB limit is OOM-killed: run exits 137"
if agentbox_only 2; then
  is "$(json_get result.structuredContent.reason <"$T/oom/record.json")" oom_killed "the record's reason is oom_killed"
  like "$(json_get result.structuredContent.limitsHit <"$T/oom/record.json")" '"memory"' "... and memory is among the limits hit"
fi
is "$(cg_left "$id")" "" "the OOM-killed container's cgroups are gone after run"

# ---- pids: a fork bomb --------------------------------------------------------------------------------

make_bundle --out "$T/bomb" 'linux.resources.pids={"limit":32}' \
  'process.args=["/bin/sh","-c","/bin/abtest forkbomb >/out/bomb.tmp; mv /out/bomb.tmp /out/bomb; exec /bin/abtest sleep-forever"]'
id=$(new_id)
start_bg "$id" "$T/bomb"
wait_for_file "$T/bomb/out/bomb" 30
pid=$(pid_of "$id")
bomb=$(cat "$T/bomb/out/bomb" 2>/dev/null)
like "$bomb" '^errno=EAGAIN$' "the fork bomb's fork fails with EAGAIN"
# 32 tasks when the fork failed: the shell, the bomb and its 30 children
is "$(sed -n 's/^forks=//p' <<<"$bomb")" 30 "... after exactly 30 forks: with the shell and the bomb, 32 tasks, the limit"
current=$(cg_read "$pid" pids pids.current pids.current)
[[ $current =~ ^[0-9]+$ ]] && [ "$current" -le 32 ] && [ "$current" -ge 31 ]
ok $? "the host sees pids.current $current, within the limit of 32 (the bomb itself has exited)"
like "$(cg_read "$pid" pids pids.events pids.events)" '^max [1-9]' "pids.events counts the refused forks"
forked=0
for i in $(seq 1 50); do
  /bin/true &
  wait $! && forked=$((forked + 1))
done
is "$forked" 50 "the host still forks and runs 50 processes while the bomb sits at its limit"
procs=$(cat "$(cg_dir "$pid" pids)/cgroup.procs" 2>/dev/null | wc -l)
rt delete --force "$id"
wait_gone "$pid"
ok $? "delete --force ends the bomb's init"
left=0
rootid=$(stat -c %d:%i "$T/bomb/rootfs")
for p in /proc/[0-9]*; do
  [ "$(stat -L -c %d:%i "$p/root" 2>/dev/null)" = "$rootid" ] && left=$((left + 1))
done
[ "$procs" -ge 31 ] && [ $left = 0 ]
ok $? "... and all of its $procs processes (none has its root in the rootfs now)"
is "$(cg_left "$id")" "" "and its cgroups are gone"

# ---- daemonized grandchildren, hardened profile ----------------------------------------------------------
# Under the user-namespaced profile with a cgroup namespace, the setsid'd
# double-forked grandchild of the init must still be found and ended, with
# and without a pid namespace of its own.

if agentbox_only 16; then
  AB_BASE_CONFIG=runtime
  rm -f "$T/base-config.json"
  daemon_args='process.args=["/bin/sh","-c","/bin/abtest setsid-sleeper >/out/pid && exec /bin/abtest sleep-forever"]'
  make_bundle --out "$T/daemon" "$daemon_args"
  # Without a pid namespace of its own the container's user namespace does
  # not own the pid namespace, so no /proc can be mounted (nor masked).
  make_bundle --out "$T/daemon-hostpid" "$daemon_args" 'linux.namespaces-=pid' '!mounts[destination=/proc]' \
    'linux.maskedPaths=[]' 'linux.readonlyPaths=[]'
  chmod 0777 "$T/daemon/out" "$T/daemon-hostpid/out"

  start_daemon ()
  {
    rm -f "$2/out/pid"
    start_bg "$1" "$2"
    wait_for_file "$2/out/pid"
    init=$(pid_of "$1")
    grandchild=$(sed -n 's/^pid=//p' "$2/out/pid")
    if [ "$(readlink "/proc/$init/ns/pid")" != "$(readlink /proc/self/ns/pid)" ]; then
      grandchild=$(host_pid_of "$init" "$grandchild")
    fi
  }

  for variant in daemon daemon-hostpid; do
    case $variant in
      daemon) where="hardened, own pid namespace" ;;
      *) where="hardened, host pid namespace" ;;
    esac
    id=$(new_id)
    start_daemon "$id" "$T/$variant"
    alive "$grandchild" && [ "$(cg_path "$grandchild" pids)" = "$(cg_path "$init" pids)" ]
    ok $? "$where: the setsid'd grandchild (host pid ${grandchild:-none}) runs in the container's cgroup"
    [ "$(ps -o sid= -p "$grandchild" | tr -d ' ')" != "$(ps -o sid= -p "$init" | tr -d ' ')" ]
    ok $? "$where: ... in a session of its own"
    rt delete --force "$id"
    wait_gone "$init" && wait_gone "$grandchild"
    ok $? "$where: delete --force ends the init and the grandchild"
    is "$(cg_left "$id")" "" "$where: ... and removes the container's cgroups"

    id=$(new_id)
    start_daemon "$id" "$T/$variant"
    rt kill --all "$id" KILL
    wait_gone "$init" && wait_gone "$grandchild"
    ok $? "$where: kill --all KILL ends the init and the grandchild (host pid ${grandchild:-none})"
    rt delete "$id"
    is "$(cg_left "$id")" "" "$where: delete after kill --all leaves no cgroup"
  done

  # A foreground run is the subreaper of a container without a pid
  # namespace: the grandchild its init orphaned is the run's.  With
  # --no-subreaper (runc) it goes to the host's reaper; the container's
  # cgroup still ends it with the run.
  for flag in "" --no-subreaper; do
    id=$(new_id)
    rm -f "$T/daemon-hostpid/out/pid"
    rt run $flag --bundle "$T/daemon-hostpid" "$id" </dev/null >/dev/null 2>&1 &
    runbg=$!
    wait_for_file "$T/daemon-hostpid/out/pid"
    grandchild=$(sed -n 's/^pid=//p' "$T/daemon-hostpid/out/pid")
    parent=$(awk '$1 == "PPid:" { print $2 }' "/proc/$grandchild/status" 2>/dev/null)
    reaper=$(tr '\0' ' ' <"/proc/${parent:-0}/cmdline" 2>/dev/null)
    if [ -z "$flag" ]; then
      like "$reaper" " run .*$id" "run: the grandchild the init orphaned is the foreground run's (its subreaper)"
    else
      is "$(grep -c -- "$id" <<<"$reaper")" 0 "run --no-subreaper: ... it is not the run's (its parent: ${reaper:-none})"
    fi
    rt kill "$id" KILL
    wait "$runbg"
    wait_gone "$grandchild"
    ok $? "... and it ends with the run${flag:+ $flag} (the container's cgroup)"
  done
fi



# ---- an exec killed with SIGKILL ----------------------------------------------------------------

# A foreground exec runs in a cgroup of its own below the container's v2
# cgroup and removes it at its end; killed with SIGKILL it cannot.  The
# next exec of the container removes what it left (a directory whose
# exec holds no lock on it, made more than a second before), and leaves
# a running exec's alone.
make_bundle "$T/execkill" "$sleeper"
id=$(new_id)
start_bg "$id" "$T/execkill"
pid=$(pid_of "$id")
if d=$(cg_dir "$pid" unified) && [ -d "$d" ]; then
  execs () { find "$d" -mindepth 1 -maxdepth 1 -type d -name 'exec-*' | wc -l; }
  # (the runtime itself, not rt's wrappers: $! is the process killed)
  "$RUNTIME" --root "$AB_STATE" exec "$id" /bin/abtest sleep-forever </dev/null >/dev/null 2>&1 &
  killed=$!
  for ((i = 0; i < 200; i++)); do [ "$(execs)" = 1 ] && break; sleep 0.05; done
  "$RUNTIME" --root "$AB_STATE" exec "$id" /bin/abtest sleep-forever </dev/null >/dev/null 2>&1 &
  running=$!
  for ((i = 0; i < 200; i++)); do [ "$(execs)" = 2 ] && break; sleep 0.05; done
  is "$(execs)" 2 "two foreground execs, each in a cgroup of its own below the container's"
  kill -KILL "$killed"
  wait "$killed" 2>/dev/null
  sleep 1.2 # the sweep leaves alone a directory made less than a second ago
  is "$(execs)" 2 "an exec killed with SIGKILL leaves its cgroup"
  rt exec "$id" /bin/abtest true </dev/null >/dev/null 2>&1
  is "$?:$(execs)" "0:1" "the next exec removes it and its own, not the running exec's"
  kill -TERM "$running"
  wait "$running" 2>/dev/null
  is "$(execs)" 0 "the running exec, ended, removes its own"
else
  skip "no unified cgroup for the container: exec runs without a cgroup of its own" 4
fi
rt delete --force "$id"
is "$(cg_left "$id")" "" "delete --force leaves no cgroup"


# ---- exec --cgroup: existing cgroups below the container's (runc) -------------------------------

# The test makes `sub` in every hierarchy of the container (cpuset's with
# its parent's cpus and mems, which v1 needs before a task may join) and
# `other` in the pids one; where each exec'd process landed is read from
# the host.
make_bundle "$T/execcg" "$sleeper"
id=$(new_id)
start_bg "$id" "$T/execcg"
pid=$(pid_of "$id")
# ctl_of LINE: the controller a "controllers:path" line is found by (cg_dir).
ctl_of () { local c=${1%%:*}; c=${c%%,*}; echo "${c:-unified}"; }
made=0
while read -r line; do
  case $line in name=*) continue ;; esac
  d=$(cg_dir "$pid" "$(ctl_of "$line")") && mkdir "$d/sub" && made=$((made + 1)) || continue
  [ -e "$d/cpuset.cpus" ] && cat "$d/cpuset.cpus" >"$d/sub/cpuset.cpus" && cat "$d/cpuset.mems" >"$d/sub/cpuset.mems"
done < <(cg_lines "$pid")
# (a controller names a v1 hierarchy: on a v2-only host there is none)
v1_pids=$(cg_mount pids)
[ -n "$v1_pids" ] && mkdir "$(cg_dir "$pid" pids)/other"
ok "$([ "$made" -ge 1 ]; echo $?)" "the test made \`sub\` in each of the container's $made hierarchies"

# exec_cg ARGS...: exec --detach ARGS, then "controllers:path" of the
# process's cgroups relative to the init's, as the host sees them.
exec_cg ()
{
  local xp
  rm -f "$T/execcg.pid"
  rt exec --detach --pid-file "$T/execcg.pid" "$@" "$id" /bin/abtest sleep-forever </dev/null >/dev/null 2>&1 ||
    return 1
  xp=$(cat "$T/execcg.pid")
  awk -F: 'NR == FNR { base[$1] = $2; next }
    $1 !~ /^name=/ { p = $2; b = base[$1]; if (index(p, b) == 1) p = substr(p, length(b) + 1); printf "%s:%s ", $1, p }' \
    <(cg_lines "$pid") <(cg_lines "$xp")
  kill -9 "$xp"
}
want_sub=$(cg_lines "$pid" | grep -v '^name=' | sed 's/:.*/:\/sub/' | tr '\n' ' ')
is "$(exec_cg --cgroup sub)" "$want_sub" "exec --cgroup sub: the process is in \`sub\` below the container's cgroup in every hierarchy"
want_other=$(sed 's/\(^\|[ ]\)\(pids\):\/sub/\1\2:\/other/' <<<"$want_sub")
if [ -n "$v1_pids" ]; then
  is "$(exec_cg --cgroup pids:other --cgroup sub)" "$want_other" \
    "exec --cgroup pids:other --cgroup sub: \`other\` for the pids hierarchy, \`sub\` for the rest"
else
  skip "no v1 pids hierarchy: a controller-specific --cgroup has nothing to name" 1
fi
rt exec --cgroup sub "$id" /bin/abtest true </dev/null >/dev/null 2>&1
is "$?:$(for d in $(cg_left "$id"); do [ -d "$d/sub" ] && echo "$d"; done | wc -l)" "0:$made" "a foreground exec --cgroup sub exits 0 and leaves every \`sub\` in place"
if agentbox_only 6; then
  for bad in missing ../up bogus:sub; do
    err=$(rt exec --cgroup "$bad" "$id" /bin/abtest true </dev/null 2>&1)
    is "$?:$(wc -l <<<"$err")" "255:1" "exec --cgroup $bad is refused (exit 255) with one line"
  done
  like "$(rt exec --cgroup missing "$id" /bin/abtest true </dev/null 2>&1)" "missing.*is not a cgroup below the container's" \
    "... naming the path that is not there"
  like "$(rt exec --cgroup bogus:sub "$id" /bin/abtest true </dev/null 2>&1)" "no cgroup v1 hierarchy with controller \`bogus\`" \
    "... and the controller no hierarchy holds"
  like "$(rt exec --cgroup pids:other --cgroup pids:sub "$id" /bin/abtest true </dev/null 2>&1)" \
    "$([ -n "$v1_pids" ] && echo "two paths" || echo "no cgroup v1 hierarchy with controller")" \
    "... and two paths for one hierarchy"
fi
rt delete --force "$id"
is "$(cg_left "$id")" "" "delete --force removes the container's cgroups with the sub-cgroups the test made"

done_testing

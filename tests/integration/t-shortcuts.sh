#!/bin/bash
# The safety properties the start-up shortcuts of the performance work touch
# (docs/shortcuts.md lists each shortcut, its property and its test), checked
# from the host.  Each test here fails if its shortcut is wrong.
#   - the child's closes are left to execve while it builds the mount tree:
#     no fd of the host reaches the container, neither while it waits for
#     `start` nor at the execve (which resolves its path with them open);
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run state delete
plan_later

# ---- deferred closes: no host fd reaches the container ----------------------------------------

# A static program the rootfs does not hold, next to it in the bundle: a
# process.args that reaches it through an fd of the runtime ran a host file.
b=$T/fds
make_bundle --out "$b"
install -m 0755 "$ABTEST" "$b/host-only"
climb=$(printf '../%.0s' {1..40})
ran=""
for n in $(seq 3 24); do
  for path in "/proc/self/fd/$n/../host-only" "/proc/self/fd/$n/$climb${b#/}/host-only"; do
    cfg "$b/config.json" "process.args=[\"$path\",\"write\",\"/out/ran\",\"fd $n\"]"
    rt run --bundle "$b" "$(new_id)" </dev/null >/dev/null 2>&1
    st=$?
    [ "$st" = 0 ] || [ -e "$b/out/ran" ] && ran="$ran $n:$st"
    rm -f "$b/out/ran"
  done
done
is "$ran" "" "process.args through /proc/self/fd/N (N = 3..24) never executes a host file (CVE-2024-21626 attack 3a)"

# While it waits for start the init holds only its sockets: nothing a
# process that can read /proc/1/fd (another container sharing the pid
# namespace, an exec with CAP_SYS_PTRACE) could walk out of.
cfg "$b/config.json" 'process.args=["/bin/abtest","true"]'
id=$(new_id)
rt create --bundle "$b" "$id" </dev/null >/dev/null 2>&1
pid=$(pid_of "$id")
held=$(for f in /proc/"$pid"/fd/*; do
  n=${f##*/}
  [ "$n" -ge 3 ] || continue
  t=$(readlink "$f") || continue
  case $t in socket:*) ;; *) printf '%s -> %s\n' "$n" "$t" ;; esac
done)
[[ $pid =~ ^[0-9]+$ ]] || held="(no pid: $pid)"
is "$held" "" "a created init holds no fd above stdio but its sockets (seen from the host)"
rt delete --force "$id"

# The same attack through `exec` into a running container.
cfg "$b/config.json" 'process.args=["/bin/abtest","sleep-forever"]'
id=$(new_id)
start_bg "$id" "$b"
ran=""
for n in $(seq 3 24); do
  for path in "/proc/self/fd/$n/../host-only" "/proc/self/fd/$n/$climb${b#/}/host-only"; do
    rt exec "$id" "$path" write /out/ran "fd $n" </dev/null >/dev/null 2>&1
    st=$?
    [ "$st" = 0 ] || [ -e "$b/out/ran" ] && ran="$ran $n:$st"
    rm -f "$b/out/ran"
  done
done
is "$ran" "" "exec's program through /proc/self/fd/N (N = 3..24) never is a host file"
rt delete --force "$id"

done_testing

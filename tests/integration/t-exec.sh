#!/bin/bash
# `exec`: another process in a running container, in its namespaces, with
# the exit status of that process.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run state delete exec
plan_later

make_bundle "$T/b" 'process.args=["/bin/abtest","sleep-forever"]' 'process.env=["PATH=/bin","BASE=1"]'
id=$(new_id)
rt run --detach --bundle "$T/b" "$id" </dev/null >/dev/null 2>&1
ok $? "a running container to exec into"
pid=$(pid_of "$id")

# xc ARGS...: exec in the container with stdin from /dev/null; sets $out and $rc.
xc ()
{
  out=$(rt exec "$@" </dev/null 2>"$T/exec.err")
  rc=$?
}

xc "$id" /bin/abtest true
is "$rc" 0 "exec exits 0 when the process exits 0"
xc "$id" /bin/abtest exit 7
is "$rc" 7 "exec exits 7 when the process exits 7"
xc "$id" /bin/abtest kill-self SEGV
is "$rc" 139 "exec exits 128+11 when the process dies of SIGSEGV"
xc "$id" /bin/abtest echo hello
is "$out" "hello" "exec's stdout is the caller's"

# runc: exit 255, msg="exec failed: unable to start container process: exec:
# \"/bin/nonexistent\": stat /bin/nonexistent: no such file or directory"
xc "$id" /bin/nonexistent
is "$rc" 255 "exec of a missing program exits 255 (the runtime could not run it)"
like "$(cat "$T/exec.err")" '/bin/nonexistent' "the error names the missing program"
xc "$id" /etc/passwd
is "$rc" 255 "exec of a non-executable file exits 255"
is "$(state_of "$id")" running "failed execs leave the container running"

# ---- the exec'd process is inside the container ---------------------------------------

xc "$id" /bin/abtest ns
for ns in ipc mnt net pid uts; do
  like "$out" "^$ns=$(stat -L -c %i "/proc/$pid/ns/$ns")\$" "the exec'd process is in the container's $ns namespace"
done
xc "$id" /bin/abtest pidns
unlike "$out" '^pid=1$' "the exec'd process is not pid 1 (the container's init is)"
xc "$id" /bin/abtest hostname
is "$out" "$(cfg "$T/b/config.json" --get hostname)" "the exec'd process sees the container's hostname"

# ---- flags ------------------------------------------------------------------------------

xc "$id" /bin/abtest env
is "$(grep -v '^HOME=' <<<"$out")" "$(printf 'PATH=/bin\nBASE=1')" "exec inherits process.env of the config"
xc --env FOO=bar --env BASE=2 "$id" /bin/abtest env
like "$out" '^FOO=bar$' "exec --env adds a variable"
like "$out" '^BASE=2$' "exec --env overrides a variable of the config"
xc --cwd /tmp "$id" /bin/abtest cwd
like "$out" '^cwd=/tmp$' "exec --cwd sets the working directory"
xc --user 65534:65534 "$id" /bin/abtest getuid
like "$out" '^uid=65534$' "exec --user sets the uid"
like "$out" '^gid=65534$' "exec --user sets the gid"
xc --user 65534 "$id" /bin/abtest getuid
is "$(grep -E '^(uid|gid)=' <<<"$out" | tr '\n' ' ')" "uid=65534 gid=0 " \
  "exec --user UID alone keeps the config's gid (0), as runc"
xc --user 65534:65534 "$id" /bin/abtest status
like "$out" '^CapEff=0000000000000000$' "a process exec'd as a non-root user has no effective capabilities"
if [ "$AB_ROOTLESS" = 1 ]; then
  skip "rootless: groups 10, 20 and 30 may be unmapped, setgroups denied (a single-id map)"
else
  xc --user 65534:65534 -g 10 --additional-gids 20,30 "$id" /bin/abtest getuid
  like "$out" '^groups=(.*,)?10,20,30$' \
    "exec -g and --additional-gids (repeated, comma-separated) add supplementary groups, as runc"
fi
xc -g x "$id" /bin/abtest getuid
like "$rc:$(cat "$T/exec.err")" "^2:agentbox: exec: --additional-gids: expected GID" "... and a gid that is not a number is a usage error"

# --cap adds to the bounding, effective and permitted sets only (runc, crun):
# an inheritable or ambient capability would survive execve into programs
# never meant to hold it.  Read from the host's /proc/PID/status.
status_of () { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$2/status" 2>/dev/null; }
rm -f "$T/cap.pid"
# (runc's short form, -c; --cap itself below)
rt exec --detach -c CAP_CHOWN --pid-file "$T/cap.pid" "$id" /bin/abtest sleep-forever </dev/null >/dev/null 2>&1
cpid=$(cat "$T/cap.pid" 2>/dev/null)
base=$(status_of CapBnd "$pid")
want=$(printf '%016x' $((0x$base | 1)))
is "$(for k in CapBnd CapEff CapPrm CapInh CapAmb; do printf '%s=%s ' $k "$(status_of $k "${cpid:-0}")"; done)" \
  "CapBnd=$want CapEff=$want CapPrm=$want CapInh=0000000000000000 CapAmb=0000000000000000 " \
  "exec -c (--cap) CAP_CHOWN adds it to bounding, effective and permitted, not to inheritable or ambient"
[ -n "$cpid" ] && kill -9 "$cpid" 2>/dev/null
if agentbox_only 2; then
  xc --cap CAP_BOGUS "$id" /bin/abtest true
  is "$rc $(cat "$T/exec.err")" "2 agentbox: exec: --cap: unknown capability \`CAP_BOGUS\` (capabilities(7) names, such as CAP_KILL) (see \`agentbox exec --help\`)" \
    "exec --cap with an unknown name is a one-line usage error naming it (exit 2)"
  xc --cap cap_kill "$id" /bin/abtest true
  like "$rc $(cat "$T/exec.err")" "^2 .*unknown capability \`cap_kill\`" "... and so is a lower-case name"
fi

# --apparmor and --process-label (runc) replace the config's profile and
# label; a host without that LSM refuses them (as create refuses the
# config's), before the program runs.
if agentbox_only 5; then
  if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]; then
    xc --apparmor unconfined "$id" /bin/abtest echo ran
    is "$rc:$out" "0:ran" "exec --apparmor unconfined runs on an AppArmor host"
    skip "AppArmor is enabled here: its refusal is not seen" 2
  else
    xc --apparmor agentbox-test "$id" /bin/abtest echo ran
    is "$rc:$out" "255:" "exec --apparmor on a host without AppArmor: exit 255, the program never ran"
    is "$(cat "$T/exec.err")" "agentbox: exec: process.apparmorProfile: \`agentbox-test\` requested but AppArmor is not enabled on this host: Operation not supported" \
      "... with one line naming the profile and why"
    xc --apparmor "" "$id" /bin/abtest echo ran
    is "$rc:$out" "0:ran" "... an empty --apparmor is no profile, as in the config"
  fi
  if [ -e /sys/fs/selinux/enforce ]; then
    skip "SELinux is enabled here: its refusal is not seen" 2
  else
    xc --process-label system_u:system_r:container_t:s0 "$id" /bin/abtest echo ran
    is "$rc:$out" "255:" "exec --process-label on a host without SELinux: exit 255, the program never ran"
    like "$(cat "$T/exec.err")" "^agentbox: exec: process.selinuxLabel: .*SELinux is not enabled" "... naming the label"
  fi
fi

cat >"$T/process.json" <<'EOF'
{
  "args": ["/bin/abtest", "getuid"],
  "env": ["PATH=/bin", "FROM=process-file"],
  "cwd": "/tmp",
  "user": { "uid": 65534, "gid": 65534 }
}
EOF
xc --process "$T/process.json" "$id"
is "$rc" 0 "exec --process runs the process described by the file"
like "$out" '^uid=65534$' "... as its user"
cfg "$T/process.json" 'args=["/bin/abtest","env"]'
xc --process "$T/process.json" "$id"
like "$out" '^FROM=process-file$' "... with its env"
cfg "$T/process.json" 'args=["/bin/abtest","cwd"]'
xc --process "$T/process.json" "$id"
like "$out" '^cwd=/tmp$' "... in its cwd"

# ---- exec --detach -------------------------------------------------------------------------

rt exec --detach --pid-file "$T/exec.pid" "$id" /bin/abtest sleep-forever </dev/null >/dev/null 2>&1
ok $? "exec --detach returns at once"
epid=$(cat "$T/exec.pid")
alive "$epid"
ok $? "the detached exec'd process is alive on the host (pid $epid)"
is "$(readlink "/proc/$epid/ns/pid")" "$(readlink "/proc/$pid/ns/pid")" "... in the container's pid namespace"
rt delete --force "$id"
wait_gone "$epid"
ok $? "delete --force also ends the exec'd process"

# ---- exec into containers that are not running ----------------------------------------------

xc "$id" /bin/abtest true
isnt "$rc" 0 "exec into a deleted container fails"
make_bundle "$T/quick" 'process.args=["/bin/abtest","true"]'
id=$(new_id)
rt create --bundle "$T/quick" "$id" </dev/null >/dev/null 2>&1 && rt start "$id" && wait_for_status "$id" stopped
xc "$id" /bin/abtest true
isnt "$rc" 0 "exec into a stopped container fails"
rt delete "$id"

done_testing

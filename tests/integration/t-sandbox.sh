#!/bin/bash
# The built-in sandbox (`run --default`): the host's /usr and /etc read-only
# with /etc's secrets masked, a tmpfs /workspace or an id-mapped bind of a
# host directory, no network, limits in the cgroup, a timeout that ends the
# whole tree, and a persistent sandbox that leaves nothing behind.  Checked
# from the host: inodes and hashes of host files, owners of written files,
# the container's mountinfo and cgroup files, host pids.
. "$(dirname "$0")/lib.sh"
require_runtime_commands run exec state delete
plan_later
is_agentbox || skip_all "run --default is agentbox's built-in sandbox"

# box [RUN OPTIONS] -- CMD...: a foreground sandbox run; stdout is the
# program's, stderr goes to $T/box.err.
box () { rt run --default "$@" </dev/null 2>"$T/box.err"; }

# cg_left ID: cgroup directories anywhere whose name contains ID.
cg_left () { find /sys/fs/cgroup -type d -name "*$1*" 2>/dev/null; }

# ---- the host's /usr and /etc ----------------------------------------------------------------

out=$(box "$(new_id)" -- /usr/bin/stat -c %d:%i /usr/bin/env /etc/os-release)
is "$out" "$(stat -c %d:%i /usr/bin/env /etc/os-release)" "the sandbox sees the host's own /usr/bin/env and /etc/os-release (same inodes)"
out=$(box "$(new_id)" -- /bin/sh -c 'sha256sum </etc/os-release')
is "$out" "$(sha256sum </etc/os-release)" "... with the same content"
probe=agentbox-probe-$$
out=$(box "$(new_id)" -- /bin/sh -c "touch /usr/$probe; echo usr=\$?; touch /etc/$probe; echo etc=\$?")
is "$out" "usr=1
etc=1" "writes to /usr and /etc fail in the sandbox"
like "$(cat "$T/box.err")" 'Read-only file system' "... with EROFS"
[ ! -e "/usr/$probe" ] && [ ! -e "/etc/$probe" ]
ok $? "nothing appeared in the host's /usr or /etc"
# A submount of the host's /usr (a separate /usr/local, an automount) is
# read-only in the view too: made in a private mount namespace of the test,
# so the host's table is untouched; its content is read there afterwards.
out=$(/usr/bin/unshare --mount --propagation private -- /bin/sh -c '
  mount -t tmpfs -o size=1m,mode=0755 agentbox-sub /usr/local/src || exit 99
  "$@" 2>&1; echo "left=$(ls -A /usr/local/src)"' sh \
  "${_ab_as[@]}" "$RUNTIME" --root "$AB_STATE" run --default "$(new_id)" -- /bin/sh -c 'echo x >/usr/local/src/w; echo st=$?' </dev/null)
is "$(grep -E '^(st|left)=' <<<"$out" | tr '\n' ' ')" "st=2 left= " "a host submount below /usr (a tmpfs on /usr/local/src) is read-only in the sandbox and nothing is written to it"
like "$out" 'Read-only file system' "... with EROFS"

[ -s /etc/shadow ]
ok $? "the host's /etc/shadow is not empty (so the next test can fail)"
out=$(box "$(new_id)" -- /bin/sh -c 'wc -c </etc/shadow; ls -A /etc/ssh 2>/dev/null | wc -l')
is "$out" "0
0" "/etc/shadow reads empty and /etc/ssh is an empty directory in the sandbox"

# ---- /workspace ------------------------------------------------------------------------------------

id=$(new_id)
rt run --default --detach "$id" -- /bin/sleep 1000 </dev/null >/dev/null 2>"$T/box.err"
ok $? "a detached sandbox runs a program"
pid=$(pid_of "$id")
like "$(cat "/proc/$pid/mountinfo" 2>/dev/null)" '^[0-9]+ [0-9]+ [0-9:]+ / /workspace rw,nosuid,nodev.* - tmpfs ' \
  "without --workspace, /workspace is a tmpfs (the container's mountinfo, read from the host)"
like "$(cat "/proc/$pid/mountinfo" 2>/dev/null)" '^[0-9]+ [0-9]+ [0-9:]+ /usr /usr ro,nosuid,nodev' \
  "/usr is a read-only nosuid,nodev bind of the host's"
rt delete --force "$id"

# ws-root: a workspace of the runtime's own user (root; rootless, that user).
mkdir -p "$T/ws-root" "$T/ws-user"
chown 1234:1234 "$T/ws-user"
owner=0:0
if [ "$AB_ROOTLESS" = 1 ]; then
  chown "$AB_RL_UID:$AB_RL_GID" "$T/ws-root"
  owner=$AB_RL_UID:$AB_RL_GID
fi
out=$(box --workspace "$T/ws-root" "$(new_id)" -- /bin/sh -c 'echo hello >/workspace/by-root && echo written')
is "$out" written "the sandbox writes to a --workspace owned by its runtime's user ($owner)"
is "$(stat -c %u:%g "$T/ws-root/by-root" 2>&1)" "$owner" "... and the file is owned by that user, the directory's owner, on the host (not 100000)"
if rootful_only 3 "a workspace of another user (1234) is id-mapped by host root only"; then
out=$(box --workspace "$T/ws-user" "$(new_id)" -- /bin/sh -c 'echo hello >/workspace/by-user && echo written')
is "$out" written "the sandbox writes to a --workspace owned by uid 1234"
diag "$(cat "$T/box.err")"
is "$(stat -c %u:%g "$T/ws-user/by-user" 2>&1)" 1234:1234 "... and the file is owned by 1234:1234, the directory's owner, on the host"
out=$(box --workspace "$T/ws-user" "$(new_id)" -- /usr/bin/stat -c %u /workspace)
is "$out" 0 "the sandbox sees its workspace as its own (owned by its root)"
fi

# A set-uid file the container's root made in a root-owned workspace would
# be a set-uid-root binary on the host: the profile refuses every way of
# setting the bits (chmod, creating with them), and plain modes still work.
cp "$ABTEST" "$T/ws-root/tool"
[ "$AB_ROOTLESS" = 1 ] && chown "$owner" "$T/ws-root/tool"
out=$(box --workspace "$T/ws-root" "$(new_id)" -- /bin/sh -c '
  chmod 4755 tool 2>/dev/null && echo chmod-suid
  chmod 2755 tool 2>/dev/null && echo chmod-sgid
  python3 -c "import os; os.open(\"made\", os.O_WRONLY | os.O_CREAT, 0o4755)" 2>/dev/null && echo open-suid
  install -m 6755 tool installed 2>/dev/null && echo install-suid
  chmod 700 tool && echo plain')
is "$out" plain "in the sandbox, chmod 4755/2755, open(O_CREAT, 04755) and install -m 6755 all fail; chmod 700 works"
is "$(find "$T/ws-root" -perm /6000 2>&1)" "" "... and the host's workspace holds no set-uid or set-gid file"

# ---- --timeout --------------------------------------------------------------------------------------

mkdir -p "$T/ws-t"
cp "$ABTEST" "$T/ws-t/abtest"
[ "$AB_ROOTLESS" = 1 ] && chown "$AB_RL_UID:$AB_RL_GID" "$T/ws-t"
id=$(new_id)
rt run --default --workspace "$T/ws-t" --timeout 5s --timeout-grace 0 --record "$T/timeout.json" "$id" -- \
  /bin/sh -c '/workspace/abtest setsid-sleeper >/workspace/pid; exec /workspace/abtest sleep-forever' \
  </dev/null >/dev/null 2>&1 &
runpid=$!
wait_for_file "$T/ws-t/pid" 20
init=$(pid_of "$id")
gc=$(host_pid_of "$init" "$(sed -n 's/^pid=//p' "$T/ws-t/pid")")
alive "$gc"
ok $? "the sandboxed program started a setsid'd grandchild (host pid ${gc:-none})"
wait $runpid
is $? 137 "--timeout ends the run with 137 (killed)"
is "$(json_get result.structuredContent.reason <"$T/timeout.json" 2>&1)" timeout "the record's reason is timeout"
wait_gone "$gc" 10
ok $? "the setsid'd grandchild is gone too"
is "$(cg_left "$id")" "" "the timed-out sandbox's cgroups are gone"

# With a grace: SIGTERM to every process first.  The init here is a shell
# with no TERM handler, which the kernel spares: it must not go on to its
# next command, nor keep the run waiting out the grace once the rest are
# gone, and the TERM trap of the process it started runs.  Rootless without
# a delegated cgroup too: the signal then goes to the init's descendants.
# (2 s: time to start them all; one forked after the SIGTERM gets none and
# is killed at the end of the grace.)
id=$(new_id)
rm -f "$T/ws-t/cleaned" "$T/ws-t/after"
rt run --default --workspace "$T/ws-t" --timeout 2s --timeout-grace 20s --record "$T/grace.json" "$id" -- \
  sh -c '(trap "echo cleaned >/workspace/cleaned; exit 1" TERM; setsid sleep 1000 & sleep 1000 & wait)
         echo ran >/workspace/after' </dev/null >/dev/null 2>&1
is "$?/$(cat "$T/ws-t/cleaned" 2>&1)" "143/cleaned" \
  "--timeout with a grace: the TERM trap of the init's child runs (its file is on the host); the run ends 143"
[ ! -e "$T/ws-t/after" ]
ok $? "... and the init, a shell without a TERM trap, never runs its next command"
is "$(json_get result.structuredContent.timeout.ended <"$T/grace.json" 2>&1)" terminated \
  "... it ends as if by SIGTERM once the rest are gone, not killed when the grace (20 s) runs out"
is "$(cg_left "$id")" "" "... and its cgroups are gone"

# A process `exec` put into a running sandbox is no descendant of its init,
# but it is in its pid namespace: at the deadline it gets SIGTERM too, and
# its trap runs before the run ends (rootless without a delegated cgroup,
# the walk of the pid namespace must find it).
id=$(new_id)
rm -f "$T/ws-t/up" "$T/ws-t/exec-cleaned"
rt run --default --workspace "$T/ws-t" --timeout 6s --timeout-grace 20s --record "$T/grace-exec.json" "$id" -- \
  sleep 1000 </dev/null >/dev/null 2>&1 &
runpid=$!
wait_for_status "$id" running 20
rt exec -d "$id" -- sh -c 'trap "echo cleaned >/workspace/exec-cleaned; exit 0" TERM; echo up >/workspace/up
                           while :; do sleep 0.1; done' </dev/null >/dev/null 2>&1
wait_for_file "$T/ws-t/up" 20
ok $? "a detached exec starts a process in a run's sandbox before its deadline"
wait $runpid
is "$?/$(cat "$T/ws-t/exec-cleaned" 2>&1)" "143/cleaned" \
  "... at the deadline that process's TERM trap runs (its file is on the host); the run ends 143"
is "$(json_get result.structuredContent.timeout.ended <"$T/grace-exec.json" 2>&1)" terminated \
  "... and the run ends once it is gone, not at the end of the grace"
is "$(cg_left "$id")" "" "... and the sandbox's cgroups are gone"

# ---- no network --------------------------------------------------------------------------------------

cp "$ABTEST" "$T/ws-root/abtest"
"$PYTHON3" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
s.settimeout(0.5); n = 0; end = time.time() + 60
while time.time() < end:
    try:
        c, _ = s.accept(); n += 1; c.close()
        open(sys.argv[1], "w").write("%d\n" % n)
    except socket.timeout:
        pass
    try:
        open(sys.argv[2]).close(); break
    except OSError:
        pass
' "$T/accepted" "$T/listener-stop" >"$T/port" &
lpid=$!
wait_for_file "$T/port" 10
port=$(cat "$T/port")
"$ABTEST" connect tcp 127.0.0.1 "$port" >/dev/null
ok $? "control: the host connects to its listener on 127.0.0.1:$port"
wait_for_file "$T/accepted" 10
out=$(box --workspace "$T/ws-root" "$(new_id)" -- /workspace/abtest connect tcp 127.0.0.1 "$port")
is "$out" ECONNREFUSED "the sandbox's 127.0.0.1:$port is its own loopback: connection refused"
out=$(box --workspace "$T/ws-root" "$(new_id)" -- /workspace/abtest connect tcp 192.0.2.1 80)
like "$out" '^(ECONNREFUSED|ENETUNREACH)$' "an outside address is refused at once: no route out of the sandbox ($out)"
touch "$T/listener-stop"
wait $lpid
is "$(cat "$T/accepted")" 1 "the host's listener accepted only the host's own connection"

# ---- --memory, --pids -----------------------------------------------------------------------------------

id=$(new_id)
if [ "$AB_ROOTLESS" = 1 ]; then
  # No cgroup is delegated here: the limits are refused unless accepted,
  # and then pids.limit is RLIMIT_NPROC (t-rootless.sh has the rest).
  out=$(rt run --default --detach --memory 64M --pids 20 "$id" -- /bin/sleep 1000 </dev/null 2>&1)
  like "$? $out" '^125 .*linux.resources.memory.limit: cannot be enforced: .*--accept-degraded' \
    "rootless: --memory without a delegated cgroup fails, naming the limit and the way to accept it"
  rt run --default --detach --accept-degraded --memory 64M --pids 20 "$id" -- /bin/sleep 1000 </dev/null >/dev/null 2>"$T/box.err"
  pid=$(pid_of "$id")
  is "$(awk '/^Max processes/ { print $3 }' "/proc/$pid/limits" 2>&1)" 20 \
    "... accepted, --pids 20 is the RLIMIT_NPROC of its process"
else
  rt run --default --detach --memory 64M --pids 20 "$id" -- /bin/sleep 1000 </dev/null >/dev/null 2>"$T/box.err"
  pid=$(pid_of "$id")
  is "$(cg_read "$pid" memory memory.limit_in_bytes memory.max)" 67108864 "--memory 64M is the sandbox's memory limit in its cgroup"
  is "$(cg_read "$pid" pids pids.max pids.max)" 20 "--pids 20 is its pids.max"
fi
rt delete --force "$id"
is "$(cg_left "$id")" "" "... and the cgroups are gone after delete"

# ---- a persistent sandbox ----------------------------------------------------------------------------------

id=$(new_id)
rt run --default --detach "$id" </dev/null >/dev/null 2>"$T/box.err"
ok $? "run --default --detach ID without a program starts a persistent sandbox"
init=$(pid_of "$id")
alive "$init"
ok $? "... whose init (host pid ${init:-none}) keeps running"
out=$(rt exec "$id" -- /bin/sh -c 'echo kept >/workspace/note' </dev/null 2>&1 && rt exec "$id" -- /bin/cat /workspace/note </dev/null 2>&1)
is "$out" kept "exec runs commands in it, and the workspace keeps their files between execs"
rt exec -d "$id" -- /bin/sh -c 'setsid sleep 1000 & exec sleep 1000' </dev/null >/dev/null 2>&1
in_sandbox ()
{
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$(readlink "/proc/$init/ns/pid")" ] && echo "${p#/proc/}"
  done
}
for ((i = 0; i < 50; i++)); do
  kids=$(in_sandbox)
  [ "$(wc -w <<<"$kids")" -ge 3 ] && break
  sleep 0.1
done
[ "$(wc -w <<<"$kids")" -ge 3 ]
ok $? "a detached exec left processes in the sandbox ($(wc -w <<<"$kids") in its pid namespace)"
rt delete --force "$id"
ok $? "delete --force of the persistent sandbox succeeds"
gone=0
for p in $kids; do wait_gone "$p" 10 && gone=$((gone + 1)); done
is "$gone" "$(wc -w <<<"$kids")" "... and every one of its processes is gone"
is "$(cg_left "$id")" "" "... its cgroups are gone"
[ ! -e "$AB_STATE/$id" ] && ! grep -q "$id" /proc/self/mountinfo
ok $? "... and so are its state directory and any mount naming it"

# ---- the shared skeleton ---------------------------------------------------------------------------------------

# The sandbox's root is a skeleton of empty mount points made once, in the
# cache directory (lib.sh points AGENTBOX_CACHE_DIR into $T); nothing a
# sandbox did may have been written into it.
sk=$AGENTBOX_CACHE_DIR/sandbox-rootfs
is "$(find "$sk" -type f -size +0 2>&1)" "" "the shared skeleton holds no file with content"
is "$(find "$sk/workspace" "$sk/tmp" "$sk/root" "$sk/run" -mindepth 1 2>&1 | wc -l)" 0 \
  "... and its mount points (/workspace, /tmp, /root, /run) are empty"

# A bind to a destination the skeleton lacks (--ro-bind SRC:/NEW) gets its
# mount point in a skeleton of the run's own: made in the shared one, /NEW
# would be in every later sandbox's view (empty), one run's choice in the
# others'.  A directory, a file, and a directory below a new one; then a
# persistent sandbox with such a bind, deleted.
mkdir -p "$T/arch/d" && echo arch >"$T/arch/d/f" && echo file >"$T/arch/file"
new=ab-arch-$$
out=$(box --ro-bind "$T/arch/d:/$new" --ro-bind "$T/arch/file:/$new-file" --bind "$T/arch/d:/$new-top/below" \
  "$(new_id)" -- sh -c "cat /$new/f /$new-file /$new-top/below/f")
is "$out" "arch
file
arch" "--ro-bind and --bind onto destinations the skeleton lacks show the host's directory and file there"
is "$(ls -A "$sk" | grep -c "$new")" 0 "... and the shared skeleton has no mount point for any of them"
id=$(new_id)
rt run --default --detach --ro-bind "$T/arch/d:/$new" "$id" </dev/null >/dev/null 2>&1
is "$(rt exec "$id" cat "/$new/f" </dev/null 2>&1)" arch "a persistent sandbox with such a bind shows it"
is "$(ls -A "$sk" | grep -c "$new")" 0 "... the shared skeleton has none of its mount points"
rt delete --force "$id" >/dev/null 2>&1
[ -z "$(ls -A "$AB_STATE" 2>/dev/null | grep -F -- "$id")" ]
ok $? "... and once it is deleted nothing of it is left in the state root (its own skeleton included)"
out=$(box "$(new_id)" -- ls -A /)
is "$(grep -c "$new" <<<"$out")/$(grep -c '^proc$' <<<"$out")" 0/1 "a later sandbox's / does not show them"

done_testing

#!/bin/bash
# Landlock, the second filesystem and network boundary (docs/landlock.md):
# the ABI `features` reports; a bind mount writable by mistake that a policy
# keeps read-only; exec'd processes under the same rules; TCP refused in the
# kernel where the wall would pass it; malformed policies refused alike by
# validate and create; and the sandbox without namespaces where user
# namespaces cannot be made (here: user.max_user_namespaces=0 in a user
# namespace of the test's).  Every effect is checked from the host: file
# contents, listeners that saw no connection, processes that are gone.
. "$(dirname "$0")/lib.sh"
require_runtime_commands run exec create delete validate
plan_later
is_agentbox || skip_all "dev.agentbox.landlock is agentbox's"

# The kernel's ABI, asked directly (landlock_create_ruleset(NULL, 0, VERSION)).
kabi=$("$PYTHON3" -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); r = l.syscall(444, None, 0, 1); print(r if r > 0 else 0)')
fabi=$(rt features | "$PYTHON3" -c 'import json,sys; print(json.load(sys.stdin)["annotations"]["dev.agentbox.landlock.abi"])')
is "$fabi" "$kabi" "features reports the kernel's landlock ABI as dev.agentbox.landlock.abi ($kabi)"
[ "$kabi" -gt 0 ] || { done_testing; exit 0; }
diag "this kernel's landlock ABI: $kabi"

# policy JSON...: the annotation edit of cfg.py for a landlock policy.
policy () { "$PYTHON3" -c 'import json,sys; print("annotations=" + json.dumps({"dev.agentbox.landlock": sys.argv[1]}))' "$1"; }
RO='"execute","read_file","read_dir"'
RW='"execute","read_file","read_dir","write_file","remove_file","remove_dir","make_reg","make_dir","truncate"'
# Read beneath /, read-write in /tmp only.
READONLY_POLICY='{"abi":3,"pathBeneath":[{"paths":["/"],"allowedAccess":['$RO']},{"paths":["/tmp"],"allowedAccess":['$RW']}]}'

# ---- a bind mount writable by mistake -------------------------------------------------

mkdir -p "$T/data" && echo original >"$T/data/f"
DATA="mounts+={\"destination\":\"/data\",\"type\":\"bind\",\"source\":\"$T/data\",\"options\":[\"rbind\",\"rw\"]}"
make_bundle "$T/b-ro" "$DATA" "$(policy "$READONLY_POLICY")" 'process.args=["/bin/abtest","write","/data/f","changed"]'
out=$(rt run --bundle "$T/b-ro" "$(new_id)" </dev/null 2>"$T/err")
is "$out" EACCES "a read-write bind under a policy that grants only read there: the write fails (EACCES)"
is "$(cat "$T/data/f")" original "... and the host's file is unchanged"
make_bundle "$T/b-off" "$DATA" "$(policy off)" 'process.args=["/bin/abtest","write","/data/f","changed"]'
out=$(rt run --bundle "$T/b-off" "$(new_id)" </dev/null 2>"$T/err")
is "$out/$(cat "$T/data/f")" ok/changed "control: the same mount with landlock off is writable (the mistake is real)"
echo original >"$T/data/f"
make_bundle "$T/b-auto" "$DATA" "$(policy auto)" \
  'process.args=["/bin/sh","-c","/bin/abtest write /data/f auto; /bin/abtest write /etc/x no"]'
out=$(rt run --bundle "$T/b-auto" "$(new_id)" </dev/null 2>"$T/err")
is "$(echo $out)/$(cat "$T/data/f")" "ok EROFS/auto" \
  "\"auto\" follows the mounts: the read-write bind stays writable (the read-only root refuses by itself)"
ok "$([ ! -e "$T/b-auto/rootfs/etc/x" ]; echo $?)" "... and the rootfs has no /etc/x"

# ---- exec'd processes: a domain of their own, the same rules -----------------------------

mkdir -p "$T/ws" && echo original >"$T/ws/f" && cp "$ABTEST" "$T/ws/abtest"
id=$(new_id)
rt run --default --detach --workspace "$T/ws" --annotation "dev.agentbox.landlock=$READONLY_POLICY" "$id" </dev/null >/dev/null 2>"$T/err"
ok $? "a persistent sandbox under the read-only policy starts" || diag "$(cat "$T/err")"
out=$(rt exec "$id" /workspace/abtest write /workspace/f changed </dev/null 2>&1)
is "$out" EACCES "exec: the workspace, writable by its mount, is not writable under the policy"
is "$(cat "$T/ws/f")" original "... the host's file is unchanged"
out=$(rt exec "$id" /workspace/abtest write /tmp/x fine </dev/null 2>&1)
is "$out" ok "... where the policy grants it, exec writes"
rt delete --force "$id" >/dev/null 2>&1

# ---- a malformed policy: validate's verdict is create's ----------------------------------

make_bundle "$T/b-bad" "$(policy '{"abi":4,"pathBeneath":[{"paths":["/"],"allowedAccess":["read_file","wirte_file"]}]}')"
want='config.json: annotations.dev.agentbox.landlock: pathBeneath[0].allowedAccess[1]: "wirte_file" is not a landlock filesystem right'
verr=$(rt validate --bundle "$T/b-bad" 2>&1 >/dev/null)
vst=$?
id=$(new_id)
cerr=$(rt create --bundle "$T/b-bad" "$id" 2>&1 >/dev/null </dev/null)
cst=$?
is "$verr" "agentbox: $want" "validate refuses a misspelt right with its JSON path, on one line"
is "$cerr" "agentbox: $want" "create refuses it with the same line"
ok "$([ $vst != 0 ] && [ $cst != 0 ]; echo $?)" "... both fail (validate $vst, create $cst)"
ok "$([ ! -e "$AB_STATE/$id" ]; echo $?)" "... and create leaves no state behind"
make_bundle "$T/b-bad2" "$(policy '{"abi":4,"netPort":[{"ports":[80],"allowedAccess":["connect_tcp"]}],"handledAccessNet":["bind_tcp"]}')"
like "$(rt validate --bundle "$T/b-bad2" 2>&1)" 'netPort\[0\]\.allowedAccess: connect_tcp: not in the ruleset.s handled network rights' \
  "a rule allowing a right the ruleset does not handle is refused (the kernel's EINVAL)"

make_bundle "$T/b-bad3" 'annotations={"dev.agentbox.fallback":"yes"}'
is "$(rt validate --bundle "$T/b-bad3" 2>&1)" 'agentbox: config.json: annotations.dev.agentbox.fallback: must be "landlock" or "none", not "yes"' \
  "a malformed dev.agentbox.fallback is refused, naming it"

# ---- TCP: refused in the kernel where the wall would pass it ---------------------------------

cat >"$T/ws/tcp.py" <<'EOF'
import errno, socket, sys
# bind P1 and P2 on the sandbox's own 127.0.0.1, then connect to each
out = []
srv = []
for p in map(int, sys.argv[1:3]):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); s.listen(1); srv.append(s); out.append("bind-ok")
    except OSError as e:
        out.append("bind-" + errno.errorcode[e.errno])
for p in map(int, sys.argv[1:3]):
    c = socket.socket()
    try:
        c.connect(("127.0.0.1", p)); out.append("connect-ok")
    except OSError as e:
        out.append("connect-" + errno.errorcode[e.errno])
print(" ".join(out))
EOF
if [ "$kabi" -ge 4 ]; then
  p1=$((20000 + $$ % 20000)) p2=$((20001 + $$ % 20000))
  NETPOL='{"abi":4,"auto":true,"netPort":[{"ports":['$p1'],"allowedAccess":["bind_tcp","connect_tcp"]},{"ports":['$p2'],"allowedAccess":["bind_tcp"]}]}'
  out=$(rt run --default --workspace "$T/ws" --annotation "dev.agentbox.landlock=$NETPOL" "$(new_id)" -- python3 /workspace/tcp.py $p1 $p2 </dev/null 2>"$T/err")
  is "$out" "bind-ok bind-ok connect-ok connect-EACCES" \
    "a TCP connect to a port the policy does not grant fails (EACCES), to the one it grants it works"
  out=$(rt run --default --workspace "$T/ws" --annotation dev.agentbox.landlock=off "$(new_id)" -- python3 /workspace/tcp.py $p1 $p2 </dev/null 2>"$T/err")
  is "$out" "bind-ok bind-ok connect-ok connect-ok" "control: with landlock off the wall passes both (loopback in the sandbox)"
  out=$(rt run --default --workspace "$T/ws" "$(new_id)" -- python3 /workspace/tcp.py $p1 $p2 </dev/null 2>"$T/err")
  is "$out" "bind-ok bind-ok connect-ok connect-ok" \
    "the default sandbox (auto) in a network namespace of its own: its loopback servers are its own (no network rule)"

  # A network namespace the container joins (shared, as a pod's), under
  # the wall of dev.agentbox.net.allow: there auto refuses TCP bind and
  # connects to ports the policy does not allow, loopback included, which
  # the wall passes.
  ns=ab-$$-ll
  ip netns add "$ns" && ip -n "$ns" link set lo up
  ip netns exec "$ns" "$PYTHON3" -c '
import socket, sys, time
ls = []
for p in map(int, sys.argv[1:3]):
    s = socket.socket(); s.bind(("127.0.0.1", p)); s.listen(8); ls.append(s)
open(sys.argv[3], "w").write("up")
time.sleep(120)
' $p1 $p2 "$T/ns-up" &
  nspid=$!
  wait_for_file "$T/ns-up" 10
  JOIN="linux.namespaces[type=network].path=\"/run/netns/$ns\""
  NETSCRIPT="/bin/abtest connect tcp 127.0.0.1 $p1; /bin/abtest connect tcp 127.0.0.1 $p2; /bin/busybox timeout 1 /bin/busybox nc -l -p $((p2 + 1)) </dev/null; echo nc=\$?"
  make_bundle "$T/b-join" "$JOIN" 'annotations={"dev.agentbox.net.allow":"127.0.0.1:'$p1'/tcp","dev.agentbox.landlock":"auto"}' \
    "process.args=[\"/bin/sh\",\"-c\",\"$NETSCRIPT\"]"
  make_bundle "$T/b-join-off" "$JOIN" 'annotations={"dev.agentbox.net.allow":"127.0.0.1:'$p1'/tcp","dev.agentbox.landlock":"off"}' \
    "process.args=[\"/bin/sh\",\"-c\",\"$NETSCRIPT\"]"
  out=$(rt run --bundle "$T/b-join" "$(new_id)" </dev/null 2>&1)
  like "$(echo $out)" "^ok EACCES .*nc: bind: Permission denied nc=1\$" \
    "a joined namespace under the wall: connect to the allowed port works, to another fails (EACCES), bind fails"
  out=$(rt run --bundle "$T/b-join-off" "$(new_id)" </dev/null 2>&1)
  like "$(echo $out)" "^ok ok .*nc=143\$" "control: with landlock off the wall passes the other loopback port, and nc listens (until timeout ends it)"
  kill "$nspid" 2>/dev/null
  wait "$nspid" 2>/dev/null
  ip netns del "$ns"
else
  skip "landlock ABI $kabi has no network rules (ABI 4)" 5
fi

# ---- the sandbox without namespaces ----------------------------------------------------------

# nouserns CMD...: CMD where no user namespace can be made: in a user
# namespace of ours whose user.max_user_namespaces is 0.
nouserns ()
{
  timeout -k 5 "$AB_RT_TIMEOUT" unshare --user --map-root-user /bin/sh -c \
    'echo 0 >/proc/sys/user/max_user_namespaces && exec "$@"' nouserns "$@" 7>&-
}
fb () { nouserns "$RUNTIME" --root "$AB_STATE" run --default --workspace "$T/fbws" "$@"; }
mkdir -p "$T/fbws" "$T/outside" && cp "$ABTEST" "$T/fbws/abtest"

err=$(fb "$(new_id)" -- /bin/true </dev/null 2>&1 >/dev/null)
st=$?
is "$st" 125 "no user namespace, no --fallback: run --default fails (125)"
like "$err" '^agentbox: no user namespace can be made here: user.max_user_namespaces=0 .*--fallback landlock' \
  "... with one line naming the refusal and the flag"
is "$(printf '%s\n' "$err" | wc -l)" 1 "... one line"

out=$(fb --fallback landlock --record "$T/fb.rec" "$(new_id)" -- /bin/sh -c \
  'echo in-ws >ok; cat ok; echo x >'"$T"'/outside/x; cat /etc/shadow; ls /root; exit 3' </dev/null 2>"$T/fb.err")
st=$?
is "$st/$out" "3/in-ws" "--fallback landlock: the program runs and its exit status comes back"
is "$(cat "$T/fbws/ok" 2>/dev/null)" in-ws "... it wrote its workspace (seen on the host)"
ok "$([ ! -e "$T/outside/x" ]; echo $?)" "... it could not write outside the workspace (no $T/outside/x on the host)"
like "$(cat "$T/fb.err")" "cannot create $T/outside/x: Permission denied" "... refused by landlock (EACCES)"
like "$(cat "$T/fb.err")" '/etc/shadow: Permission denied' "... /etc/shadow (masked) is unreadable"
like "$(cat "$T/fb.err")" "'/root': Permission denied" "... and what the sandbox does not show (/root) too"
deg=$("$PYTHON3" -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["result"]["structuredContent"]["degraded"]))' "$T/fb.rec" 2>&1)
miss=""
for w in '^namespaces: none \(no user namespace can be made here: user.max_user_namespaces=0' '^pid: ' '^mounts: none' '^network: ' '^cgroup: '; do
  grep -Eq "$w" <<<"$deg" || miss+="$w "
done
is "$miss" "" "the record lists in degraded what this mode does not give (namespaces, pid, mounts, network, cgroup)" || diag "$deg"

# A setsid'd, double-forked grandchild: no pid namespace or cgroup ends it.
out=$(fb --fallback landlock "$(new_id)" -- /bin/sh -c './abtest setsid-sleeper; sleep 0.3' </dev/null 2>"$T/err")
gpid=${out#pid=}
ok "$([ -n "$gpid" ] && [ "$gpid" != "$out" ]; echo $?)" "a setsid'd, double-forked grandchild was started (pid ${gpid:-none})"
ok "$([ ! -e "/proc/$gpid" ]; echo $?)" "... it is gone after the run (the supervisor killed every descendant)"
out=$(fb --fallback landlock --timeout 1s --record "$T/fbt.rec" "$(new_id)" -- /bin/sh -c './abtest setsid-sleeper; sleep 60' </dev/null 2>"$T/err")
gpid=${out#pid=}
is "$(json_get result.structuredContent.reason <"$T/fbt.rec" 2>/dev/null)" timeout "--timeout ends a fallback run (reason timeout)"
ok "$([ -n "$gpid" ] && [ ! -e "/proc/$gpid" ]; echo $?)" "... and its setsid'd grandchild (pid ${gpid:-none}) is gone"

# The program starts with default dispositions and nothing blocked, not
# with what the supervisor blocks (its signalfd's) or inherited ignored
# (SIGINT and SIGPIPE here).  Before, it ran with nearly every signal
# blocked: a kill, a Ctrl-C or the timeout's SIGTERM did nothing to it.
out=$( (trap '' INT PIPE; fb --fallback landlock "$(new_id)" -- /bin/grep -E '^Sig(Blk|Ign)' /proc/self/status) \
  </dev/null 2>"$T/err")
is "$(echo $out)" "SigBlk: 0000000000000000 SigIgn: 0000000000000000" \
  "--fallback landlock: the program starts with no signal blocked or ignored"
rm -f "$T/fbws/cleaned"
fb --fallback landlock --timeout 2s --timeout-grace 20s --record "$T/fbg.rec" "$(new_id)" -- \
  /bin/sh -c 'trap "echo cleaned >cleaned; exit 3" TERM; sleep 1000 & wait' </dev/null >/dev/null 2>"$T/err"
is "$?/$(cat "$T/fbws/cleaned" 2>&1)/$(json_get result.structuredContent.timeout.ended <"$T/fbg.rec" 2>&1)" \
  "3/cleaned/terminated" "... and --timeout sends SIGTERM first: its TERM trap runs within the grace (20 s)"
# A process the program left (not its init here: the program is no init,
# and dies of the SIGTERM at once) has the rest of the grace to clean up,
# as in a container whose init waits stopped; one that still runs at the
# end of the grace is killed, and the record says so.  Before, whatever
# the program left was killed the moment it ended.
rm -f "$T/fbws/cleaned" "$T/fbws/leftpid"
fb --fallback landlock --timeout 2s --timeout-grace 20s --record "$T/fbl.rec" "$(new_id)" -- \
  /bin/sh -c '(trap "trap \"\" TERM; sleep 1; echo cleaned >cleaned; exit 1" TERM; sleep 1000 & wait) &
              sleep 1000' </dev/null >/dev/null 2>"$T/err"
is "$?/$(cat "$T/fbws/cleaned" 2>&1)/$(json_get result.structuredContent.timeout.ended <"$T/fbl.rec" 2>&1)" \
  "143/cleaned/terminated" \
  "... the TERM trap of a process the program left runs to its end though the program died of its SIGTERM"
fb --fallback landlock --timeout 1s --timeout-grace 2s --record "$T/fbk.rec" "$(new_id)" -- \
  /bin/sh -c '(trap "" TERM; exec sleep 1000) & echo $! >leftpid; sleep 1000' </dev/null >/dev/null 2>"$T/err"
left=$(cat "$T/fbws/leftpid" 2>/dev/null)
is "$?/$(json_get result.structuredContent.timeout.ended <"$T/fbk.rec" 2>&1)" "0/killed" \
  "... and one that ignores SIGTERM is killed at the end of the grace: the record says killed"
wait_gone "$left" 10
ok $? "... and it (pid ${left:-none}) is gone after the run"

# Signals: landlock's scope (ABI 6) keeps them inside the sandbox.
if [ "$kabi" -ge 6 ]; then
  sleep 300 </dev/null >/dev/null 2>&1 &
  victim=$!
  fb --fallback landlock "$(new_id)" -- /bin/kill -9 "$victim" </dev/null >/dev/null 2>"$T/err"
  alive "$victim"
  ok $? "a host process of the same uid survives kill -9 from the fallback (landlock's signal scope)"
  nouserns /bin/kill -9 "$victim"
  wait_gone "$victim"
  ok $? "control: the same kill from the same user namespace without landlock kills it"
  wait "$victim" 2>/dev/null
else
  skip "landlock ABI $kabi has no signal scope (ABI 6)" 2
fi

if [ "$kabi" -ge 4 ]; then
  "$PYTHON3" -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(20)
try:
    c, _ = s.accept(); open(sys.argv[2], "w").write("accepted")
except OSError:
    pass
' "$T/lport" "$T/laccepted" &
  lpid=$!
  wait_for_file "$T/lport" 10
  out=$(fb --fallback landlock "$(new_id)" -- ./abtest connect tcp 127.0.0.1 "$(cat "$T/lport")" </dev/null 2>"$T/err")
  is "$out" EACCES "the fallback shares the host's network: landlock refuses TCP connect (no port granted)"
  ok "$([ ! -e "$T/laccepted" ]; echo $?)" "... the host's listener saw no connection"
  kill "$lpid" 2>/dev/null
  wait "$lpid" 2>/dev/null
else
  skip "landlock ABI $kabi has no network rules (ABI 4)" 2
fi

# A bundle opts in or is refused.
make_bundle "$T/b-nofb" 'process.args=["/bin/abtest","true"]'
err=$(nouserns "$RUNTIME" --root "$AB_STATE" run --fallback landlock --bundle "$T/b-nofb" "$(new_id)" </dev/null 2>&1)
like "$err" 'config.json must opt in \(annotations dev.agentbox.fallback = "landlock"\)' \
  "run --fallback on a bundle whose config did not opt in is refused"
make_bundle "$T/b-fb" 'annotations={"dev.agentbox.fallback":"landlock"}' "mounts+={\"destination\":\"/workspace\",\"type\":\"bind\",\"source\":\"$T/fbws\",\"options\":[\"rbind\",\"rw\"]}" \
  'process.cwd="/workspace"' 'process.args=["/bin/sh","-c","pwd; echo b >bundle-ok"]'
out=$(nouserns "$RUNTIME" --root "$AB_STATE" run --bundle "$T/b-fb" "$(new_id)" </dev/null 2>"$T/err")
is "$out/$(cat "$T/fbws/bundle-ok" 2>/dev/null)" "$T/fbws/b" "a bundle that opted in runs in the fallback, its cwd in the workspace's host directory" ||
  diag "$(cat "$T/err")"

done_testing

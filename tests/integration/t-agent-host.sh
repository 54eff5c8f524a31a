#!/bin/bash
# What an agent host trips over (issue 25), each checked from the host side:
# the sandbox's own name, the verdict of a command that succeeded, a mount
# namespace without cgroup filesystems (`ip netns exec`).
. "$(dirname "$0")/lib.sh"
require_runtime_commands run exec state delete
plan_later
is_agentbox || skip_all "run --default is agentbox's built-in sandbox"

# rec NAME [RUN OPTIONS] -- CMD...: a foreground sandbox run with its record in
# $T/NAME.json (stderr: $T/NAME.err); sets $rc.
rec ()
{
  local name=$1
  shift
  rt run --default --record "$T/$name.json" --no-stream "$@" </dev/null >/dev/null 2>"$T/$name.err"
  rc=$?
}
# field NAME PATH: a field of the record's structuredContent (or of result
# with a leading "result."), as json_get prints it.
field ()
{
  case $2 in
    result.*) json_get "$2" <"$T/$1.json" ;;
    *) json_get "result.structuredContent.$2" <"$T/$1.json" ;;
  esac
}
# verdict NAME: "isError code action", and the violations.
verdict () { echo "$(field "$1" result.isError) $(field "$1" error.code) $(field "$1" error.suggested_action)"; }

# ---- item 1: commands that look up their own name ------------------------------------------

hosts_sum=$(stat -c '%i %s %Y' /etc/hosts; sha256sum </etc/hosts)
rec fqdn "$(new_id)" -- python3 -c 'import socket; print(socket.getfqdn())'
is "$rc/$(field fqdn stdout)" "0/agentbox" "socket.getfqdn() in the sandbox exits 0 and finds the sandbox's name"
is "$(verdict fqdn)/$(field fqdn violations)" "false  /[]" \
  "... its record: isError false, no error, no refused DNS query"
cat >"$T/serve.py" <<'PY'
import http.server, threading, urllib.request
s = http.server.ThreadingHTTPServer(("", 8000), http.server.SimpleHTTPRequestHandler)  # server_bind: getfqdn
threading.Thread(target=s.serve_forever, daemon=True).start()
print(urllib.request.urlopen("http://127.0.0.1:8000/").status)
s.shutdown()
PY
mkdir -p "$T/ws" && cp "$T/serve.py" "$T/ws/"
rec serve --workspace "$T/ws" "$(new_id)" -- python3 /workspace/serve.py
is "$rc/$(field serve stdout)/$(verdict serve)/$(field serve violations)" "0/200/false  /[]" "a python3 http.server serves a request: exit 0, isError false, nothing refused"
rec git "$(new_id)" -- sh -c 'cd /tmp && git init -q r && cd r && git -c user.name=a commit -q --allow-empty -m x'
is "$(field git violations)" "[]" "git commit without an e-mail looks its name up in /etc/hosts, not DNS"
is "$(stat -c '%i %s %Y' /etc/hosts; sha256sum </etc/hosts)" "$hosts_sum" "the host's /etc/hosts is untouched"
rec lookup "$(new_id)" -- python3 -c '
import socket
try: socket.getaddrinfo("example.com", 80)
except OSError as e: print("refused", e.errno)'
like "$(field lookup violations)" '"port": 53' "a DNS query without network is refused and listed in violations"
is "$rc/$(verdict lookup)" "0/false  " "... but the command exited 0: isError false, no error"
rec lookup-fail "$(new_id)" -- python3 -c 'import socket; socket.getaddrinfo("example.com", 80)'
is "$(verdict lookup-fail)" "true network_denied add_allow_domains" \
  "the same lookup failing the command: network_denied, add_allow_domains"
b=$T/bundle-hosts
make_bundle "$b" 'process.args=["/bin/abtest","cat","/etc/hosts"]'
mkdir -p "$b/rootfs/etc" && echo "192.0.2.7 image-own" >"$b/rootfs/etc/hosts"
out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>/dev/null)
is "$out" "192.0.2.7 image-own" "a bundle without dev.agentbox.etc-hosts keeps its image's /etc/hosts"
b=$T/bundle-hosts2
make_bundle "$b" 'process.args=["/bin/abtest","cat","/etc/hosts"]' 'hostname="box7"' \
  'annotations={"dev.agentbox.etc-hosts":"true"}'
mkdir -p "$b/rootfs/etc" && echo "192.0.2.7 image-own" >"$b/rootfs/etc/hosts"
out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>"$T/hosts2.err")
like "$out" $'127.0.1.1\tbox7' "with it, the bundle's /etc/hosts is agentbox's, naming its hostname"
is "$(cat "$b/rootfs/etc/hosts")" "192.0.2.7 image-own" "... mounted over the image's file, which is unchanged"

# ---- item 2: the timeout sends SIGTERM, then kills after the grace ------------------------

ws=$T/ws-term && mkdir -p "$ws"
rec term --workspace "$ws" --timeout 1s "$(new_id)" -- \
  sh -c 'trap "echo cleaned >/workspace/cleaned; exit 3" TERM; sleep 1000 & wait'
is "$(cat "$ws/cleaned" 2>&1)" cleaned "at the timeout a TERM trap runs: its file is on the host"
is "$rc/$(field term reason)/$(field term exitCode)/$(field term timeout.ended)" "3/timeout/3/terminated" \
  "... the record: reason timeout, the trap's exit status, timeout.ended terminated"
like "$(field term error.message)" 'sent SIGTERM and ended within the grace' "... and its message says so"
# sleep durations unique to this run: pgrep sees the whole host, where
# another suite may run these very tests at the same time
z=$((10000000 + $$ * 10))
rec ignore --timeout 1s --timeout-grace 1s "$(new_id)" -- \
  sh -c 'trap "" TERM; setsid sh -c "trap \"\" TERM; exec sleep '"$((z + 1))"'" & sleep '"$((z + 2))"
is "$rc/$(field ignore signal)/$(field ignore timeout.ended)/$(field ignore timeout.graceMs)" \
  "137/SIGKILL/killed/1000" "a program ignoring SIGTERM is killed after the grace: SIGKILL, timeout.ended killed"
pgrep -f "sleep ($((z + 1))|$((z + 2)))" >/dev/null
isnt $? 0 "... and its setsid'd grandchild, which ignored SIGTERM too, is gone from the host"
rec plain --timeout 1s "$(new_id)" -- sleep 1000
is "$rc/$(field plain signal)/$(field plain timeout.ended)" "143/SIGTERM/terminated" \
  "sleep as the sandbox's init (the kernel withholds SIGTERM from it) ends as if by SIGTERM, within the grace"
# A shell as the init drops SIGTERM too: anywhere else it would die of it
# with its child, so the next command of its script must never run (before:
# the child died, the shell went on, "after" was written and the run said 0).
rm -f "$ws/after" "$ws/cleaned"
rec chain --timeout 1s --workspace "$ws" "$(new_id)" -- sh -c 'sleep 1000; echo ran >/workspace/after'
is "$rc/$(field chain signal)/$(field chain timeout.ended)" "143/SIGTERM/terminated" \
  "a shell as the init, its child ended by the timeout: the shell ends by SIGTERM too"
[ ! -e "$ws/after" ]
ok $? "... and the command after the one the timeout ended never runs: no file of it on the host"
rec chain-trap --timeout 2s --workspace "$ws" "$(new_id)" -- \
  sh -c '(trap "echo cleaned >/workspace/cleaned; exit 1" TERM; sleep 1000 & wait); echo ran >/workspace/after'
is "$rc/$(cat "$ws/cleaned" 2>&1)/$(cat "$ws/after" 2>&1)" "143/cleaned/cat: $ws/after: No such file or directory" \
  "... while the TERM trap of a process it started runs first (its file is on the host)"
# An init that blocks SIGTERM and reads it (sigwaitinfo, a signalfd) takes
# it itself: it ends on its own, within the grace.
cp "$ABTEST" "$ws/abtest"
for how in wait-signal wait-signalfd; do
  rec "$how" --timeout 1s --workspace "$ws" "$(new_id)" -- /workspace/abtest "$how" TERM
  is "$rc/$(field "$how" exitCode)/$(field "$how" timeout.ended)" "0/0/terminated" \
    "an init that takes SIGTERM with $how gets the timeout's: it exits 0 by itself, within the grace"
done
rec nograce --timeout 1s --timeout-grace 0 "$(new_id)" -- sh -c 'trap "exit 3" TERM; sleep 1000 & wait'
is "$rc/$(field nograce signal)/$(field nograce timeout.ended)" "137/SIGKILL/killed" \
  "--timeout-grace 0: killed at the limit, no SIGTERM first"
id=$(new_id)
rm -f "$ws/cleaned"
rt run --default --detach --workspace "$ws" "$id" >/dev/null 2>&1
rt exec --timeout 1s --record "$T/exec-term.json" --no-stream "$id" -- \
  sh -c 'trap "echo cleaned >/workspace/cleaned; exit 4" TERM; setsid sleep '"$((z + 3))"' & sleep 1000 & wait' \
  </dev/null >/dev/null 2>&1
is "$(cat "$ws/cleaned" 2>&1)/$(field exec-term timeout.ended)" "cleaned/terminated" \
  "exec --timeout: the TERM trap of the exec'd process runs"
pgrep -f "sleep $((z + 3))" >/dev/null
isnt $? 0 "... and what it started with setsid is gone"
rt delete --force "$id" >/dev/null 2>&1
b=$T/bundle-grace
make_bundle "$b" 'process.args=["/bin/abtest","sleep-forever"]' \
  'annotations={"dev.agentbox.timeout":"1s","dev.agentbox.timeout.grace":"0"}'
rt run --bundle "$b" --record "$T/grace-ann.json" "$(new_id)" </dev/null >/dev/null 2>&1
is "$(field grace-ann timeout.graceMs)/$(field grace-ann timeout.ended)" "0/killed" \
  "a bundle's dev.agentbox.timeout.grace 0: killed at its limit"
cfg "$b/config.json" 'annotations={"dev.agentbox.timeout.grace":"soon"}'
out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
like "$out" 'annotations.dev.agentbox.timeout.grace: invalid duration "soon"' \
  "... and a malformed one is a config error naming it"

# ---- item 3: the advice follows the first limit hit -------------------------------------

# (exec: a shell that forked its sleep could fail that fork at the limit
# and end before the timeout)
rec bomb --pids 32 --timeout 2s --timeout-grace 1s "$(new_id)" -- sh -c 'f() { f | f & }; f; exec sleep 1000'
like "$(field bomb limitsHit)" '"pids".*"timeout"' "a fork bomb hits the pids limit, then the timeout"
is "$(verdict bomb)" "true limit_exceeded increase_pids_limit" \
  "... its advice follows the pids limit it hit first, not the timeout"
like "$(field bomb error.message)" 'the process limit \(pids_limit 32\)' "... and names the limit and its value"
rec threads --pids 16 "$(new_id)" -- python3 -c '
import threading, time
ts = [threading.Thread(target=time.sleep, args=(2,)) for _ in range(64)]
[t.start() for t in ts]'
is "$(verdict threads)" "true limit_exceeded increase_pids_limit" \
  "python3 failing to start threads at the pids limit: limit_exceeded, increase_pids_limit"
like "$(field threads error.message)" 'exited with status 1 after hitting the process limit \(pids_limit 16\)' \
  "... the message names the limit as the likely cause of the failure"

# ---- item 4: every limit of the built-in sandbox is listed, settable and reported --------

help=$(rt run --help 2>&1)
miss=
for want in '--memory BYTES .*default 1G' '--pids N .*default 512' '--file-size SIZE .*RLIMIT_FSIZE .*default 1G' \
  '--open-files N .*RLIMIT_NOFILE .*default 1024' '--tmp-size SIZE .*default 256M' '--home-size SIZE .*default 256M' \
  '--shm-size SIZE .*default 64M' '--workspace-size SIZE .*tmpfs /workspace' 'default 1G; limitsHit workspace' \
  '/run 16M, /dev 64M' '--timeout DUR .*default none' '--timeout-grace DUR .*default 5s' \
  '--max-output BYTES .*default 1M'; do
  grep -Eq -- "$want" <<<"$help" || miss="$miss [$want]"
done
is "$miss" "" "run --help lists every limit of the built-in sandbox with its default"
id=$(new_id)
rt run --default --detach --file-size 3M --open-files 100 --tmp-size 8M --shm-size 4M --home-size 5M \
  --workspace-size 6M "$id" >/dev/null 2>"$T/limits.err"
pid=$(pid_of "$id")
is "$(awk '/^Max file size/ { print $4, $5 } /^Max open files/ { print $4, $5 }' "/proc/$pid/limits" 2>&1 | sort | tr '\n' ' ')" \
  "100 100 3145728 3145728 " "--file-size and --open-files are the container process's RLIMIT_FSIZE and RLIMIT_NOFILE"
is "$(awk '$5 ~ /^\/(tmp|dev\/shm|root|workspace)$/ { n = split($0, a, " - "); split(a[2], f, " ")
      if (match(f[3], /size=[0-9]+k/)) print $5, substr(f[3], RSTART, RLENGTH) }' "/proc/$pid/mountinfo" | sort | tr '\n' ' ')" \
  "/dev/shm size=4096k /root size=5120k /tmp size=8192k /workspace size=6144k " \
  "--tmp-size, --shm-size, --home-size, --workspace-size: the sizes of the container's tmpfs mounts"
rt delete --force "$id" >/dev/null 2>&1
ws=$T/ws-fsize && mkdir -p "$ws"
rec fsize --workspace "$ws" "$(new_id)" -- dd if=/dev/zero of=/workspace/big bs=1 count=1 seek=1073741824
is "$(field fsize limitsHit)/$(verdict fsize)" '["file_size"]/true limit_exceeded increase_file_size' \
  "a write past 1 GiB fails with EFBIG: limitsHit file_size, limit_exceeded, increase_file_size"
like "$(field fsize error.message)" 'file size limit \(RLIMIT_FSIZE, --file-size 1073741824 bytes\)' \
  "... and the message names the limit and its value"
rm -f "$ws/big"
rec fsize-py --file-size 1M "$(new_id)" -- python3 -c 'open("/tmp/x", "wb").write(b"x" * (2 << 20))'
is "$(field fsize-py limitsHit)" '["file_size"]' "python3 (which ignores SIGXFSZ) writing past --file-size 1M: file_size"
id=$(new_id)
rt run --default --detach --file-size 1M "$id" >/dev/null 2>&1
rt exec --record "$T/xfsz.json" --no-stream "$id" -- sh -c 'exec head -c 2097152 /dev/zero >/tmp/x' </dev/null >/dev/null 2>&1
is "$(field xfsz signal)/$(field xfsz limitsHit)" 'SIGXFSZ/["file_size"]' \
  "an exec'd process killed by SIGXFSZ: limitsHit file_size (seen in its wait status)"
rt delete --force "$id" >/dev/null 2>&1
rec tmpfull --tmp-size 8M "$(new_id)" -- sh -c 'head -c 16777216 /dev/zero >/tmp/fill'
is "$(field tmpfull limitsHit)/$(field tmpfull fullMounts)" '["tmpfs"]/["/tmp"]' \
  "/tmp filled (ENOSPC): limitsHit tmpfs, fullMounts names /tmp (its statfs after the run)"
like "$(field tmpfull error.message)" '/tmp \(--tmp-size\)' "... and the message names the option that sizes it"
rec wsfull --workspace-size 4M "$(new_id)" -- sh -c 'head -c 8388608 /dev/zero >/workspace/fill'
is "$(field wsfull fullMounts)" '["/workspace"]' "the tmpfs /workspace filled: fullMounts names it"

# ---- item 5: the environment real tools expect -----------------------------------------

out=$(rt run --default "$(new_id)" -- sh -c 'echo "$USER $LOGNAME $HOME $(id -un)"' </dev/null 2>/dev/null)
is "$out" "root root /root root" "USER, LOGNAME and HOME agree with the uid (root in the sandbox)"
host_pkgs=$(dpkg-query -W -f '${Package}\n' 2>/dev/null | wc -l)
out=$(rt run --default "$(new_id)" -- sh -c 'dpkg-query -W -f "\${Package}\n" | wc -l; touch /var/lib/dpkg/x 2>&1' \
  </dev/null 2>/dev/null)
is "$(head -1 <<<"$out")" "$host_pkgs" "the host's /var/lib/dpkg is there: dpkg lists the host's packages"
like "$(tail -1 <<<"$out")" 'Read-only file system' "... read-only"
secret=/var/lib/ab25-secret-$$
mkdir -p "$secret" && echo s3cret >"$secret/token"
out=$(rt run --default "$(new_id)" -- sh -c "cat $secret/token; ls /var/lib" </dev/null 2>/dev/null)
unlike "$out" 's3cret|ab25-secret' "a service's state under /var/lib (not a package manager's) is not shown"
rm -rf "$secret"
src=$T/src && mkdir -p "$src/d" && echo tool >"$src/d/f" && ln -s "$src/d" "$T/link" && chown -R 1234:1234 "$src"
echo "[user]" >"$T/gitconfig"
id=$(new_id)
out=$(rt run --default --ro-bind "$T/link:/opt/tool" --ro-bind "$T/gitconfig:/root/.gitconfig" \
  --bind "$src/d:/root/rw" --record "$T/binds.json" "$id" -- \
  sh -c 'cat /opt/tool/f /root/.gitconfig; touch /opt/tool/x 2>&1; echo new >/root/rw/g; ls -n /root/rw/g' \
  </dev/null 2>"$T/binds.err")
like "$out" $'^tool\n\\[user\\]\n.*Read-only file system' \
  "--ro-bind: a directory (through a symlink, resolved once) and a file are shown read-only at DST"
is "$(stat -c '%u %s' "$src/d/g" 2>&1)/$(cat "$src/d/g" 2>&1)" "1234 4/new" \
  "--bind: the write lands on the host, owned by the directory's owner"
[ ! -e "$src/d/x" ]
ok $? "... and nothing was written through the read-only one"
id=$(new_id)
rt run --default --detach --ro-bind "$T/link:/opt/tool" "$id" >/dev/null 2>&1
like "$(rt audit "$id" 2>&1 | tr -s ' \n' '  ')" "/opt/tool \\[bind $src/d\\] [^[]*refusing every symlink on the path" \
  "audit ID shows the bind with its resolved source, opened refusing every symlink"
rt delete --force "$id" >/dev/null 2>&1
b=$T/bundle-nofollow
make_bundle "$b" "mounts+={\"destination\":\"/mnt\",\"type\":\"bind\",\"source\":\"$T/link\",\"options\":[\"rbind\",\"ro\"]}" \
  "annotations={\"dev.agentbox.bind-nofollow\":\"[\\\"$T/link\\\"]\"}"
out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
like "$out" 'no symlink allowed on the path' "dev.agentbox.bind-nofollow: a source that is a symlink is refused"
rt run --default --bind "$src:/proc/x" "$(new_id)" -- true </dev/null >/dev/null 2>"$T/reserved.err"
is "$?/$(grep -c 'is the sandbox.s own' "$T/reserved.err")" "2/1" "--bind onto /proc/x is refused as a usage error"
out=$(AB25_PASS='a b' AB25_NOT=x rt run --default --env-pass AB25_PASS --env-pass AB25_UNSET "$(new_id)" -- \
  sh -c 'echo "${AB25_PASS-unset} ${AB25_NOT-unset} ${AB25_UNSET-unset}"' </dev/null 2>/dev/null)
is "$out" "a b unset unset" "--env-pass NAME passes our NAME through (only those named, only when set)"

# ---- item 8: `ip netns exec` hides the cgroup filesystems -------------------------------

ns=ab25-$$
if ! ip netns add "$ns" 2>/dev/null; then
  skip "ip netns add failed (no iproute2 or not root)" 5
else
  [ "$(ip netns exec "$ns" awk '$9 ~ /^cgroup/' /proc/self/mountinfo | wc -l)" = 0 ]
  ok $? "ip netns exec shows no cgroup filesystem (the case under test)"
  id=$(new_id)
  out=$(_ab_wrap ip netns exec "$ns" sh -c '"$1" --root "$2" run --default --pids 9 "$3" -- sh -c "echo ran" &&
    awk '"'"'$9 ~ /^cgroup/'"'"' /proc/self/mountinfo | wc -l' sh "$RUNTIME" "$AB_STATE" "$id" 2>"$T/netns.err")
  is "$out" "ran
0" "under ip netns exec a sandbox runs, and the caller's namespace gains no cgroup mount"
  diag "$(cat "$T/netns.err")"
  id=$(new_id)
  _ab_wrap ip netns exec "$ns" "$RUNTIME" --root "$AB_STATE" run --default --detach --pids 9 "$id" >/dev/null 2>&1
  pid=$(pid_of "$id")
  is "$(cg_read "$pid" pids pids.max pids.max)" 9 "its pids limit is in the host's cgroup of the container"
  rt delete --force "$id" >/dev/null 2>&1
  is $? 0 "a container created under ip netns exec is deleted from outside"
  [ -z "$(find /sys/fs/cgroup -type d -name "*$id*" 2>/dev/null)" ]
  ok $? "its cgroup is gone from every hierarchy"
  ip netns del "$ns"
fi

done_testing

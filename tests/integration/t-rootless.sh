#!/bin/bash
# agentbox as an ordinary user (issue 24): the runtime runs as the
# unprivileged user $AB_RL_USER (made if missing, see lib.sh "rootless"), the
# checks run as root on the host side: a host file outside the workspace is
# untouched, a network attempt is refused and recorded, no process of the
# sandbox survives, nothing is left in the user's state root, workspace files
# belong to the user.  Also: the default state root and its owner checks,
# --rootless as runc parses it, the two id mappings (the user's own ids with
# no helper; its subordinate ranges through newuidmap/newgidmap) and the
# cgroup limits that cannot be enforced without a delegated cgroup (refused,
# or accepted and listed in the record's `degraded`).
AB_ROOTLESS=1
. "$(dirname "$0")/lib.sh"
require_runtime_commands run create start exec state kill ps delete list spec
plan_later
is_agentbox || skip_all "agentbox's rootless mode"

# The user's runtime directory: the default state root is $XDG/agentbox.
XDG=$T/xdg
mkdir -m 0700 "$XDG" && chown "$AB_RL_UID:$AB_RL_GID" "$XDG"
# urt ARGS...: the runtime as the user, with no --root (its default).
urt () { _ab_wrap "${_ab_as[@]}" XDG_RUNTIME_DIR="$XDG" "$RUNTIME" "$@"; }
# state_left: what the user's state root holds.
state_left () { ls -A "$XDG/agentbox" 2>&1; }
# record_field FILE KEY: a field of a result record's structuredContent.
record_field () { json_get "result.structuredContent.$2" <"$1"; }
# marked_procs RE: host processes whose command line (words joined by
# spaces) matches the extended regular expression RE.
marked_procs ()
{
  local p c
  for p in /proc/[0-9]*; do
    c=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") 2>/dev/null && [[ $c =~ $1 ]] && echo "${p#/proc/} $c"
  done
}
has_subids ()
{
  [ -u /usr/bin/newuidmap ] && [ -u /usr/bin/newgidmap ] &&
    awk -F: -v u="$AB_RL_USER" -v n="$AB_RL_UID" '($1 == u || $1 == n) && $3 > 0 { f = 1 } END { exit !f }' \
      /etc/subuid /etc/subgid
}

# ---- the state root -------------------------------------------------------------------------------

out=$(as_user "$AB_RL_USER" "$RUNTIME" run --default "$(new_id)" -- /bin/true 2>&1 </dev/null 7>&-)
st=$?
is "$st $(wc -l <<<"$out")" "2 1" "without XDG_RUNTIME_DIR or --root, run fails with usage status 2 and one line"
like "$out" 'XDG_RUNTIME_DIR is not set.*--root DIR' "... naming XDG_RUNTIME_DIR and --root"

out=$(urt run --default --record "$T/r-hi.json" "$(new_id)" -- /bin/sh -c 'echo hi' </dev/null 2>"$T/err")
is "$? $out" "0 hi" "run --default as the user works out of the box, state in \$XDG_RUNTIME_DIR/agentbox"
is "$(stat -c '%U %a' "$XDG/agentbox" 2>&1)" "$AB_RL_USER 700" "... which it made the user's own, mode 0700"
is "$(state_left)" "" "... and which holds nothing once the sandbox is gone"
like "$(cat "$T/r-hi.json")" '"rootless":\{"idMapping":"(single-id|subordinate-ids)","cgroup":"none"\}' \
  "the record says the run was rootless, how the ids were mapped and that it had no cgroup"
like "$(record_field "$T/r-hi.json" degraded)" 'linux.resources.memory.limit: not enforced .*no cgroup is delegated' \
  "... and lists in degraded the memory limit of the profile it could not enforce, and why"
like "$(record_field "$T/r-hi.json" degraded)" 'linux.resources.pids.limit: .*RLIMIT_NPROC' \
  "... and the pids limit, replaced by RLIMIT_NPROC"

# Another local user must not be able to pre-create, swap or read the state
# root: one of another owner, or open to the group, is refused.
mkdir -m 0700 "$T/xdg-other" && mkdir -m 0755 "$T/xdg-other/agentbox" && chown "$AB_RL_UID" "$T/xdg-other" &&
  chown 1234:1234 "$T/xdg-other/agentbox"
out=$(_ab_wrap "${_ab_as[@]}" XDG_RUNTIME_DIR="$T/xdg-other" "$RUNTIME" run --default "$(new_id)" -- /bin/true 2>&1 </dev/null)
like "$? $out" '^[1-9][0-9]* .*state directory.*1234' "a state root pre-created by another user (uid 1234) is refused, naming its owner"
is "$(ls -A "$T/xdg-other/agentbox")" "" "... and nothing was written in it"
mkdir -m 0700 "$T/xdg-g" && chown "$AB_RL_UID" "$T/xdg-g" && mkdir -m 0770 "$T/xdg-g/agentbox" &&
  chown "$AB_RL_UID:$AB_RL_GID" "$T/xdg-g/agentbox" && chmod 0770 "$T/xdg-g/agentbox"
out=$(_ab_wrap "${_ab_as[@]}" XDG_RUNTIME_DIR="$T/xdg-g" "$RUNTIME" list 2>&1 </dev/null)
like "$? $out" '^[1-9][0-9]* .*state directory.*(group|mode)' "a state root its group may write is refused"
mkdir -m 0777 "$T/open" && mkdir -m 0700 "$T/open/st" && chown "$AB_RL_UID:$AB_RL_GID" "$T/open/st"
out=$(_ab_wrap "${_ab_as[@]}" "$RUNTIME" --root "$T/open/st" list 2>&1 </dev/null)
like "$? $out" "^[1-9][0-9]* .*$T/open" "a --root inside a directory anyone may write (no sticky bit: it could be swapped) is refused, naming that directory"

# ---- --rootless as runc parses it -----------------------------------------------------------------

for form in "--rootless true" "--rootless=true" "--rootless auto" "--rootless=" "--rootless 1"; do
  # shellcheck disable=SC2086
  out=$(urt $form list -q 2>&1 </dev/null)
  is "$? $out" "0 " "\`agentbox $form list\` parses as runc's"
done
out=$(urt --rootless maybe list 2>&1 </dev/null)
like "$? $out" '^2 .*--rootless.*maybe' "--rootless maybe is a usage error naming the option and the value"

# ---- id mappings ----------------------------------------------------------------------------------

# Without a subordinate range (hidden here in a private mount namespace),
# the user's own uid and gid alone map to the container's root, with
# setgroups denied: no helper program is run.
out=$(/usr/bin/unshare --mount --propagation private -- /bin/sh -c 'for f in /etc/subuid /etc/subgid; do
  [ ! -e "$f" ] || mount --bind /dev/null "$f" || exit 99; done; exec "$@"' sh \
  "${_ab_as[@]}" XDG_RUNTIME_DIR="$XDG" "$RUNTIME" run --default --record "$T/r-single.json" "$(new_id)" -- \
  /bin/sh -c 'cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups; id -u' </dev/null 2>"$T/err")
is "$(tr -s ' \n' ' ' <<<"$out")" " 0 $AB_RL_UID 1 0 $AB_RL_GID 1 deny 0 " \
  "with no subordinate range: one id mapped ($AB_RL_UID as 0), setgroups denied, the program runs as the container's root"
is "$(record_field "$T/r-single.json" rootless.idMapping)" single-id "... and the record says single-id"

if has_subids; then
  range=$(awk -F: -v u="$AB_RL_USER" '$1 == u { print $2, $3; exit }' /etc/subuid)
  out=$(AGENTBOX_WARM_USERNS=0 urt run --default --record "$T/r-sub.json" "$(new_id)" -- /bin/cat /proc/self/uid_map \
    </dev/null 2>"$T/err")
  is "$(tr -s ' \n' ' ' <<<"$out")" " 0 $AB_RL_UID 1 1 ${range% *} ${range#* } " \
    "with an /etc/subuid range and newuidmap: the user as 0, then its whole range from 1"
  is "$(record_field "$T/r-sub.json" rootless.idMapping)" subordinate-ids "... and the record says subordinate-ids"
else
  skip "no /etc/subuid range for $AB_RL_USER or no set-uid newuidmap (package uidmap)" 2
fi

# ---- the warm user namespace (runtime/warm.h) ------------------------------------------------------

# The bundle here maps the first 1000 ids of the user's ranges: a holder of
# these maps is this file's alone (other files map whole ranges, and a
# holder serves one mapping), even when they run alongside.
if has_subids; then
  range=$(awk -F: -v u="$AB_RL_USER" '$1 == u { print $2, $3; exit }' /etc/subuid)
  grange=$(awk -F: -v u="$AB_RL_USER" '$1 == u { print $2, $3; exit }' /etc/subgid)
  umaps="0:$AB_RL_UID:1,1:${range% *}:1000" gmaps="0:$AB_RL_GID:1,1:${grange% *}:1000"
  wb=$T/warm
  make_bundle "$wb" \
    "linux.uidMappings=[{\"containerID\":0,\"hostID\":$AB_RL_UID,\"size\":1},{\"containerID\":1,\"hostID\":${range% *},\"size\":1000}]" \
    "linux.gidMappings=[{\"containerID\":0,\"hostID\":$AB_RL_GID,\"size\":1},{\"containerID\":1,\"hostID\":${grange% *},\"size\":1000}]" \
    'process.args=["/bin/cat","/proc/self/uid_map"]'
  cold=" 0 $AB_RL_UID 1 1 ${range% *} 1000 "
fi
# holders: pids of the user's live holders of these maps (an exited one may
# wait for its reaper a while: not counted).
holders ()
{
  local p
  for p in /proc/[0-9]*; do
    [ "$(stat -c %u "$p" 2>/dev/null)" = "$AB_RL_UID" ] && [ "$(cat "$p/comm" 2>/dev/null)" = agentbox-userns ] &&
      [ "$(awk '{ print $3 }' "$p/stat" 2>/dev/null)" != Z ] &&
      tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF " $umaps $gmaps" && echo "${p#/proc/}"
  done
}
# holders_gone [SECONDS]: wait (default 5 s) until none is alive.
holders_gone ()
{
  local i
  for ((i = 0; i < ${1:-5} * 10; i++)); do
    [ -z "$(holders)" ] && return 0
    sleep 0.1
  done
  return 1
}
# end_holders: end them (this file's runs started them), and wait.
end_holders ()
{
  local p
  for p in $(holders); do kill "$p" 2>/dev/null; done
  holders_gone 5
}
# serving: whether a holder of these maps listens (up to 5 s): the socket's
# /proc/net/unix flags say __SO_ACCEPTCON (it binds the name before it has
# the namespace, and listens after).
serving ()
{
  local i
  for ((i = 0; i < 50; i++)); do
    awk -v n="@agentbox-userns-1-$AB_RL_UID-u$umaps-g$gmaps" '$4 == "00010000" && $8 == n { f = 1 } END { exit !f }' \
      /proc/net/unix && return 0
    sleep 0.1
  done
  return 1
}
# inner_map: the uid_map the warm bundle's program reads (words on one line).
inner_map () { urt run --bundle "$wb" "$(new_id)" </dev/null 2>>"$T/err" | tr -s ' \n' ' '; }

if has_subids; then
  export AGENTBOX_WARM_USERNS_IDLE_MS=20000
  end_holders
  is "$(inner_map)" "$cold" "with no holder, a run maps with the helpers"
  serving
  ok $? "... and leaves a holder of a warm user namespace, serving on its socket"
  h=$(holders)
  is "$(wc -w <<<"$h") $(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' "/proc/$h/status" 2>&1)" \
    "1 $AB_RL_UID $AB_RL_UID $AB_RL_UID $AB_RL_UID" "... one process, the user's own (every uid), no privilege"
  fds=$(for f in /proc/"$h"/fd/*; do readlink "$f"; done | sed 's/:\[[0-9]*\]$//' | sort | tr '\n' ' ')
  is "$fds" "/dev/null /dev/null /dev/null socket user " \
    "... holding no fd of its caller's: stdio on /dev/null, its socket and the namespace"
  is "$(readlink "/proc/$h/cwd") $(awk '{ print ($6 == $1) }' "/proc/$h/stat" 2>&1)" "/ 1" \
    "... its cwd /, a session of its own"
  is "$(inner_map)" " 0 0 1 1 1 1000 " \
    "the next run makes its user namespace inside the warm one (seen from inside: the warm namespace's ids)"
  c1=$(new_id) c2=$(new_id)
  cfg "$wb/config.json" 'process.args=["/bin/sleep","4716"]'
  urt run --bundle "$wb" --detach "$c1" </dev/null >/dev/null 2>>"$T/err"
  urt run --bundle "$wb" --detach "$c2" </dev/null >/dev/null 2>>"$T/err"
  p1=$(urt state "$c1" 2>/dev/null | json_get pid) p2=$(urt state "$c2" 2>/dev/null | json_get pid)
  is "$(tr -s ' \n' ' ' <"/proc/$p1/uid_map" 2>&1)" "$cold" \
    "... seen from the host its maps are the user's id and range, as the helpers write them"
  n1=$(readlink "/proc/$p1/ns/user") n2=$(readlink "/proc/$p2/ns/user") nh=$(readlink "/proc/$h/fd/"* | grep '^user:')
  ok "$([ -n "$n1" ] && [ -n "$n2" ] && [ "$n1" != "$n2" ] && [ "$n1" != "$nh" ] && [ "$n2" != "$nh" ]; echo $?)" \
    "two containers from the warm namespace have user namespaces of their own ($n1, $n2; warm $nh)"
  urt kill "$c1" KILL </dev/null; urt kill "$c2" KILL </dev/null
  wait_gone "$p1" 10; wait_gone "$p2" 10
  urt delete "$c1" </dev/null; urt delete "$c2" </dev/null
  # A foreground run's supervisor enters the warm namespace itself to make
  # the container's inside it (ns.c, enter_parent_userns): it stays the
  # user's (dumpable, its ids the user's on the host), and the container
  # has a user namespace of its own below it.  With a hook it runs after
  # the clone, it does not: the hook would run in the warm namespace.
  # sup_ns ID: the user namespace of the supervisor of foreground run ID
  # (the container's parent), then the container's, then who owns the
  # supervisor's /proc/PID/status and its uids as the host sees them.
  sup_ns ()
  {
    local p s i
    for ((i = 0; i < 50; i++)); do
      p=$(urt state "$1" 2>/dev/null | json_get pid)
      [ -n "$p" ] && [ "$(urt state "$1" 2>/dev/null | json_get status)" = running ] && break
      sleep 0.1
    done
    s=$(awk '$1 == "PPid:" { print $2 }' "/proc/$p/status" 2>/dev/null)
    echo "$(readlink "/proc/$s/ns/user") $(readlink "/proc/$p/ns/user") $(stat -c %U "/proc/$s/status" 2>&1)" \
      "$(awk '$1 == "Uid:" { print $2, $3, $4, $5 }' "/proc/$s/status" 2>&1)"
  }
  id=$(new_id)
  urt run --bundle "$wb" "$id" </dev/null >/dev/null 2>>"$T/err" &
  fg=$!
  read -r ns_sup ns_ctr owner uids <<<"$(sup_ns "$id")"
  [ "$ns_sup" = "$nh" ] && [ -n "$ns_ctr" ] && [ "$ns_ctr" != "$nh" ]
  ok $? "a foreground run's supervisor is in the warm namespace ($ns_sup, warm $nh), its container in one of its own ($ns_ctr)"
  is "$owner $uids" "$AB_RL_USER $AB_RL_UID $AB_RL_UID $AB_RL_UID $AB_RL_UID" \
    "... the supervisor dumpable and the user's on the host (/proc/PID/status and its uids)"
  urt kill "$id" KILL </dev/null
  wait "$fg"
  cfg "$wb/config.json" 'hooks={"poststop":[{"path":"/bin/true"}]}'
  id=$(new_id)
  urt run --bundle "$wb" "$id" </dev/null >/dev/null 2>>"$T/err" &
  fg=$!
  read -r ns_sup ns_ctr owner uids <<<"$(sup_ns "$id")"
  [ -n "$ns_sup" ] && [ "$ns_sup" != "$nh" ] && [ "$ns_sup" = "$(readlink /proc/$$/ns/user)" ]
  ok $? "with a poststop hook it stays in the user's own namespace ($ns_sup), where the hook runs"
  urt kill "$id" KILL </dev/null
  wait "$fg"
  cfg "$wb/config.json" '!hooks'
  cfg "$wb/config.json" 'process.args=["/bin/sh","-c","echo mine >/out/made-warm; cat /proc/self/uid_map"]' \
    "mounts+={\"destination\":\"/out\",\"type\":\"bind\",\"source\":\"$T/wout\",\"options\":[\"rbind\",\"rw\"]}"
  mkdir -m 0755 "$T/wout" "$wb/rootfs/out" && chown "$AB_RL_UID:$AB_RL_GID" "$T/wout"
  is "$(inner_map)" " 0 0 1 1 1 1000 " "a warm run with a bind mount (its tree cloned by the child)"
  is "$(stat -c %u:%g "$T/wout/made-warm" 2>&1)" "$AB_RL_UID:$AB_RL_GID" "... and what it writes there belongs to the user"
  is "$(AGENTBOX_WARM_USERNS=0 inner_map)" "$cold" "AGENTBOX_WARM_USERNS=0: the helpers map, the holder is not asked"
  # The child kept the checked root directory's fd to clone its tree:
  # closed with the rest once its root is made (t-shortcuts.sh, as root).
  cfg "$wb/config.json" 'process.args=["/bin/abtest","true"]'
  id=$(new_id)
  urt create --bundle "$wb" "$id" </dev/null >/dev/null 2>>"$T/err"
  pid=$(urt state "$id" 2>/dev/null | json_get pid)
  is "$(held_fds "$pid")" "" "a created rootless init that cloned its own trees holds no fd above stdio but its sockets (seen from the host)"
  urt delete --force "$id" </dev/null
  cfg "$wb/config.json" 'process.args=["/bin/cat","/proc/self/uid_map"]'

  # Another user (root here) takes the name first and answers with a user
  # namespace of its own: never used, the run maps with the helpers.
  end_holders
  "$PYTHON3" -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind("\0" + sys.argv[1]); s.listen(8)
fd = os.open("/proc/self/ns/user", os.O_RDONLY)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    c.sendmsg([sys.argv[2].encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fd.to_bytes(4, sys.byteorder))])
    c.close()
' "agentbox-userns-1-$AB_RL_UID-u$umaps-g$gmaps" "agentbox-userns 1 u=$umaps g=$gmaps" >"$T/squat.out" 2>&1 &
  squat=$!
  for i in $(seq 50); do grep -q ready "$T/squat.out" && break; sleep 0.1; done
  is "$(inner_map)" "$cold" \
    "a holder's name taken by another user (root) is not trusted: the run maps with the helpers"
  kill "$squat"
  wait "$squat" 2>/dev/null
  end_holders

  # Idle, the holder goes.
  AGENTBOX_WARM_USERNS_IDLE_MS=800 inner_map >/dev/null
  serving
  h=$(holders)
  ok "$([ -n "$h" ] && holders_gone 5; echo $?)" "the holder exits once idle (AGENTBOX_WARM_USERNS_IDLE_MS=800)"
  is "$(grep -c "@agentbox-userns-1-$AB_RL_UID-u$umaps-" /proc/net/unix)" 0 "... and its socket is gone"
  unset AGENTBOX_WARM_USERNS_IDLE_MS
  end_holders
else
  skip "no /etc/subuid range for $AB_RL_USER or no set-uid newuidmap (package uidmap)" 18
fi

# ---- the host from outside: files, network, processes, workspace -------------------------------------

# A file of the user's outside the workspace, which the container's root
# (the user itself on the host) could write if it were reachable.
echo precious >"$T/host-file" && chown "$AB_RL_UID:$AB_RL_GID" "$T/host-file" && chmod 0666 "$T/host-file"
before=$(stat -c '%i %s %Y' "$T/host-file"; sha256sum <"$T/host-file")
mkdir -m 0755 "$T/ws" && chown "$AB_RL_UID:$AB_RL_GID" "$T/ws"
cp "$ABTEST" "$T/ws/abtest" && chown "$AB_RL_UID:$AB_RL_GID" "$T/ws/abtest"
id=$(new_id)
out=$(urt run --default --workspace "$T/ws" --record "$T/r-host.json" "$id" -- /bin/sh -c "
  echo overwritten >'$T/host-file'; echo host-write=\$?
  echo mine >/workspace/made-here; mkdir /workspace/dir
  /workspace/abtest connect tcp 192.0.2.1 80; echo connect=\$?
  cat /sys/class/net/lo/flags
  setsid /bin/sleep 4711 </dev/null >/dev/null 2>&1 &
  /bin/sleep 4712 </dev/null >/dev/null 2>&1 &
  true" </dev/null 2>"$T/err")
is "$(grep -c 'host-write=[1-9]' <<<"$out")" 1 "writing a host file outside the workspace fails in the sandbox"
is "$(stat -c '%i %s %Y' "$T/host-file"; sha256sum <"$T/host-file")" "$before" "... and the host file is untouched (inode, size, mtime, content)"
is "$(stat -c %u:%g "$T/ws/made-here" "$T/ws/dir" 2>&1 | sort -u)" "$AB_RL_UID:$AB_RL_GID" \
  "files the sandbox made in the workspace belong to the user on the host"
like "$out" $'ECONNREFUSED\nconnect=[1-9]' "a connection to 192.0.2.1:80 is refused in the sandbox"
like "$(record_field "$T/r-host.json" violations)" '"address": "192.0.2.1".*"port": 80.*"type": "egress-denied"' \
  "... and recorded as a violation in the record, by the wall in the container's own network namespace"
like "$out" $'\n0x9\n' "loopback is up in the sandbox"
is "$(marked_procs 'sleep 471[12]')" "" "no process of the sandbox survives it (a setsid child, a background child)"
is "$(state_left)" "" "nothing is left in the user's state root"

# ---- cgroup limits without delegation ------------------------------------------------------------

if [ -z "$(awk -F: '$1 == 0 { print $3 }' /proc/self/cgroup)" ] ||
  [ "$(stat -c %u "/sys/fs/cgroup$(awk -F: '$1 == 0 { print $3 }' /proc/self/cgroup)" 2>/dev/null)" != "$AB_RL_UID" ]; then
  id=$(new_id)
  out=$(urt run --default --memory 64M "$id" -- /bin/true 2>&1 </dev/null)
  like "$? $out" '^125 .*linux.resources.memory.limit: cannot be enforced: .*no cgroup is delegated.*--cgroup-parent.*--accept-degraded.*dev.agentbox.degraded=accept' \
    "--memory with no delegated cgroup fails (125) naming the limit, why, and the fixes"
  is "$(wc -l <<<"$out")" 1 "... in one line"
  is "$(state_left)" "" "... and leaves nothing in the state root"
  out=$(urt run --default --memory 64M --pids 20 --annotation dev.agentbox.degraded=accept --record "$T/r-deg.json" \
    "$(new_id)" -- /bin/sh -c 'grep "Max processes" /proc/self/limits' 2>"$T/err" </dev/null)
  like "$? $out" '^0 Max processes +20 +20 ' "accepted by the annotation, it runs, with RLIMIT_NPROC 20 for --pids 20"
  like "$(record_field "$T/r-deg.json" degraded)" '"linux.resources.memory.limit: not enforced' \
    "... and the record lists the memory limit as not enforced"
else
  skip "this test runs in a cgroup delegated to $AB_RL_USER" 5
fi

# RLIMIT_NPROC in place of pids.limit counts the container's processes in
# its user namespace, not the user's own on the host: with 30 processes of
# the user running outside, a container limited to 20 still forks 19 times
# (its first process is the 20th), then gets EAGAIN; its children are gone
# with it.
hostpids=()
for ((i = 0; i < 30; i++)); do
  # (setpriv and env exec: $! is the sleep itself, which holds no fd of ours)
  "${_ab_as[@]}" /bin/sleep 4717 </dev/null >/dev/null 2>&1 7>&- &
  hostpids+=($!)
done
out=$(urt run --default --accept-degraded --pids 20 --workspace "$T/ws" "$(new_id)" -- /workspace/abtest forkbomb 40 \
  2>"$T/err" </dev/null | tr '\n' ' ')
is "$out" "forks=19 errno=EAGAIN " \
  "--pids 20 as RLIMIT_NPROC: 19 forks, then EAGAIN, though the user has 30 more processes on the host"
kill "${hostpids[@]}" 2>/dev/null
wait "${hostpids[@]}" 2>/dev/null
is "$(marked_procs '^/workspace/abtest forkbomb')" "" "... and none of its processes is left"

# ---- spec --rootless and the lifecycle as the user --------------------------------------------------

mkdir -p "$T/sb" && make_rootfs "$T/sb/rootfs" && chown "$AB_RL_UID:$AB_RL_GID" "$T/sb"
(cd "$T/sb" && urt spec --rootless </dev/null)
is "$?" 0 "spec --rootless as the user"
like "$(json_get linux.uidMappings.0 <"$T/sb/config.json")" "\"containerID\": 0, \"hostID\": $AB_RL_UID, \"size\": 1" \
  "... maps the user's own uid to the container's root"
cfg "$T/sb/config.json" process.terminal=false 'process.args=["/bin/sh","-c","sleep 4713 & exec sleep 4714"]'
id=$(new_id)
urt create --bundle "$T/sb" "$id" </dev/null >/dev/null 2>"$T/err"
is "$? $(urt state "$id" 2>&1 | json_get status)" "0 created" "create of the spec --rootless bundle as the user"
like "$(urt state "$id" 2>&1)" '"dev.agentbox/idMapping": "(single-id|subordinate-ids)"' "state says which id mapping was used"
urt start "$id" </dev/null
is "$? $(urt state "$id" 2>&1 | json_get status)" "0 running" "start"
is "$(urt exec "$id" /bin/sh -c 'echo from-exec; id -u' </dev/null 2>&1)" "from-exec
0" "exec runs a process in it, as its root"
is "$(urt ps "$id" 2>&1 | grep -c 'sleep 471[34]')" 2 "ps lists both processes of its pid namespace (no cgroup)"
like "$(urt list 2>&1)" "$id +[0-9]+ +running .* $AB_RL_USER" "list shows it running, owned by the user"
init=$(urt state "$id" | json_get pid)
urt kill --all "$id" KILL </dev/null
ok $? "kill --all KILL"
wait_gone "$init" 10
ok $? "... ends its init"
for ((i = 0; i < 50; i++)); do [ -z "$(marked_procs 'sleep 471[34]')" ] && break; sleep 0.1; done
is "$(marked_procs 'sleep 471[34]')" "" "... and every process of it, checked from the host"
urt delete "$id" </dev/null
is "$? $(state_left)" "0 " "delete leaves the user's state root empty"

# Killed between its clone and its first state.json.  Without a cgroup the
# config snapshot and the first state.json are written once, after the
# clone (create.c, realize_state): a supervisor killed there leaves a
# container process born and nothing recorded.  That process must die with
# it (PR_SET_PDEATHSIG), and delete --force must leave nothing.
if command -v strace >/dev/null; then
  mkdir -p "$T/sk" && cp "$T/sb/config.json" "$T/sk/" && cfg "$T/sk/config.json" "root.path=\"$T/sb/rootfs\"" \
    'process.args=["/bin/true"]'
  id=$(new_id)
  _ab_wrap "${_ab_as[@]}" XDG_RUNTIME_DIR="$XDG" strace -f -qq -o "$XDG/order.st" -e trace=clone3,openat \
    "$RUNTIME" run --bundle "$T/sk" "$id" </dev/null >/dev/null 2>&1
  first_clone=$(grep -n 'clone3(' "$XDG/order.st" | head -1 | cut -d: -f1)
  snapshot=$(grep -n 'openat([0-9]*, "config.json", O_WRONLY|O_CREAT' "$XDG/order.st" | head -1 | cut -d: -f1)
  [ -n "$first_clone" ] && [ -n "$snapshot" ] && [ "$first_clone" -lt "$snapshot" ]
  ok $? "a rootless run without a cgroup writes its state (config.json first) after the clone"
  id=$(new_id)
  _ab_wrap "${_ab_as[@]}" XDG_RUNTIME_DIR="$XDG" strace -f -qq -o /dev/null -P "$XDG/agentbox/$id/config.json" \
    -e inject=write:signal=KILL:when=1 "$RUNTIME" run --bundle "$T/sk" "$id" </dev/null >/dev/null 2>&1
  is "$? $(ls -A "$XDG/agentbox/$id" 2>&1 | tr '\n' ' ')" "137 config.json " \
    "killed as it writes config.json there: the state directory holds it alone, no state.json"
  for ((i = 0; i < 50; i++)); do [ -z "$(marked_procs "run --bundle .* $id\$")" ] && break; sleep 0.1; done
  is "$(marked_procs "run --bundle .* $id\$")" "" "... and no process: the container's died with the supervisor"
  urt delete --force "$id" </dev/null
  is "$? $(state_left)" "0 " "delete --force then leaves the user's state root empty"
  rm -f "$XDG/order.st"
else
  skip "strace not installed" 4
fi

# ---- validate, pause and update without a cgroup, mcp --------------------------------------------------

urt validate --bundle "$T/sb" </dev/null >/dev/null 2>&1
is "$?" 0 "validate of the spec --rootless bundle as the user"
cp "$T/sb/config.json" "$T/sb/config.orig" &&
  cfg "$T/sb/config.json" 'linux.resources={"memory":{"limit":67108864}}'
out=$(urt validate --bundle "$T/sb" 2>&1 </dev/null)
like "$? $out" '^[1-9][0-9]* .*linux.resources.memory.limit: cannot be enforced' "validate refuses a limit this host cannot enforce, as create does"
urt validate --accept-degraded --bundle "$T/sb" </dev/null >/dev/null 2>&1
is "$?" 0 "... and accepts it with --accept-degraded"
mv "$T/sb/config.orig" "$T/sb/config.json"
id=$(new_id)
urt run --default --detach "$id" -- /bin/sleep 4716 </dev/null >/dev/null 2>"$T/err"
out=$(urt pause "$id" 2>&1 </dev/null)
like "$? $out" "^1 .*cannot pause container .$id.: it has no cgroup \(rootless, none delegated\).*--cgroup-parent" \
  "pause without a cgroup fails in one line naming the cgroup and the fix"
is "$(urt state "$id" 2>/dev/null | json_get status)" running "... and the container still runs"
out=$(urt update --pids 10 "$id" 2>&1 </dev/null)
like "$? $out" "^1 .*cannot update container .*no cgroup" "update without a cgroup fails naming it"
urt delete --force "$id" </dev/null
# One exchange with the server, its stdin held open until the answer came
# (a closed stdin ends the session, cancelling what runs).
coproc MCP { _ab_wrap "${_ab_as[@]}" XDG_RUNTIME_DIR="$XDG" "$RUNTIME" mcp 2>/dev/null; }
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sandbox_run","arguments":{"argv":["/bin/sh","-c","echo mcp; id -u"]}}}' \
  >&"${MCP[1]}"
out=
while IFS= read -r -t 60 line <&"${MCP[0]}"; do
  case $line in *'"id":2'*) out=$(json_get result.structuredContent <<<"$line"); break ;; esac
done
eval "exec ${MCP[1]}>&-"
wait "$MCP_PID"
like "$out" '"rootless": \{"cgroup": "none", "idMapping": "(single-id|subordinate-ids)"\}.*"stdout": "mcp\\n0\\n"' \
  "mcp as the user: sandbox_run runs, and its record says rootless"
is "$(state_left)" "" "nothing is left in the state root after mcp"

# ---- audit: what rootless mode weakens ------------------------------------------------------------

# findings: "ID SEVERITY PATH" of each finding of a JSON audit report.
findings ()
{
  "$PYTHON3" -c 'import json, sys
for f in json.load(sys.stdin)["findings"]: print(f["id"], f["severity"], f["path"])' 2>/dev/null
}
mkdir -p "$T/ab" && cp "$T/sb/config.json" "$T/ab/config.json" &&
  cfg "$T/ab/config.json" 'linux.resources={"memory":{"limit":67108864},"pids":{"limit":64}}' &&
  chown -R "$AB_RL_UID:$AB_RL_GID" "$T/ab"
out=$(urt audit --bundle "$T/ab" --format json 2>/dev/null </dev/null | findings)
like "$out" '(^|\n)AB-ROOTLESS-001 medium linux\.resources\.memory\.limit(\n|$)' \
  "audit as the user: the memory limit it could not enforce here is a medium finding"
like "$out" '(^|\n)AB-ROOTLESS-001 low linux\.resources\.pids\.limit(\n|$)' "... the pids limit, kept as RLIMIT_NPROC, a low one"
like "$out" '(^|\n)AB-ROOTLESS-002 medium linux\.namespaces(\n|$)' "... no cgroup (the pid namespace holds it together): medium"
like "$out" '(^|\n)AB-ROOTLESS-003 low linux\.uidMappings(\n|$)' "... its root is the user on the host: low"
out=$("$RUNTIME" audit --bundle "$T/ab" --format json 2>/dev/null </dev/null 7>&- | findings)
is "$(grep -c ROOTLESS <<<"$out")" 0 "audit of the same bundle as root reports none of them"

# ---- nested: inside a user namespace of the user's own ----------------------------------------------

# As the root of a user namespace the user made (what an unprivileged outer
# container gives), agentbox runs; the host's root shows there as the
# overflow uid, an owner outside the namespace, and is taken as root's for
# the directories above the state root.
nest () { _ab_wrap "${_ab_as[@]}" /usr/bin/unshare --user --map-root-user /bin/sh -c "$1" sh "$RUNTIME" "$T/nest"; }
out=$(nest '"$1" --root "$2" run --default n1 -- /bin/sh -c "echo nested; id -u"' 2>&1 </dev/null)
is "$? $out" "0 nested
0" "nested in the user's own user namespace, as its root, run --default works"
out=$(nest 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$1" --root "$2" run --default n2 -- true' 2>&1 </dev/null)
like "$? $out" '^125 agentbox: no user namespace can be made here: user.max_user_namespaces=0 .*: raise it \(sysctl user.max_user_namespaces=15000' \
  "where the outer namespace allows no user namespace, run fails at once naming the sysctl and the setting"
is "$(wc -l <<<"$out") $(ls -A "$T/nest" 2>&1)" "1 " "... in one line, leaving nothing in its state root"

# The other refusals, where the outer side refuses user namespaces with
# EPERM (deny-userns.py: a seccomp filter on unshare, clone3 and clone with
# CLONE_NEWUSER, as a runtime's default profile does), told apart by the
# knob that did it.  This kernel has neither Debian's nor AppArmor's knob:
# the nest sees /proc/sys/kernel as a copy of this one's with the knob
# added, bound over it in its own mount namespace.
# nest_knob NAME VALUE: the run's output and status, NAME=VALUE added ("" none).
nest_knob ()
{
  local k=$T/knob-kernel f
  rm -rf "$k" && mkdir -p "$k" || return 1
  for f in /proc/sys/kernel/*; do
    [ -f "$f" ] && cat "$f" >"$k/${f##*/}" 2>/dev/null
  done
  [ -z "$1" ] || echo "$2" >"$k/$1"
  chown -R "$AB_RL_UID:$AB_RL_GID" "$k"
  _ab_wrap "${_ab_as[@]}" /usr/bin/unshare --user --map-root-user --mount /bin/sh -c \
    'mount --bind "$3" /proc/sys/kernel && exec "$4" "$5" "$1" --root "$2" run --default n3 -- true' \
    sh "$RUNTIME" "$T/nest" "$k" "$PYTHON3" "$AB_LIBDIR/deny-userns.py" 2>&1 </dev/null
}
out=$(nest_knob unprivileged_userns_clone 0)
like "$? $out" '^125 agentbox: no user namespace can be made here: kernel\.unprivileged_userns_clone=0 \(unshare\(CLONE_NEWUSER\): Operation not permitted\): set it to 1 on the host' \
  "refused with kernel.unprivileged_userns_clone=0 (Debian's knob), run fails at once naming it and the fix"
is "$(wc -l <<<"$out") $(ls -A "$T/nest" 2>&1)" "1 " "... in one line, leaving nothing in its state root"
out=$(nest_knob apparmor_restrict_unprivileged_userns 1)
like "$? $out" "^125 agentbox: no user namespace can be made here: AppArmor's restrict_unprivileged_userns \\(kernel\\.apparmor_restrict_unprivileged_userns=1\\) denies capabilities in a new user namespace .*set it to 0, or give agentbox an AppArmor profile that allows \`userns,\`" \
  "refused with AppArmor's restrict_unprivileged_userns=1 (Ubuntu's), run names it and the profile rule that allows it"
is "$(wc -l <<<"$out") $(ls -A "$T/nest" 2>&1)" "1 " "... in one line, leaving nothing in its state root"
out=$(nest_knob "" "")
like "$? $out" '^125 agentbox: no user namespace can be made here: a seccomp filter on this process refuses unshare\(CLONE_NEWUSER\) .*podman: --security-opt seccomp=unconfined' \
  "refused by a seccomp filter alone, run names the filter and the outer container's setting"
is "$(wc -l <<<"$out") $(ls -A "$T/nest" 2>&1)" "1 " "... in one line, leaving nothing in its state root"

# ---- a delegated cgroup v2 subtree ------------------------------------------------------------------

# What systemd's Delegate=yes or an administrator's chown gives: a cgroup
# v2 directory of the user's, below this file's own cgroup.  agentbox runs
# in own/ (root moves the shell there, then becomes the user), and its
# containers go below ctr/ (--cgroup-parent), which holds no process.  On a
# hybrid host the v2 hierarchy has no controller (the limits stay listed in
# degraded), but the leaf, the freezer and cgroup.kill are there.
v2mnt=$(awk '{ split($0, p, " - "); split(p[2], f, " "); if (f[1] == "cgroup2") { print $5; exit } }' /proc/self/mountinfo)
v2own=$(sed -n 's/^0:://p' /proc/self/cgroup)
v2own=${v2own%/}
dg=ab-rl-$$
if [ -n "$v2mnt" ] && [ -n "$(sed -n 's/^0:://p' /proc/self/cgroup)" ] && mkdir -p "$v2mnt$v2own/$dg/own" "$v2mnt$v2own/$dg/ctr" &&
  chown -R "$AB_RL_UID:$AB_RL_GID" "$v2mnt$v2own/$dg"; then
  dgrt ()
  {
    _ab_wrap /bin/sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$v2mnt$v2own/$dg/own" \
      "${_ab_as[@]}" XDG_RUNTIME_DIR="$XDG" "$RUNTIME" --cgroup-parent "$v2own/$dg/ctr" "$@"
  }
  id=$(new_id)
  dgrt run --default --detach "$id" -- /bin/sleep 4715 </dev/null >/dev/null 2>"$T/err"
  pid=$(urt state "$id" 2>/dev/null | json_get pid)
  is "$(sed -n 's/^0:://p' "/proc/$pid/cgroup" 2>&1)" "$v2own/$dg/ctr/agentbox-$id" \
    "with a delegated cgroup v2 parent, the container runs in a leaf of its own below it"
  is "$(stat -c %U "$v2mnt$v2own/$dg/ctr/agentbox-$id" 2>&1)" "$AB_RL_USER" "... made by the user"
  urt pause "$id" </dev/null
  is "$? $(grep frozen "$v2mnt$v2own/$dg/ctr/agentbox-$id/cgroup.events" 2>&1)" "0 frozen 1" "pause freezes that cgroup"
  urt resume "$id" </dev/null
  urt kill --all "$id" KILL </dev/null
  wait_gone "$pid" 10
  ok $? "kill --all ends it"
  urt delete "$id" </dev/null
  is "$? $(ls -d "$v2mnt$v2own/$dg/ctr/agentbox-$id" 2>/dev/null)" "0 " "delete removes the leaf"
  out=$(urt --cgroup-parent "${v2own:-/}" run --default "$(new_id)" -- /bin/true 2>&1 </dev/null)
  like "$? $out" "^2 .*--cgroup-parent \`${v2own:-/}\`.*not delegated" "a --cgroup-parent not delegated to the user is a usage error naming it"
  rmdir "$v2mnt$v2own/$dg/own" "$v2mnt$v2own/$dg/ctr" "$v2mnt$v2own/$dg"
else
  skip "no cgroup v2 hierarchy to delegate a subtree of" 6
fi

done_testing

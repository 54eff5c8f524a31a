#!/bin/bash
# What an agent host trips over (issue 25), each checked from the host side:
# a mount namespace without cgroup filesystems (`ip netns exec`).
. "$(dirname "$0")/lib.sh"
require_runtime_commands run exec state delete
plan_later
is_agentbox || skip_all "run --default is agentbox's built-in sandbox"

# cg_file PID CONTROLLER FILE: a file of PID's v1 cgroup of CONTROLLER, or its
# v2 cgroup when the host has no v1 hierarchy with it.
cg_file ()
{
  local m p
  m=$(awk -v c="$2" '{ split($0, parts, " - "); split(parts[2], f, " "); n = split(f[3], o, ",")
    if (f[1] == "cgroup") for (i = 1; i <= n; i++) if (o[i] == c) { print $5; exit } }' /proc/self/mountinfo)
  p=$(awk -F: -v c="$2" '{ n = split($2, l, ","); for (i = 1; i <= n; i++) if (l[i] == c) { print $3; exit } }' \
    "/proc/$1/cgroup" 2>/dev/null)
  if [ -z "$m" ]; then
    m=$(awk '{ split($0, parts, " - "); split(parts[2], f, " "); if (f[1] == "cgroup2") { print $5; exit } }' \
      /proc/self/mountinfo)
    p=$(awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup" 2>/dev/null)
  fi
  [ -n "$m" ] && [ -n "$p" ] && cat "$m$p/$3"
}

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
  is "$(cg_file "$pid" pids pids.max)" 9 "its pids limit is in the host's cgroup of the container"
  rt delete --force "$id" >/dev/null 2>&1
  is $? 0 "a container created under ip netns exec is deleted from outside"
  [ -z "$(find /sys/fs/cgroup -type d -name "*$id*" 2>/dev/null)" ]
  ok $? "its cgroup is gone from every hierarchy"
  ip netns del "$ns"
fi

done_testing

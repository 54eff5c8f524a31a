#!/bin/bash
# Fault injection: `create` killed with SIGKILL at spread-out moments of
# its work (the hardened profile with every namespace, the nftables wall and
# a domain allow-list, so the egress helper is started too), then
# `delete --force`.  Wherever the kill lands, delete must succeed and leave
# nothing: no process (container, egress helper), mount, cgroup, netns or
# state -- which the leftover check of done_testing verifies on the host.
# The kill points are not chosen by timing assertions: any of them must end
# clean, so the test holds however fast the machine is.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create delete spec
is_agentbox || skip_all "the hardened profile and the egress helper are agentbox's own"
AB_BASE_CONFIG=runtime
plan_later

make_bundle "$T/b" 'process.args=["/bin/abtest","sleep-forever"]' \
  'annotations={"dev.agentbox.net.allow-domains":"example.com","dev.agentbox.net.pins":"example.com=192.0.2.1"}'
# The generated resolv.conf is bound onto it (the container's root, a mapped
# uid, cannot create it in a root-owned /etc).
: >"$T/b/rootfs/etc/resolv.conf"

# How long one whole create takes here: the kills are spread over it.
id=$(new_id)
t0=$(date +%s%N)
rt create --bundle "$T/b" "$id" </dev/null >/dev/null 2>&1
ok $? "the bundle creates normally"
full_us=$((($(date +%s%N) - t0) / 1000))
rt delete --force "$id"
diag "one create takes ${full_us} us; killing at 0..100% of it"

runs=40
failed_delete=0
for ((i = 0; i < runs; i++)); do
  id=$(new_id)
  delay=$(awk -v f="$full_us" -v i="$i" -v n="$runs" 'BEGIN { printf "%.6f", f * i / (n - 1) / 1e6 }')
  # Not through rt (whose timeout wrapper would take the signal): the
  # runtime itself must be the process killed.
  "$RUNTIME" --root "$AB_STATE" create --bundle "$T/b" "$id" </dev/null >/dev/null 2>&1 7>&- &
  pid=$!
  sleep "$delay"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if ! err=$(rt delete --force "$id" 2>&1); then
    failed_delete=$((failed_delete + 1))
    diag "delete --force after a kill at ${delay}s: $err"
  fi
  rt state "$id" >/dev/null 2>&1 && { failed_delete=$((failed_delete + 1)); diag "$id still exists"; }
done
is "$failed_delete" 0 "after $runs creates killed at spread-out moments, delete --force succeeds and the id is gone"

done_testing

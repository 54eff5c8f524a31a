#!/bin/bash
# The JSON agentbox writes conforms to the OCI schemas (tests/schema/oci):
# `spec` (config-schema), `features` (features-schema) and `state` in every
# status (state-schema); a corrupt or truncated state file is a clear error.
. "$(dirname "$0")/lib.sh"
require_runtime_commands spec features state create start delete
plan_later
check="$AB_TOP_SRCDIR/tests/schema/check.py"

if agentbox_only 7; then
  mkdir -p "$T/spec"
  (cd "$T/spec" && "$RUNTIME" spec --bundle "$T/spec" 7>&-)
  "$PYTHON3" "$check" config "$T/spec/config.json"
  ok $? "agentbox spec: the config validates against config-schema.json"
  ! (cd "$T/spec" && "$RUNTIME" spec --rootless --bundle "$T/spec" 7>&- 2>/dev/null)
  ok $? "agentbox spec refuses to overwrite an existing config.json"
  rm "$T/spec/config.json"
  (cd "$T/spec" && "$RUNTIME" spec --rootless --bundle "$T/spec" 7>&-)
  "$PYTHON3" "$check" config "$T/spec/config.json"
  ok $? "agentbox spec --rootless: the config validates against config-schema.json"

  "$RUNTIME" features 7>&- >"$T/features.json"
  "$PYTHON3" "$check" features "$T/features.json"
  ok $? "agentbox features validates against features-schema.json"
  like "$(cat "$T/features.json")" '"dev.agentbox.net.allow"' "features lists agentbox's own annotations"
  like "$(cat "$T/features.json")" '"SCMP_ACT_NOTIFY"' "features advertises seccomp notification (SCMP_ACT_NOTIFY)"
  "$PYTHON3" - "$T/features.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
assert f["ociVersionMax"] == "1.3.0" and f["ociVersionMin"] == "1.0.0"
assert set(f["linux"]["namespaces"]) == {"cgroup", "ipc", "mount", "network", "pid", "time", "user", "uts"}
assert "CAP_CHECKPOINT_RESTORE" in f["linux"]["capabilities"]
assert "rro" in f["mountOptions"] and "idmap" in f["mountOptions"]
PY
  ok $? "features: spec versions, every namespace type, capabilities and mount options"
  "$PYTHON3" - "$T/features.json" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))["linux"]
assert l["mountExtensions"]["idmap"]["enabled"] is True
assert l["netDevices"]["enabled"] is True
PY
  ok $? "features advertises what is implemented: id-mapped mounts (mountExtensions.idmap) and netDevices"
fi

make_bundle "$T/b" 'process.args=["/bin/abtest","sleep-forever"]'
id=$(new_id)
rt create --bundle "$T/b" "$id" </dev/null >/dev/null 2>&1
rt state "$id" >"$T/created.json"
"$PYTHON3" "$check" state "$T/created.json" && grep -q '"status": "created"' "$T/created.json"
ok $? "state of a created container validates against state-schema.json"
rt start "$id"
rt state "$id" >"$T/running.json"
"$PYTHON3" "$check" state "$T/running.json" && grep -q '"status": "running"' "$T/running.json"
ok $? "state of a running container validates"
rt kill "$id" KILL
wait_for_status "$id" stopped
rt state "$id" >"$T/stopped.json"
"$PYTHON3" "$check" state "$T/stopped.json" && grep -q '"status": "stopped"' "$T/stopped.json"
ok $? "state of a stopped container validates"

if agentbox_only 4; then
  f="$AB_STATE/$id/state.json"
  cp "$f" "$T/good-state.json"
  head -c 20 "$T/good-state.json" >"$f"
  out=$(rt state "$id" 2>&1)
  rc=$?
  [ $rc = 1 ] && [[ $out == *"container \`$id\`: corrupt state"* ]]
  ok $? "a truncated state file is a clear one-line error, exit 1 (got $rc: $out)"
  printf '{"id":"%s","bundle":7}' "$id" >"$f"
  out=$(rt state "$id" 2>&1)
  [[ $out == *"corrupt state"*"bundle"* ]]
  ok $? "a state file of the wrong shape names the member ($out)"
  printf '\xff\xfe' >"$f"
  out=$(rt list 2>&1)
  ok $? "list skips a container whose state is corrupt"
  cp "$T/good-state.json" "$f"
  rt delete "$id"
  ok $? "with the state repaired the container deletes"
fi
rt delete --force "$id" 2>/dev/null

done_testing

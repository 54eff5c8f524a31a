#!/bin/bash
# `state` (OCI runtime.md "State", schema/state-schema.json) and `list`.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start state kill delete list
plan_later

# state_valid JSON: the OCI state schema (required ociVersion, id, status,
# bundle; status one of creating/created/running/stopped; pid an integer
# >= 0, required while created or running; annotations a string map) plus
# runtime.md's "bundle is an absolute path".  To be replaced by a call of
# tests/schema/check.py (the real JSON schema, a colleague's) when it lands.
state_valid ()
{
  "$PYTHON3" -c '
import json, sys
s = json.loads(sys.argv[1])
def need(cond, what):
    if not cond:
        sys.exit("state: " + what)
need(isinstance(s, dict), "not an object")
for k in ("ociVersion", "id", "status", "bundle"):
    need(isinstance(s.get(k), str), k + " missing or not a string")
need(s["status"] in ("creating", "created", "running", "stopped"), "status " + s["status"])
if "pid" in s or s["status"] in ("created", "running"):
    need(type(s.get("pid")) is int and s["pid"] >= 0, "pid missing or not an integer >= 0")
if s["status"] in ("created", "running"):
    need(s["pid"] > 0, "a created or running container has no pid")
need(s["bundle"].startswith("/"), "bundle is not absolute")
a = s.get("annotations", {})
need(isinstance(a, dict) and all(isinstance(v, str) for v in a.values()), "annotations not a string map")
' "$1"
}

make_bundle "$T/b" 'process.args=["/bin/abtest","sleep-forever"]' \
  'annotations={"org.example.tool":"pytest","org.example.run":"42"}'

id=$(new_id)
rt create --bundle "$T/b" "$id" </dev/null >/dev/null 2>&1
st=$(rt state "$id")
state_valid "$st"
ok $? "the state of a created container is valid OCI state JSON"
is "$(json_get ociVersion <<<"$st" | grep -cE '^[0-9]+\.[0-9]+\.[0-9]+')" 1 "ociVersion is a version number"
is "$(json_get annotations <<<"$st")" '{"org.example.run": "42", "org.example.tool": "pytest"}' \
  "state carries the config's annotations"
rt start "$id"
st=$(rt state "$id")
state_valid "$st"
ok $? "the state of a running container is valid"
is "$(json_get status <<<"$st")" running "... and says running"
rt kill "$id" KILL
wait_for_status "$id" stopped
st=$(rt state "$id")
state_valid "$st"
ok $? "the state of a stopped container is valid"
rt delete "$id"

# ---- list -------------------------------------------------------------------------------

out=$(rt list --format json)
ok $? "list --format json with no containers succeeds"
# runc prints `null` here; an empty array is what a JSON reader expects.
like "$out" '^(null|\[\])$' "... and prints an empty JSON list (or runc's null)"
is "$(rt list -q)" "" "list -q with no containers prints nothing"

make_bundle "$T/quick" 'process.args=["/bin/abtest","true"]'
c=$(new_id)
r=$(new_id)
s=$(new_id)
rt create --bundle "$T/b" "$c" </dev/null >/dev/null 2>&1
rt create --bundle "$T/b" "$r" </dev/null >/dev/null 2>&1 && rt start "$r"
rt create --bundle "$T/quick" "$s" </dev/null >/dev/null 2>&1 && rt start "$s" && wait_for_status "$s" stopped

is "$(rt list -q | sort)" "$(printf '%s\n' "$c" "$r" "$s" | sort)" "list -q prints one id per line"
table=$(rt list)
like "$(head -1 <<<"$table")" '^ID +PID +STATUS +BUNDLE' "list prints a table headed ID PID STATUS BUNDLE"
like "$table" "^$c +$(pid_of "$c") +created +$T/b " "the table shows the created container with its pid and bundle"
like "$table" "^$r +$(pid_of "$r") +running +$T/b " "the table shows the running container"
like "$table" "^$s +0 +stopped +$T/quick " "the table shows the stopped container with pid 0"

json=$(rt list --format json)
summary=$("$PYTHON3" -c '
import json, sys
for c in sorted(json.loads(sys.argv[1]), key=lambda c: c["id"]):
    print(c["id"], c["status"], c["pid"], c["bundle"])' "$json")
is "$summary" "$(printf '%s\n' "$c created $(pid_of "$c") $T/b" "$r running $(pid_of "$r") $T/b" "$s stopped 0 $T/quick" | sort)" \
  "list --format json gives id, status, pid and bundle of every container"
is "$(rt list -f json)" "$json" "list -f json is the short form"
"$PYTHON3" -c '
import json, subprocess, sys
for c in json.loads(sys.argv[1]):
    assert isinstance(c.get("ociVersion"), str) and isinstance(c.get("created"), str), c' "$json"
ok $? "each list entry has ociVersion and created"
is "$("$PYTHON3" -c '
import json, sys
print(" ".join("%s=%s" % (c["id"], json.dumps(c.get("annotations"), sort_keys=True))
               for c in sorted(json.loads(sys.argv[1]), key=lambda c: c["id"]) if c["id"] == sys.argv[2]))' "$json" "$c")" \
  "$c={\"org.example.run\": \"42\", \"org.example.tool\": \"pytest\"}" "list --format json carries the config's annotations, as runc"

for x in "$c" "$r" "$s"; do rt delete --force "$x"; done
is "$(rt list -q)" "" "list is empty once every container is deleted"

done_testing

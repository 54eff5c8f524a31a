#!/bin/bash
# Hostile bundles and images (issue 10), each checked from the host:
#   1. a bind source through a symlink of the image never reaches the host;
#   2. capability names capabilities(7) does not define are refused;
#   3. the state root is left exactly as create found it;
#   4. a rootfs of an unmapped owner: an error naming owner, mapping and
#      fix, or an id-mapped rootfs that works with nothing chowned.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start delete validate

# ---- 2. unknown capability names ------------------------------------------

if agentbox_only 5; then
  b=$T/caps
  make_bundle --out "$b" 'process.args=["/bin/abtest","write","/out/ran","yes"]' \
    'process.capabilities.bounding=["CAP_BOGUS"]'
  out=$(rt validate --bundle "$b" 2>&1)
  st=$?
  is "$st" 1 "validate: an unknown capability is an error (exit 1)"
  is "$out" 'agentbox: config.json: process.capabilities.bounding[0]: unknown capability "CAP_BOGUS"' \
    "validate names the JSON path and the capability"
  id=$(new_id)
  rt run --bundle "$b" "$id" </dev/null >/dev/null 2>"$T/err"
  st=$?
  like "$st $(cat "$T/err")" '^125 .*process\.capabilities\.bounding\[0\]: unknown capability "CAP_BOGUS"$' \
    "run refuses it with the same path and exits 125"
  [ ! -e "$b/out/ran" ]
  ok $? "the program never ran: nothing was written to the host's $b/out"
  cfg "$b/config.json" 'process.capabilities.bounding=["CAP_KILL"]' 'process.capabilities.ambient=["CAP_KILL","CAP_KILL "]'
  rt create --bundle "$b" "$(new_id)" </dev/null >/dev/null 2>"$T/err"
  like "$? $(cat "$T/err")" '^1 .*process\.capabilities\.ambient\[1\]: unknown capability "CAP_KILL "$' \
    "create refuses a near miss in another set, naming its index"
fi

done_testing

#!/bin/bash
# The command line as orchestrators use it: flag order and forms, --log and
# --log-format, usage errors, --version.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start state delete list
plan_later

# rt_raw ARGS...: the runtime with exactly these arguments (no --root added).
rt_raw () { _ab_wrap "$RUNTIME" "$@"; }

# log_lines_ok FILE: every line is a JSON object with string level, msg, time.
log_lines_ok ()
{
  "$PYTHON3" -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines, "empty log"
for l in lines:
    o = json.loads(l)
    assert isinstance(o, dict), l
    for k in ("level", "msg", "time"):
        assert isinstance(o.get(k), str), (k, l)
' "$1"
}

# last_msg FILE: the msg of the last error line of a JSON log.
last_msg ()
{
  "$PYTHON3" -c '
import json, sys
errs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines() if json.loads(l).get("level") == "error"]
print(errs[-1]["msg"] if errs else "")' "$1"
}

make_bundle "$T/b" 'process.args=["/bin/abtest","sleep-forever"]'

# ---- subcommand flags in any order and form ------------------------------------------

id=$(new_id)
rt create "$id" --bundle "$T/b" --pid-file "$T/p1" </dev/null >/dev/null 2>&1
ok $? "create accepts its flags after the container id"
pf=$(cat "$T/p1" 2>/dev/null)
[[ $pf =~ ^[0-9]+$ ]] && [ "$pf" = "$(pid_of "$id")" ]
ok $? "... and honours them"
rt delete --force "$id"
id=$(new_id)
rt create --pid-file="$T/p2" -b "$T/b" "$id" </dev/null >/dev/null 2>&1
ok $? "create accepts -b and --pid-file=FILE"
pf=$(cat "$T/p2" 2>/dev/null)
[[ $pf =~ ^[0-9]+$ ]] && [ "$pf" = "$(pid_of "$id")" ]
ok $? "... and honours them"
rt delete --force "$id"
id=$(new_id)
rt create --bundle="$T/b" "$id" </dev/null >/dev/null 2>&1
ok $? "create accepts --bundle=DIR"
rt delete --force "$id"

# A --pid-file whose directory is missing is a usage error found before
# anything is made (exit 2, as --record there), not a create undone (125).
for cmd in create run; do
  id=$(new_id)
  err=$(rt $cmd --bundle "$T/b" --pid-file "$T/no-such-dir/pid" "$id" </dev/null 2>&1 >/dev/null)
  is "$?:$err" "2:agentbox: $cmd: --pid-file \`$T/no-such-dir/pid\`: directory \`$T/no-such-dir\`: No such file or directory (see \`agentbox $cmd --help\`)" \
    "$cmd --pid-file in a missing directory: exit 2, one line naming it"
  rt state "$id" >/dev/null 2>&1
  isnt $? 0 "... and no container $cmd made"
done
err=$(rt exec --pid-file "$T/b/config.json/pid" "no-such-id" /bin/true </dev/null 2>&1 >/dev/null)
is "$?:$err" "2:agentbox: exec: --pid-file \`$T/b/config.json/pid\`: \`$T/b/config.json\` is not a directory (see \`agentbox exec --help\`)" \
  "exec --pid-file below a file: exit 2, one line naming it"

# ---- global flags in any order and form --------------------------------------------------

id=$(new_id)
rt_raw --log "$T/g1.log" --root "$AB_STATE" --log-format=json create --bundle "$T/b" "$id" </dev/null >/dev/null 2>&1
ok $? "global flags in the order --log, --root, --log-format=json"
is "$(rt state "$id" | json_get id)" "$id" "... the container lives under that --root"
rt_raw --log-format json --log="$T/g2.log" --root="$AB_STATE" delete --force "$id" </dev/null >/dev/null 2>&1
ok $? "global flags in the order --log-format json, --log=FILE, --root=DIR"
rt state "$id" >/dev/null 2>&1
isnt $? 0 "... and the container under that --root is gone"

# ---- --log FILE --log-format json ---------------------------------------------------------

err=$(rt_raw --root "$AB_STATE" --log "$T/j1.log" --log-format=json state nosuch-$$ 2>&1 >/dev/null)
isnt $? 0 "state of an unknown id fails"
log_lines_ok "$T/j1.log"
ok $? "--log-format=json: every log line is a JSON object with level, msg and time"
like "$(last_msg "$T/j1.log")" 'does not exist' "the last error line says the container does not exist"
like "$err" 'does not exist' "the error also reaches stderr"
id=$(new_id)
rt create --bundle "$T/b" "$id" </dev/null >/dev/null 2>&1
out=$(rt_raw --root "$AB_STATE" --debug --log "$T/j4.log" --log-format json state "$id" 2>&1)
"$PYTHON3" -c 'import json, sys; json.loads(sys.argv[1])' "$out"
ok $? "--debug with --log: stdout and stderr together are the state JSON alone (go-runc parses them so)"
grep -q '"level":"debug"' "$T/j4.log"
ok $? "... the debug lines are in the log file"
rt delete --force "$id" >/dev/null 2>&1

rt_log "$T/j2.log" create --bundle "$T/missing" "$(new_id)" \
  </dev/null >/dev/null 2>&1
isnt $? 0 "create with a missing bundle fails"
log_lines_ok "$T/j2.log"
ok $? "--log-format json (two words): JSON lines again"
like "$(last_msg "$T/j2.log")" "$T/missing" "the last error line names the missing bundle"

make_bundle "$T/badcwd" 'process.cwd="relative/dir"'
rt_raw --root "$AB_STATE" --log "$T/j3.log" --log-format json create --bundle "$T/badcwd" "$(new_id)" \
  </dev/null >/dev/null 2>&1
isnt $? 0 "create with a relative process.cwd fails"
like "$(last_msg "$T/j3.log")" '[Cc]wd' "the last error line names the cwd"

id=$(new_id)
rt_raw --root "$AB_STATE" --log "$T/j4.log" --log-format json create --bundle "$T/b" "$id" </dev/null >/dev/null 2>&1
rt_raw --root "$AB_STATE" --log "$T/j4.log" --log-format json start "$id" </dev/null >/dev/null 2>&1
rt_raw --root "$AB_STATE" --log "$T/j4.log" --log-format json start "$id" </dev/null >/dev/null 2>&1
isnt $? 0 "a second start fails"
log_lines_ok "$T/j4.log"
ok $? "a log appended to by several commands still has one JSON object per line"
like "$(last_msg "$T/j4.log")" 'running' "its last error line says the container is running"
rt delete --force "$id"

rt_raw --root "$AB_STATE" --log "$T/t1.log" --log-format text state nosuch-$$ </dev/null >/dev/null 2>&1
like "$(tail -1 "$T/t1.log")" '^time=.* level=error msg=.*does not exist' \
  "--log-format text: logfmt lines, time= level= msg="
rt_raw --root "$AB_STATE" --log-format xml list </dev/null >/dev/null 2>&1
isnt $? 0 "an unknown --log-format is refused"

# ---- usage errors ------------------------------------------------------------------------

rt frobnicate </dev/null >/dev/null 2>&1
isnt $? 0 "an unknown command fails"

# --cgroup-manager (crun's spelling of the driver choice): cgroupfs works,
# systemd is refused as --systemd-cgroup is, anything else is a usage error.
if agentbox_only 6; then
  make_bundle "$T/cgm" 'process.args=["/bin/abtest","echo","ran"]'
  out=$(rt --cgroup-manager cgroupfs run --bundle "$T/cgm" "$(new_id)" </dev/null 2>&1)
  is "$? $out" "0 ran" "--cgroup-manager cgroupfs: the container runs"
  out=$(rt --cgroup-manager=cgroupfs run --bundle "$T/cgm" "$(new_id)" </dev/null 2>&1)
  is "$? $out" "0 ran" "--cgroup-manager=cgroupfs too"
  out=$(rt --cgroup-manager systemd run --bundle "$T/cgm" "$(new_id)" </dev/null 2>&1)
  is "$? $out" "2 agentbox: run: --cgroup-manager systemd: the systemd cgroup driver is not supported (use cgroupfs) (see \`agentbox run --help\`)" \
    "--cgroup-manager systemd: run is refused in one line, exit 2, like --systemd-cgroup"
  out=$(rt --systemd-cgroup create --bundle "$T/cgm" "$(new_id)" </dev/null 2>&1)
  like "$? $out" "^2 agentbox: create: --systemd-cgroup: the systemd cgroup driver is not supported" \
    "--systemd-cgroup: create is refused the same way"
  out=$(rt --cgroup-manager=systemd list -q 2>&1)
  is "$? $out" "0 " "--cgroup-manager=systemd is accepted by commands that make no cgroup (list)"
  out=$(rt --cgroup-manager disabled list 2>&1)
  like "$? $out" "^2 agentbox: --cgroup-manager: expected cgroupfs or systemd, got \`disabled\`" \
    "another --cgroup-manager value is a usage error naming it"
fi
# run --default ID OPTION...: an option after the ID is a usage error naming
# it, not a program called "--timeout" (exec failed with 127 before).
if agentbox_only 2; then
  out=$(rt run --default "$(new_id)" --timeout 1s -- sleep 10 </dev/null 2>&1)
  is "$? $out" "2 agentbox: run: \`--timeout\` after the ID: options go before it (run --default [OPTIONS] ID -- PROGRAM...) (see \`agentbox run --help\`)" \
    "run --default ID --timeout ...: a usage error (2) naming the misplaced option"
  out=$(rt run --default "$(new_id)" -- sh -c 'echo ran' </dev/null 2>&1)
  is "$? $out" "0 ran" "... while the program after \`--\` runs"
fi
rt --no-such-flag list </dev/null >/dev/null 2>&1
isnt $? 0 "an unknown global flag fails"
rt create --no-such-flag --bundle "$T/b" "$(new_id)" </dev/null >/dev/null 2>&1
isnt $? 0 "an unknown create flag fails"
rt state </dev/null >/dev/null 2>&1
isnt $? 0 "state without an id fails"
rt delete a b </dev/null >/dev/null 2>&1
isnt $? 0 "delete with two ids fails"
is "$(rt list -q)" "" "no usage error created a container"

# ---- --version -----------------------------------------------------------------------------

v=$(rt --version 2>&1)
is $? 0 "--version exits 0"
like "$(head -1 <<<"$v")" "^$AB_RUNTIME_KIND version [0-9]" "--version starts with '<name> version <n>'"
like "$v" '^spec: [0-9]+\.[0-9]+\.[0-9]+' "--version names the OCI spec version"
if [ "$AB_RUNTIME_KIND" = agentbox ]; then
  like "$v" '^libc: (glibc [0-9]+\.[0-9]+|musl)$' "--version names the C library"
fi
is "$(rt -v 2>&1)" "$v" "-v is --version, as runc's"
if [ "$AB_RUNTIME_KIND" = agentbox ]; then
  # The libraries --version says are linked in are not among the shared
  # objects the binary needs, and the others are (configure's static-libs).
  needed=$(readelf -d "$RUNTIME" | sed -n 's/.*(NEEDED).*\[\(lib[a-z]*\)\..*/\1/p' | sort | tr '\n' ' ')
  static=$(sed -n 's/^static: //p' <<<"$v")
  bad=""
  for l in libseccomp libcap libyajl libnftnl; do
    claim=$l
    [ $l = libyajl ] && claim=yajl
    if [[ " $static " == *" $claim "* ]]; then [[ " $needed " == *" $l "* ]] && bad+=" $l(static,needed)"
    elif [ "$static" != "none" ] || [[ " $needed " != *" $l "* ]]; then bad+=" $l(shared?)"
    fi
  done
  is "$bad" "" "--version's 'static: $static' matches the binary's shared libraries ($needed)"
fi

done_testing

#!/bin/bash
# agentbox audit ID on running containers: the report is checked against the
# host's own view of the container (/proc/PID/status, ns links, uid_map,
# mountinfo, the cgroup files), then the applied state is changed from the
# host behind agentbox's back (pids.max, a mount made into the container's
# mount namespace, a mount flag, a mask removed, a rule added to the wall,
# the namespace at a joined path swapped) and the audit must report each
# difference as a high AB-LIVE finding.  A file capability makes the process
# hold more than the config gives.  Where the kernel offers no way to change
# the applied state (ID maps, no_new_privs, a seccomp filter), the stored
# config is changed instead, which the audit compares with the same code.
# Last, the seccomp reachability the audit computes for three profiles is
# compared with what the kernel answers to the same syscalls in a container.
. "$(dirname "$0")/lib.sh"
is_agentbox || skip_all "agentbox audit is agentbox's own command"
require_runtime_commands create start state delete audit
AB_BASE_CONFIG=runtime # the hardened profile of `agentbox spec`
plan_later

sleeper='process.args=["/bin/abtest","sleep-forever"]'

# audit_json ID: the JSON report (and its exit status in $audit_rc).
audit_json () { rt audit "$@" --format json; }
# ids JSON: the finding ids, one per line.
ids () { "$PYTHON3" -c 'import json,sys; [print(f["id"]) for f in json.load(sys.stdin)["findings"]]' <<<"$1"; }
# finding JSON ID: "path<TAB>detail" of every finding of rule ID.
finding ()
{
  "$PYTHON3" -c 'import json,sys
for f in json.load(sys.stdin)["findings"]:
    if f["id"] == sys.argv[1]: print(f["path"] + "\t" + f["detail"])' "$2" <<<"$1"
}
# live JSON NAME: the mechanism of the live line NAME.
live ()
{
  "$PYTHON3" -c 'import json,sys
for s in json.load(sys.stdin)["mechanisms"]:
    if s["section"] == "live":
        for i in s["items"]:
            if i["name"] == sys.argv[1]: print(i["mechanism"])' "$2" <<<"$1"
}
# valid JSON: the report validates against docs/audit-schema.json.
valid ()
{
  "$PYTHON3" -c 'import json,sys,jsonschema
schema = json.load(open(sys.argv[1]))
errs = list(jsonschema.Draft7Validator(schema).iter_errors(json.loads(sys.stdin.read())))
[print(e.message) for e in errs[:5]]
sys.exit(1 if errs else 0)' "$AB_TOP_SRCDIR/docs/audit-schema.json" <<<"$1"
}
status_of () { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# ---- a hardened container, as the host sees it --------------------------------------------

make_bundle "$T/hard" "$sleeper"
id=$(new_id)
start_bg "$id" "$T/hard"
ok $? "a hardened container starts"
pid=$(pid_of "$id")
out=$(audit_json "$id")
is $? 0 "audit ID exits 0 for it (only a low finding: no CPU limit)"
valid "$out"
ok $? "the live report validates against docs/audit-schema.json"
like "$(json_get liveStatus <<<"$out")" "^running, pid $pid," "it is read live from pid $pid"
unlike "$(ids "$out")" '^AB-LIVE' "nothing applied differs from the config"
is "$(status_of "$pid" CapEff)" 0000000000000000 "the host sees no effective capability"
like "$(live "$out" CapEff)" '^none, as the config' "and the report says none"
is "$(status_of "$pid" NoNewPrivs) $(status_of "$pid" Seccomp)" "1 2" "the host sees no_new_privs and a filter"
like "$(live "$out" NoNewPrivs)$(live "$out" Seccomp)" '^1, as.*mode 2, 1 filter' "and so does the report"
map=$(awk '{ print $1, $2, $3; exit }' "/proc/$pid/uid_map")
like "$(live "$out" uid_map)" "^$map, as the config asks" "the uid_map in the report is the host's ($map)"
bad=
for ns in user mnt pid net ipc uts cgroup time; do
  [ "$(readlink "/proc/$pid/ns/$ns")" != "$(readlink "/proc/self/ns/$ns")" ] || bad="$bad $ns"
done
ok "$([ -z "$bad" ]; echo $?)" "the host sees every namespace new${bad:+ (not:$bad)}"
unlike "$(live "$out" network)$(live "$out" pid)$(live "$out" user)" "host's|own, as" \
  "and the report says so for each"
pids_max=$(cg_read "$pid" pids pids.max pids.max)
like "$(live "$out" pids.max)" "= $pids_max, as the config asks" "pids.max in the report is the host's ($pids_max)"
like "$(awk '$5 == "/" { print $6 }' "/proc/$pid/mountinfo")" '^ro' "the host sees the root mount read-only"
like "$(live "$out" /)" ' ro,' "and so does the report"
like "$(live "$out" 'nft chain output')" 'policy drop, 4 rules, as installed' \
  "the wall read from the container's netns is the one agentbox installs"
text=$(rt audit "$id")
like "$text" "^live: running, pid $pid" "the text report says it was read live"

# ---- changed from the host, behind agentbox's back ----------------------------------------

dir=$(cg_dir "$pid" pids)
echo 100 >"$dir/pids.max"
out=$(audit_json "$id")
is $? 1 "pids.max written on the host: the audit fails (a high finding)"
like "$(finding "$out" AB-LIVE-009)" "^linux\.resources\.pids\.limit.*is 100, the config asks 512" \
  "AB-LIVE-009 names the file, the value and the config's"
echo 512 >"$dir/pids.max"
unlike "$(ids "$(audit_json "$id")")" '^AB-LIVE-009' "restored: the audit reads the file again, no AB-LIVE-009"

nsenter -t "$pid" -m -- /bin/mount -t tmpfs tmpfs /root
grep -q ' /root ' "/proc/$pid/mountinfo"
ok $? "a tmpfs mounted on /root from the host, in the container's mount namespace"
out=$(audit_json "$id")
like "$(finding "$out" AB-LIVE-007)" '/root \(tmpfs' "AB-LIVE-007 reports the mount nobody asked for"

nsenter -t "$pid" -m -p -- /bin/mount -o remount,rw,suid,dev /tmp
unlike "$(awk '$5 == "/tmp" { print $6 }' "/proc/$pid/mountinfo")" nosuid "/tmp remounted suid from the host"
out=$(audit_json "$id")
like "$(finding "$out" AB-LIVE-005)" '^mounts\[[0-9]+\].*/tmp .*nosuid' "AB-LIVE-005 reports the lost nosuid of /tmp"

# A masked file this kernel has (not every kernel has /proc/kcore).
for masked in /proc/kcore /proc/keys /proc/timer_list /proc/sched_debug; do
  [ -e "/proc/$pid/root$masked" ] && break
done
is "$(stat -c %t:%T "/proc/$pid/root$masked")" 1:3 "$masked is masked with /dev/null"
nsenter -t "$pid" -m -p -- /bin/umount "$masked"
mask=$(stat -c %t:%T "/proc/$pid/root$masked") && [ "$mask" != 1:3 ]
ok $? "the mask of $masked removed from the host"
out=$(audit_json "$id")
like "$(finding "$out" AB-LIVE-006)" "^linux\.maskedPaths\[[0-9]+\].*$masked is not masked" \
  "AB-LIVE-006 reports $masked visible"
is "$(finding "$out" AB-LIVE-006 | wc -l)" 1 "and no other masked path"

if command -v nft >/dev/null; then
  nsenter -t "$pid" -n nft add rule inet agentbox output accept
  out=$(audit_json "$id")
  like "$(finding "$out" AB-LIVE-010)" 'chain output: rule 4 is not agentbox' \
    "AB-LIVE-010: a rule added to the wall from the host is reported"
  nsenter -t "$pid" -n nft delete table inet agentbox
  like "$(finding "$(audit_json "$id")" AB-LIVE-010)" 'missing from the container' \
    "AB-LIVE-010: the wall deleted is reported"
else
  skip "nft is not installed" 2
fi
unlike "$(finding "$out" AB-LIVE-001)$(finding "$out" AB-LIVE-004)$(finding "$out" AB-LIVE-008)" . \
  "what was not touched is not reported"
rt delete --force "$id" >/dev/null 2>&1

# ---- created, not started ------------------------------------------------------------------

id=$(new_id)
rt create --bundle "$T/hard" "$id" </dev/null >/dev/null 2>&1
out=$(audit_json "$id")
like "$(json_get liveStatus <<<"$out")" '^created, pid' "a created container is audited live"
like "$(live "$out" process)" 'not started' "capabilities and seccomp are not judged before start"
unlike "$(ids "$out")" '^AB-LIVE' "and nothing differs"
rt delete --force "$id" >/dev/null 2>&1

# ---- the capabilities after execve --------------------------------------------------------

# uid 0 with a bounding set wider than permitted: execve gives the bounding
# set back (capabilities(7)); with no_new_privs it cannot exceed permitted.
caps='process.capabilities={"bounding":["CAP_KILL","CAP_NET_BIND_SERVICE"],"permitted":[],"effective":[],"inheritable":[],"ambient":[]}'
make_bundle "$T/bnd" "$sleeper" "$caps" process.noNewPrivileges=false
id=$(new_id)
start_bg "$id" "$T/bnd"
pid=$(pid_of "$id")
is "$(status_of "$pid" CapEff)" 0000000000000420 "uid 0, bounding KILL and NET_BIND_SERVICE, no_new_privs off: the host sees both effective"
out=$(audit_json "$id")
like "$(live "$out" CapEff)" '^CAP_KILL, CAP_NET_BIND_SERVICE, as the config and execve give' \
  "the audit predicted exactly that"
like "$(ids "$out")" '^AB-SEC-001$' "and reports no_new_privs off"
rt delete --force "$id" >/dev/null 2>&1
make_bundle "$T/bnd2" "$sleeper" "$caps"
id=$(new_id)
start_bg "$id" "$T/bnd2"
pid=$(pid_of "$id")
is "$(status_of "$pid" CapEff)" 0000000000000000 "the same with no_new_privs: nothing effective"
unlike "$(ids "$(audit_json "$id")")" '^AB-LIVE-001' "as the audit predicted"
rt delete --force "$id" >/dev/null 2>&1

# A file capability on the program: the process holds what the config does
# not give (no user namespace: file capabilities of host root count).
if command -v setcap >/dev/null; then
  make_bundle "$T/fcap" 'process.args=["/bin/abtest-raw","sleep-forever"]' 'process.user={"uid":1000,"gid":1000}' \
    process.noNewPrivileges=false \
    'process.capabilities={"bounding":["CAP_NET_RAW"],"permitted":[],"effective":[],"inheritable":[],"ambient":[]}' \
    linux.namespaces-=user '!linux.uidMappings' '!linux.gidMappings'
  cp "$T/fcap/rootfs/bin/abtest" "$T/fcap/rootfs/bin/abtest-raw"
  setcap cap_net_raw+ep "$T/fcap/rootfs/bin/abtest-raw"
  id=$(new_id)
  start_bg "$id" "$T/fcap"
  pid=$(pid_of "$id")
  is "$(status_of "$pid" CapEff)" 0000000000002000 "a program with the file capability cap_net_raw+ep holds CAP_NET_RAW"
  like "$(finding "$(audit_json "$id")" AB-LIVE-001)" '^process\.capabilities\.effective.*CapEff is CAP_NET_RAW' \
    "AB-LIVE-001 reports it"
  rt delete --force "$id" >/dev/null 2>&1
else
  skip "setcap is not installed" 2
fi

# ---- no_new_privs, seccomp and ID maps: the stored config changed ----------------------------

id=$(new_id)
start_bg "$id" "$T/hard"
cfg "$AB_STATE/$id/config.json" process.noNewPrivileges=false '!linux.seccomp' 'linux.uidMappings[0].hostID=200000'
out=$(audit_json "$id")
like "$(finding "$out" AB-LIVE-002)" 'NoNewPrivs is 1, the config asks 0' "AB-LIVE-002: no_new_privs differs"
like "$(finding "$out" AB-LIVE-003)" 'Seccomp mode 2 with 1 filters where the config asks none' \
  "AB-LIVE-003: a filter the config does not ask for"
like "$(finding "$out" AB-LIVE-008)" '^linux\.uidMappings.*uid_map is 0 100000 65536' "AB-LIVE-008: the uid_map differs"
unlike "$(finding "$out" AB-LIVE-008)" gid_map "the gid_map, unchanged, does not"
rt delete --force "$id" >/dev/null 2>&1

# ---- a joined namespace swapped at its path -------------------------------------------------

touch "$T/ns1"
unshare --net="$T/ns1" true
make_bundle "$T/join" "$sleeper" "linux.namespaces[type=network].path=\"$T/ns1\""
id=$(new_id)
start_bg "$id" "$T/join"
pid=$(pid_of "$id")
is "$(stat -L -c %i "/proc/$pid/ns/net")" "$(stat -L -c %i "$T/ns1")" "the container joined the network namespace at $T/ns1"
out=$(audit_json "$id")
unlike "$(ids "$out")" '^AB-LIVE-004' "the audit sees it in the namespace at that path"
like "$(ids "$out")" '^AB-NET-003$' "and notes that a joined namespace gets no wall"
umount "$T/ns1" && unshare --net="$T/ns1" true
like "$(finding "$(audit_json "$id")" AB-LIVE-004)" "network namespace is not the one at $T/ns1" \
  "another namespace bound at the path: AB-LIVE-004"
rt delete --force "$id" >/dev/null 2>&1
umount "$T/ns1"

# ---- seccomp reachability against the kernel --------------------------------------------------

# The audit's verdict for each probe of abtest's `syscall` against the
# errno the kernel returns in a container with the same profile: every
# refusal of the filter is EHWPOISON (errno 133), which none of these calls
# returns on its own.  "conditionally" verdicts depend on arguments and are
# not compared.
probes="mount umount2 setns ptrace bpf perf_event_open userfaultfd io_uring_setup keyctl add_key request_key
  open_by_handle_at kexec_load init_module finit_module delete_module iopl swapon clock_settime clone3 open_tree
  move_mount"
compare_seccomp () # NAME EDIT...
{
  local name=$1 b=$T/sc-$1 verdicts got mismatch=
  shift
  make_bundle "$b" "process.args=[\"/bin/abtest\",\"syscall\",$(printf '"%s",' $probes | sed 's/,$//')]" "$@"
  # Every refusal of the profile answers EHWPOISON (clone3 has a rule of its own).
  "$PYTHON3" -c 'import json,sys
c = json.load(open(sys.argv[1]))
for r in c["linux"]["seccomp"]["syscalls"]:
    if r["action"] == "SCMP_ACT_ERRNO":
        r["errnoRet"] = 133
json.dump(c, open(sys.argv[1], "w"))' "$b/config.json"
  verdicts=$(rt audit --bundle "$b" --format json | "$PYTHON3" -c 'import json,sys
for s in json.load(sys.stdin)["mechanisms"]:
    if s["section"] == "seccomp":
        for i in s["items"]:
            print(i["name"], i["mechanism"].split(":")[0])')
  got=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>"$b/stderr")
  for p in $probes; do
    local v k
    v=$(awk -v p="$p" '$1 == p { print $2 }' <<<"$verdicts")
    k=$(sed -n "s/^$p=//p" <<<"$got")
    case $v in
      reachable) [ -n "$k" ] && [ "$k" != EHWPOISON ] || mismatch="$mismatch $p(audit reachable, kernel $k)" ;;
      blocked) [ "$k" = EHWPOISON ] || mismatch="$mismatch $p(audit blocked, kernel ${k:-nothing})" ;;
    esac
  done
  ok "$([ -z "$mismatch" ] && [ -n "$got" ]; echo $?)" "seccomp, $name: the audit's reachable and blocked are the kernel's${mismatch:+:$mismatch}"
  [ -z "$got" ] && diag "$(cat "$b/stderr")"
}
compare_seccomp "allowlist plus mount, ptrace, keyctl" linux.seccomp.defaultErrnoRet=133 \
  'linux.seccomp.syscalls+={"names":["mount","ptrace","keyctl"],"action":"SCMP_ACT_ALLOW"}'
compare_seccomp "the first unconditional entry wins" linux.seccomp.defaultErrnoRet=133 \
  'linux.seccomp.syscalls+={"names":["setns","bpf"],"action":"SCMP_ACT_ALLOW"}' \
  'linux.seccomp.syscalls+={"names":["setns","bpf","iopl"],"action":"SCMP_ACT_ERRNO","errnoRet":133}'
compare_seccomp "podman's default profile" \
  "linux.seccomp=$("$PYTHON3" -c 'import json,sys
sc = json.load(open(sys.argv[1]))["linux"]["seccomp"]
sc["defaultErrnoRet"] = 133
print(json.dumps(sc))' "$AB_TOP_SRCDIR/tests/audit/fixtures/podman-default/config.json")"
compare_seccomp "a denylist" 'linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["io_uring_setup","keyctl","mount","clone3"],"action":"SCMP_ACT_ERRNO","errnoRet":133},{"names":["ptrace"],"action":"SCMP_ACT_ERRNO","errnoRet":133,"args":[{"index":0,"value":0,"op":"SCMP_CMP_EQ"}]}]}'

done_testing

#!/bin/bash
# Namespaces, checked from the host by the inode numbers of /proc/PID/ns/*:
# every namespace the config lists is new, every other one is shared, a
# namespace with a path is joined, and a user namespace maps ids.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run state delete
plan_later

# ns_file TYPE: the /proc/PID/ns entry of an OCI namespace type.
ns_file ()
{
  case $1 in
    network) echo net ;;
    mount) echo mnt ;;
    *) echo "$1" ;;
  esac
}

# ns_ino PID NSFILE: the inode of /proc/PID/ns/NSFILE; fails (printing
# nothing) for a missing process, so no comparison passes on two blanks.
ns_ino () { [[ $1 =~ ^[0-9]+$ ]] && stat -L -c %i "/proc/$1/ns/$2" 2>/dev/null; }

# same_ns PID1 PID2 NSFILE / other_ns PID1 PID2 NSFILE
same_ns () { local a b; a=$(ns_ino "$1" "$3") && b=$(ns_ino "$2" "$3") && [ "$a" = "$b" ]; }
other_ns () { local a b; a=$(ns_ino "$1" "$3") && b=$(ns_ino "$2" "$3") && [ "$a" != "$b" ]; }

sleeper='process.args=["/bin/abtest","sleep-forever"]'

# ---- every listed namespace is new -------------------------------------------------------

all='linux.namespaces=[{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},{"type":"mount"},{"type":"cgroup"}]'
make_bundle "$T/all" "$sleeper" "$all"
a=$(new_id)
start_bg "$a" "$T/all"
ok $? "a container with pid, network, ipc, uts, mount and cgroup namespaces runs"
apid=$(pid_of "$a")
for type in pid network ipc uts mount cgroup; do
  f=$(ns_file "$type")
  other_ns "$apid" $$ "$f"
  ok $? "a $type namespace in the config is a new one (/proc/PID/ns/$f differs from the test shell's)"
done
same_ns "$apid" $$ user
ok $? "without a user namespace in the config the host's is shared"

# ---- namespaces not listed are shared ------------------------------------------------------

# (no hostname either: setting one needs a uts namespace of its own)
make_bundle "$T/few" "$sleeper" 'linux.namespaces=[{"type":"pid"},{"type":"mount"}]' '!hostname'
id=$(new_id)
start_bg "$id" "$T/few"
ok $? "a container with only pid and mount namespaces runs"
pid=$(pid_of "$id")
for type in network ipc uts; do
  f=$(ns_file "$type")
  same_ns "$pid" $$ "$f"
  ok $? "a $type namespace left out of the config is the host's"
done
rt delete --force "$id"

# ---- a namespace with a path is joined ---------------------------------------------------------

make_bundle "$T/join" "$sleeper" "$all" \
  "linux.namespaces[type=network].path:=/proc/$apid/ns/net" \
  "linux.namespaces[type=ipc].path:=/proc/$apid/ns/ipc" \
  "linux.namespaces[type=uts].path:=/proc/$apid/ns/uts"
id=$(new_id)
start_bg "$id" "$T/join"
ok $? "a container that joins another's network, ipc and uts namespaces runs"
pid=$(pid_of "$id")
for f in net ipc uts; do
  same_ns "$pid" "$apid" "$f"
  ok $? "a namespace with a path ($f) is joined, not created"
done
other_ns "$pid" "$apid" pid
ok $? "... while its pid namespace without a path is its own"
rt delete --force "$id"
rt delete --force "$a"

# ---- what the namespaces contain -------------------------------------------------------------

make_bundle "$T/view" 'process.args=["/bin/sh","-c","/bin/abtest ls /sys/class/net; /bin/abtest hostname; /bin/abtest connect tcp 192.0.2.1 80; /bin/abtest connect tcp 127.0.0.1 9"]' \
  'hostname="abtest-box"'
host_name=$(uname -n)
out=$(rt run --bundle "$T/view" "$(new_id)" </dev/null 2>/dev/null)
# runc leaves the namespace without a route (ENETUNREACH); agentbox routes
# everything to its nftables wall, which refuses (and records) the attempt
# with a reset: ECONNREFUSED, at once.
if is_agentbox; then blocked=ECONNREFUSED; else blocked=ENETUNREACH; fi
is "$out" "$(printf 'lo\nabtest-box\n%s\nECONNREFUSED' "$blocked")" \
  "a new network namespace has only lo (up), no way out; the uts namespace has the config's hostname"
is "$(uname -n)" "$host_name" "the host's hostname is untouched"

make_bundle "$T/mnt" "$sleeper"
id=$(new_id)
start_bg "$id" "$T/mnt"
pid=$(pid_of "$id")
unlike "$(cat /proc/self/mountinfo)" "$T/mnt/rootfs" "the container's mounts (its rootfs) are not in the host's mount table"
like "$(cat "/proc/$pid/mountinfo")" "^[0-9]+ [0-9]+ [0-9:]+ [^ ]*/${T##*/}/mnt/rootfs / " \
  "in the container's mount table, / is the bundle's rootfs"
rt delete --force "$id"

# ---- a user namespace maps the container's root to an unprivileged host uid --------------------

make_bundle "$T/user" "$sleeper" 'linux.namespaces+=user' \
  'linux.uidMappings=[{"containerID":0,"hostID":100000,"size":65536}]' \
  'linux.gidMappings=[{"containerID":0,"hostID":100000,"size":65536}]'
chown -R 100000:100000 "$T/user/rootfs"
id=$(new_id)
start_bg "$id" "$T/user"
ok $? "a container with a user namespace and uid/gid mappings runs"
pid=$(pid_of "$id")
other_ns "$pid" $$ user
ok $? "its user namespace is new"
is "$(awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status")" "100000" \
  "from the host, the container's root is uid 100000"
is "$(awk '{ print $1, $2, $3 }' "/proc/$pid/uid_map")" "0 100000 65536" "the uid map is the config's"
rt delete --force "$id"

# ---- agentbox's own default --------------------------------------------------------------------

if agentbox_only 2; then
  mkdir -p "$T/spec"
  (cd "$T/spec" && "$RUNTIME" spec --bundle "$T/spec" </dev/null >/dev/null 2>&1 7>&-)
  like "$(cfg "$T/spec/config.json" --get linux.namespaces 2>&1)" '"type": "network"' \
    "agentbox spec: the default config has its own network namespace"
  is "$(cfg "$T/spec/config.json" --get process.noNewPrivileges 2>&1)" "true" \
    "agentbox spec: the default config sets noNewPrivileges"
fi

done_testing

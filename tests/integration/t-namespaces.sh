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

# ---- a mount namespace joined by path ------------------------------------------------------------
# The test makes the namespace and holds it with a bind-mounted nsfs file:
# in it, the bundle's rootfs bound onto itself, a tmpfs with a marker file
# on /marker, pivot_root into the rootfs.  The container joins it by path
# and runs at its root: it sees the marker (a mount of that namespace
# only), its /proc/PID/ns/mnt is the file's namespace, and agentbox changed
# nothing there (the namespace's mountinfo is the same before and after).
# What would have agentbox mount in it, a root.path that is not its root,
# and the runtime's own mount namespace are refused by name.
if agentbox_only 19; then
  mkdir -p "$T/mntns"
  mount --bind "$T/mntns" "$T/mntns" && mount --make-private "$T/mntns" && touch "$T/mntns/ns"
  make_bundle "$T/joinmnt" 'process.args=["/bin/sh","-c","cat /marker/file; sleep 60"]' \
    'mounts=[]' 'linux.maskedPaths=[]' 'linux.readonlyPaths=[]' 'root.readonly=false' \
    'linux.namespaces=[{"type":"pid"},{"type":"ipc"},{"type":"uts"},{"type":"mount"}]' \
    "linux.namespaces[type=mount].path:=$T/mntns/ns"
  R=$T/joinmnt/rootfs
  mkdir -p "$R/marker"
  unshare --mount="$T/mntns/ns" --propagation private /bin/sh -c \
    "mount --bind '$R' '$R' && mount -t tmpfs marker '$R/marker' && echo in-the-namespace >'$R/marker/file' &&
     cd '$R' && /usr/sbin/pivot_root . . && exec /bin/umount -l ."
  ok $? "a mount namespace rooted at the rootfs is made and held by $T/mntns/ns"
  mi_before=$(nsenter --mount="$T/mntns/ns" /bin/cat /proc/self/mountinfo 2>&1)
  id=$(new_id)
  start_bg "$id" "$T/joinmnt"
  ok $? "a container joining that mount namespace by path starts"
  pid=$(pid_of "$id")
  is "$(ns_ino "${pid:-x}" mnt)" "$(stat -c %i "$T/mntns/ns")" \
    "its /proc/PID/ns/mnt is the namespace of the file (inode from the host)"
  wait_for_file "$T/joinmnt/stdout" 10
  is "$(cat "$T/joinmnt/stdout")" in-the-namespace "it sees the namespace's own tmpfs at /marker"
  is "$(rt exec "$id" /bin/cat /marker/file 2>&1 </dev/null)" in-the-namespace "... and so does a process exec'd into it"
  rt delete --force "$id"
  wait_gone "${pid:-x}"
  ok $? "delete --force ends it"
  is "$(nsenter --mount="$T/mntns/ns" /bin/cat /proc/self/mountinfo 2>&1)" "$mi_before" \
    "the namespace's mount table is as it was: agentbox mounted, pivoted and masked nothing there"

  # Refusals, each naming what to fix; validate says the same as create.
  make_bundle "$T/joinmnt-mounts" "linux.namespaces=[{\"type\":\"pid\"},{\"type\":\"uts\"},{\"type\":\"mount\",\"path\":\"$T/mntns/ns\"}]" \
    'linux.maskedPaths=[]' 'linux.readonlyPaths=[]' 'root.readonly=false'
  out=$(rt create --bundle "$T/joinmnt-mounts" "$(new_id)" 2>&1 </dev/null)
  is "$?" 1 "a joined mount namespace with mounts in the config is refused (exit 1)"
  like "$out" '^agentbox: config.json: mounts: agentbox makes no mount in a mount namespace joined by path' \
    "... in one line naming mounts"
  is "$(rt validate --bundle "$T/joinmnt-mounts" 2>&1)" "$out" "... and validate says the same"
  cfg "$T/joinmnt-mounts/config.json" 'mounts=[]' 'root.readonly=true'
  like "$(rt validate --bundle "$T/joinmnt-mounts" 2>&1)" 'config.json: root.readonly: agentbox makes no mount' \
    "root.readonly with a joined mount namespace is refused by name"
  cfg "$T/joinmnt-mounts/config.json" 'root.readonly=false' 'linux.maskedPaths=["/proc/kcore"]'
  like "$(rt validate --bundle "$T/joinmnt-mounts" 2>&1)" 'config.json: linux.maskedPaths: agentbox makes no mount' \
    "maskedPaths with a joined mount namespace are refused by name"

  make_bundle "$T/joinmnt-other" "linux.namespaces=[{\"type\":\"pid\"},{\"type\":\"uts\"},{\"type\":\"mount\",\"path\":\"$T/mntns/ns\"}]" \
    'mounts=[]' 'linux.maskedPaths=[]' 'linux.readonlyPaths=[]' 'root.readonly=false'
  out=$(rt run --bundle "$T/joinmnt-other" "$(new_id)" 2>&1 </dev/null)
  isnt "$?" 0 "a root.path that is not the joined namespace's root is refused"
  like "$out" "root.path: .* is not the root of the mount namespace" "... naming root.path"

  make_bundle "$T/joinmnt-host" 'linux.namespaces=[{"type":"pid"},{"type":"uts"},{"type":"mount","path":"/proc/self/ns/mnt"}]' \
    'mounts=[]' 'linux.maskedPaths=[]' 'linux.readonlyPaths=[]' 'root.readonly=false'
  out=$(rt create --bundle "$T/joinmnt-host" "$(new_id)" 2>&1 </dev/null)
  is "$?" 1 "joining the runtime's own mount namespace is refused"
  like "$out" "mount namespace \`/proc/self/ns/mnt\` is the host's" "... saying it is the host's"
  # A copy of the host's mount table (what `unshare --mount` leaves) has
  # the host's root directory as its root: refused, whatever root.path says.
  touch "$T/mntns/hostcopy"
  unshare --mount="$T/mntns/hostcopy" --propagation private true
  cfg "$T/joinmnt-other/config.json" "linux.namespaces[type=mount].path:=$T/mntns/hostcopy"
  out=$(rt run --bundle "$T/joinmnt-other" "$(new_id)" 2>&1 </dev/null)
  isnt "$?" 0 "a mount namespace whose root is the host's root is refused"
  like "$out" "has the host's root directory as its root" "... saying so"
  umount "$T/mntns/hostcopy"
  umount "$T/mntns/ns" && umount "$T/mntns"
  ok $? "the namespace file and its directory unmount (nothing of agentbox holds them)"
fi

# ---- what a namespace path may name ------------------------------------------------------------
# A namespace path is opened without waiting or side effects and must be a
# namespace of its entry's type: a FIFO (on which an open for reading waits
# for a writer for ever), a device node, a plain file and a namespace of
# another type are refused at once, by validate as by create, in one line
# naming the entry's path.
if agentbox_only 12; then
  mkfifo "$T/fifo" && echo plain >"$T/plain"
  make_bundle "$T/nspath" "$sleeper" \
    'linux.namespaces=[{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},{"type":"mount"}]'
  for what in "FIFO:$T/fifo" "character device:/dev/null" "regular file:$T/plain" "uts namespace:/proc/self/ns/uts"; do
    p=${what#*:}
    cfg "$T/nspath/config.json" "linux.namespaces[type=network].path:=$p"
    vout=$(rt validate --bundle "$T/nspath" 2>&1 </dev/null)
    vst=$?
    # (a create that waits is killed after 20 s: status 124; one that
    # succeeds leaves its process holding stdout, so not a pipe)
    AB_RT_TIMEOUT=20 rt create --bundle "$T/nspath" "$(new_id)" </dev/null >/dev/null 2>"$T/create.err"
    is "$?" 1 "a network namespace path that is a ${what%%:*} is refused by create, which does not wait on it"
    out=$(cat "$T/create.err")
    like "$out" "^agentbox: config.json: linux.namespaces\[1\]\.path: network namespace \`$p\` (is not a namespace file \(/proc/PID/ns/net, or a bind mount of one\)|is a namespace of another type \(uts\))$" \
      "... in one line naming linux.namespaces[1].path"
    is "$vst:$vout" "1:$out" "... and validate refuses it with the same line"
  done
fi

# ---- settings in a namespace joined by path that is the runtime's own ----------------------------
# A namespace joined by path that is the runtime's own is the host's: a
# sysctl or hostname set there would change the host.  The runtime runs
# here inside network, IPC and UTS namespaces this file makes (held by
# bind-mounted nsfs files), so "its own" are those, and even a failing
# check changes nothing of the real host's; their settings are read from
# outside the container, before and after.
if agentbox_only 18; then
  mkdir -p "$T/own"
  mount --bind "$T/own" "$T/own" && mount --make-private "$T/own" && touch "$T/own/net" "$T/own/ipc" "$T/own/uts" &&
    unshare --net="$T/own/net" --ipc="$T/own/ipc" --uts="$T/own/uts" /bin/sh -c \
      'hostname ns-host && echo ns-domain >/proc/sys/kernel/domainname'
  ok $? "network, IPC and UTS namespaces for the runtime to run in are made and held by files in $T/own"
  in_own () { nsenter --net="$T/own/net" --ipc="$T/own/ipc" --uts="$T/own/uts" -- "$@"; }
  rt_own () { _ab_wrap nsenter --net="$T/own/net" --ipc="$T/own/ipc" --uts="$T/own/uts" -- "$RUNTIME" --root "$AB_STATE" "$@"; }
  own_all='linux.namespaces=[{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},{"type":"mount"}]'
  host_ttl=$(cat /proc/sys/net/ipv4/ip_default_ttl)
  ttl=$(in_own cat /proc/sys/net/ipv4/ip_default_ttl)
  msgmax=$(in_own cat /proc/sys/kernel/msgmax)

  # refused KEY JSON-EDITS...: create and validate, run in those namespaces,
  # refuse with the same one line naming KEY (a JSON path).
  refused ()
  {
    local key=$1 b out vout vst re
    b=$T/own-$(printf '%s' "$key" | tr -c 'A-Za-z0-9' -)
    re=$(printf '%s' "$key" | sed 's/[.]/\\./g')
    shift
    make_bundle "$b" "$sleeper" "$own_all" "$@"
    vout=$(rt_own validate --bundle "$b" 2>&1 </dev/null)
    vst=$?
    rt_own create --bundle "$b" "$(new_id)" </dev/null >/dev/null 2>"$T/create.err"
    is "$?" 1 "create refuses $key in a namespace joined by path that is the runtime's own"
    out=$(cat "$T/create.err")
    like "$out" "^agentbox: config.json: $re: would change the host's: linux.namespaces\[[0-9]\]\.path \`/proc/self/ns/[a-z]+\` is the runtime's own [a-z]+ namespace" \
      "... in one line naming $key"
    is "$vst:$vout" "1:$out" "... and validate refuses it with the same line"
  }
  refused linux.sysctl.net.ipv4.ip_default_ttl 'linux.namespaces[type=network].path:=/proc/self/ns/net' \
    "linux.sysctl={\"net.ipv4.ip_default_ttl\":\"$((ttl - 1))\"}"
  is "$(in_own cat /proc/sys/net/ipv4/ip_default_ttl):$(cat /proc/sys/net/ipv4/ip_default_ttl)" "$ttl:$host_ttl" \
    "... and the runtime's network namespace keeps its ip_default_ttl (as does the host)"
  refused linux.sysctl.kernel.msgmax 'linux.namespaces[type=ipc].path:=/proc/self/ns/ipc' \
    "linux.sysctl={\"kernel.msgmax\":\"$((msgmax / 2))\"}"
  is "$(in_own cat /proc/sys/kernel/msgmax)" "$msgmax" "... and the runtime's IPC namespace keeps its kernel.msgmax"
  refused hostname 'linux.namespaces[type=uts].path:=/proc/self/ns/uts' 'hostname="abtest-box"'
  is "$(in_own hostname)" ns-host "... and the runtime's UTS namespace keeps its hostname"

  # An empty hostname or domainname is none: without a UTS namespace of the
  # container's (so in the runtime's own) it is not set.
  make_bundle "$T/own-empty" "$own_all" 'linux.namespaces-=uts' 'hostname=""' 'domainname=""'
  rt_own run --bundle "$T/own-empty" "$(new_id)" </dev/null >/dev/null 2>&1
  is "$?" 0 "a container without a UTS namespace and with an empty hostname and domainname runs"
  is "$(in_own hostname):$(in_own cat /proc/sys/kernel/domainname)" ns-host:ns-domain \
    "... and the runtime's hostname and domainname are unchanged"

  # The same namespace is no host's to a runtime outside it: joined, it
  # takes the config's sysctl.
  make_bundle "$T/own-pod" "$own_all" "linux.namespaces[type=network].path:=$T/own/net" \
    "linux.sysctl={\"net.ipv4.ip_default_ttl\":\"$((ttl - 1))\"}"
  rt run --bundle "$T/own-pod" "$(new_id)" </dev/null >/dev/null 2>&1
  is "$?" 0 "a network namespace joined by path that is not the runtime's own takes a sysctl"
  is "$(in_own cat /proc/sys/net/ipv4/ip_default_ttl)" "$((ttl - 1))" "... set in that namespace"
  umount "$T/own/net" && umount "$T/own/ipc" && umount "$T/own/uts" && umount "$T/own"
  ok $? "the namespace files and their directory unmount (nothing of agentbox holds them)"
fi

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

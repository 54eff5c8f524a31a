#!/bin/bash
# What the runc/crun CVE history taught, replayed against the runtime: the
# rootfs and the workload are hostile.  Every check is made from the host:
# host paths and the host mount table untouched, the runtime binary's hash
# unchanged, the container's mounts read from /proc/PID/mountinfo.
#   - symlinked mount destinations (CVE-2021-30465 and its kin) land inside
#     the rootfs;
#   - a process.cwd through symlinks or /proc/self/fd (CVE-2024-21626) never
#     leaves the root;
#   - /proc/PID/exe of the runtime (CVE-2019-5736) cannot be written;
#   - a masked path with /dev/null swapped for a symlink (CVE-2023-27561
#     style) is refused or harmless;
#   - mount options are effective: nosuid, nodev, noexec, ro; tmpcopyup; a
#     bound file; an id-mapped bind writes files owned by the host directory's
#     owner.
# The generic parts use the runc-like config (container root is host root,
# the strongest attacker a runtime must survive).
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run exec state delete
plan_later

# mounts_of PID: the container's mount table as the host reads it.
mounts_of () { cat "/proc/$1/mountinfo" 2>/dev/null; }
# the host's mount table that an escaped mount could hit: in the test
# directory (but the runtime's own state directory, where a detached
# container's network namespace is kept), /etc, and the symlinks' names at
# the host's root.  (Parallel tests may mount elsewhere.)
host_mounts ()
{
  awk -v t="$T/" -v s="$AB_STATE/" '(index($5, t) == 1 && index($5, s) != 1) || $5 ~ "^/(etc|mnt|up|hostabs|dangle)(/|$)" { print $5 }' \
    /proc/self/mountinfo | sort
}

# inside_root PID: whether PID's cwd is a directory of its root filesystem
# (found by inode under /proc/PID/root, not leaving its file system).
inside_root ()
{
  local ino dev rdev
  ino=$(stat -L -c %i "/proc/$1/cwd" 2>/dev/null) || return 1
  dev=$(stat -L -c %d "/proc/$1/cwd") && rdev=$(stat -L -c %d "/proc/$1/root") || return 1
  [ "$dev" = "$rdev" ] || return 1
  [ -n "$(find "/proc/$1/root/" -xdev -type d -inum "$ino" -print -quit 2>/dev/null)" ]
}

sleeper='process.args=["/bin/abtest","sleep-forever"]'

# ---- symlinked mount destinations --------------------------------------------------------

mkdir -p "$T/victim"
echo canary >"$T/victim/canary"
host_before=$(host_mounts)

make_bundle "$T/symdst" "$sleeper" \
  'mounts+={"destination":"/mnt","type":"tmpfs","source":"tmpfs","options":["size=1m"]}' \
  'mounts+={"destination":"/up/sub","type":"tmpfs","source":"tmpfs","options":["size=1m"]}' \
  "mounts+={\"destination\":\"/hostabs\",\"type\":\"bind\",\"source\":\"$T/symdst/rootfs/bin\",\"options\":[\"rbind\",\"ro\"]}"
# /mnt -> /etc (absolute), /up -> a .. chain that walks out of the rootfs
# on the host and into $T/victim, /hostabs -> $T/victim by its host path.
# Inside the rootfs the targets exist too ($T/victim in the rootfs): that is
# where the mounts must land.
ln -s /etc "$T/symdst/rootfs/mnt"
ln -s "../../../../../../../../../../..$T/victim" "$T/symdst/rootfs/up"
ln -s "$T/victim" "$T/symdst/rootfs/hostabs"
mkdir -p "$T/symdst/rootfs$T/victim"
id=$(new_id)
start_bg "$id" "$T/symdst"
ok $? "a container whose mount destinations are symlinks out of the rootfs starts (they resolve inside it)"
pid=$(pid_of "$id")
mi=$(mounts_of "$pid")
like "$mi" '^[0-9]+ [0-9]+ [0-9:]+ / /etc rw.* - tmpfs ' "a tmpfs on /mnt -> /etc lands on the container's /etc"
like "$mi" "^[0-9]+ [0-9]+ [0-9:]+ / $T/victim/sub rw.* - tmpfs " \
  "a tmpfs on /up/sub (/up a .. chain) lands on the container's own $T/victim/sub"
like "$mi" "^[0-9]+ [0-9]+ [0-9:]+ [^ ]*/bin $T/victim ro" "the bind on /hostabs lands on the container's own $T/victim"
is "$(host_mounts)" "$host_before" "the host's mount table is unchanged"
is "$(ls -A "$T/victim")" canary "the host's $T/victim is untouched: nothing created in it"
[ -f /etc/passwd ] && [ ! -e /etc/sub ] && ! grep -q " /etc tmpfs " /proc/self/mounts
ok $? "the host's /etc is not mounted over"
[ -d "$T/symdst/rootfs$T/victim/sub" ]
ok $? "the missing directory was created inside the rootfs ($T/symdst/rootfs$T/victim/sub)"
rt delete --force "$id"

# A symlink that dangles inside the rootfs but resolves on the host.
mkdir -p "$T/victim2"
make_bundle "$T/dangle" 'mounts+={"destination":"/dangle/sub","type":"tmpfs","source":"tmpfs","options":["size=1m"]}'
ln -s "../../../../../../../../../../..$T/victim2" "$T/dangle/rootfs/dangle"
rt run --bundle "$T/dangle" "$(new_id)" </dev/null >/dev/null 2>"$T/dangle/err"
st=$?
[ -z "$(ls -A "$T/victim2")" ] && [ "$(host_mounts)" = "$host_before" ]
ok $? "a destination through a symlink that dangles in the rootfs never reaches the host's $T/victim2 (status $st)"
if [ $st = 0 ]; then
  [ -d "$T/dangle/rootfs$T/victim2/sub" ]
  ok $? "... the runtime created it inside the rootfs"
else
  diag "refused: $(cat "$T/dangle/err")"
  skip "the runtime refused the dangling destination (agentbox: it does not create a symlink's missing target)"
fi

# ---- hostile process.cwd -------------------------------------------------------------------

make_bundle "$T/cwd" "$sleeper"
ln -s "../../../../../../../../../../../.." "$T/cwd/rootfs/dotdot"
id=$(new_id)
cfg "$T/cwd/config.json" process.cwd:=/dotdot
start_bg "$id" "$T/cwd"
ok $? "a process.cwd that is a .. chain starts"
pid=$(pid_of "$id")
is "$(stat -L -c %d:%i "/proc/$pid/cwd" 2>&1)" "$(stat -L -c %d:%i "/proc/$pid/root" 2>&1)" \
  "... and the chain stops at the container's root: the cwd is the root, seen from the host"
rt delete --force "$id"

# /proc/self/fd/N, directly or through a symlink in the rootfs: a
# directory fd the runtime held open (the state directory, the rootfs, a
# cgroup) must never become the cwd.
escaped=""
refused=0
for n in 3 4 5 6 7 8 9 10 11 12; do
  for form in direct link; do
    if [ $form = direct ]; then
      cwd=/proc/self/fd/$n
    else
      rm -f "$T/cwd/rootfs/fdlink"
      ln -s "/proc/self/fd/$n" "$T/cwd/rootfs/fdlink"
      cwd=/fdlink
    fi
    cfg "$T/cwd/config.json" "process.cwd:=$cwd"
    id=$(new_id)
    if start_bg "$id" "$T/cwd" 2>/dev/null; then
      pid=$(pid_of "$id")
      inside_root "$pid" || escaped="$escaped $cwd($(readlink "/proc/$pid/cwd"))"
    else
      refused=$((refused + 1))
    fi
    rt delete --force "$id" >/dev/null 2>&1
  done
done
is "$escaped" "" "a cwd of /proc/self/fd/N (N = 3..12, directly or through a symlink) never lands outside the root"
diag "  $refused of 20 such configs were refused at create"
if agentbox_only; then
  is "$refused" 20 "agentbox refuses every one of them (openat2 RESOLVE_NO_MAGICLINKS)"
fi

# ---- /proc/PID/exe of the runtime -----------------------------------------------------------
# The runtime under test is a copy, so that an attack that succeeded
# damages nothing but the copy (and shows in its hash).

cp "$RUNTIME" "$T/runtime-copy"
sum_before=$(sha256sum <"$T/runtime-copy")
rtc () { RUNTIME=$T/runtime-copy rt "$@"; }
# exe_kind PID: what the process runs from, seen from the host: `overlay`
# (a read-only overlay of the runtime's directory, attached nowhere: its
# /proc/PID/exe is on overlayfs and is not the runtime's own file),
# `memfd` (the sealed copy, where overlay cannot be mounted), or `file`.
exe_kind ()
{
  local l
  l=$(readlink "/proc/$1/exe" 2>/dev/null) || { echo gone; return; }
  case $l in
    /memfd:agentbox*) echo memfd ;;
    "$T/runtime-copy") echo file ;;
    *) if [ "$(stat -f -L -c %T "/proc/$1/exe" 2>/dev/null)" = overlayfs ]; then echo overlay; else echo "file ($l)"; fi ;;
  esac
}

make_bundle --out "$T/exe" "$sleeper"
id=$(new_id)
rtc create --bundle "$T/exe" "$id" </dev/null >"$T/exe/stdout" 2>"$T/exe/stderr"
ok $? "create a container with a copy of the runtime"
ipid=$(pid_of "$id")
# What agentbox runs from: the overlay, or the sealed copy on a kernel
# without overlayfs (the create above has made the kernel load it).
want_exe=$(grep -qw overlay /proc/filesystems && echo overlay || echo memfd)
# (runc 1.1 protects itself with a read-only clone of its binary instead)
if agentbox_only 2; then
  is "$(exe_kind "$ipid")" "$want_exe" "the created container's init runs from a read-only overlay of the runtime, not from its file"
  # Host root clears the read-only flag of that mount through the init's
  # /proc/PID/exe (mount_setattr on an O_PATH fd), then opens it for
  # writing: the overlay's superblock stays read-only.
  if [ "$want_exe" = overlay ]; then
    out=$("$PYTHON3" -c '
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/proc/%s/exe" % sys.argv[1], os.O_PATH)
attr = struct.pack("QQQQ", 0, 1, 0, 0)  # attr_clr = MOUNT_ATTR_RDONLY
r = libc.syscall(442, fd, b"", 0x1000, attr, len(attr))  # mount_setattr, AT_EMPTY_PATH
print("cleared" if r == 0 else "refused:%d" % ctypes.get_errno(), end=" ")
try:
    os.open("/proc/self/fd/%d" % fd, os.O_WRONLY)
    print("writable")
except OSError as e:
    print("write:" + os.strerror(e.errno))' "$ipid" 2>&1)
    like "$out" 'write:Read-only file system$' "... with the mount's read-only flag cleared by host root, writing through /proc/PID/exe still fails (EROFS)"
  else
    skip "no overlayfs in this kernel: agentbox runs from the sealed copy (checked below)"
  fi
fi
# Where no overlay can be made of the runtime's directory (here: a name
# overlay's lowerdir cannot hold), the sealed memfd copy instead.
if agentbox_only 3; then
  mkdir -p "$T/odd:dir"
  cp "$RUNTIME" "$T/odd:dir/agentbox"
  idm=$(new_id)
  RUNTIME="$T/odd:dir/agentbox" rt create --bundle "$T/exe" "$idm" </dev/null >/dev/null 2>"$T/exe/stderr-odd"
  ok $? "create with the runtime in a directory named with a colon"
  mpid=$(pid_of "$idm")
  like "$(readlink "/proc/$mpid/exe" 2>&1)" '^/memfd:agentbox' "... its init runs from the sealed memfd copy"
  seals=$("$PYTHON3" -c '
import fcntl, os, sys
fd = os.open("/proc/%s/exe" % sys.argv[1], os.O_RDONLY)
print(fcntl.fcntl(fd, fcntl.F_GET_SEALS) & 15)' "$mpid" 2>&1)
  is "$seals" 15 "... sealed against writes, growth, shrinking and new seals (F_GET_SEALS from the host)"
  RUNTIME="$T/odd:dir/agentbox" rt delete --force "$idm" >/dev/null 2>&1
fi
# the host's root as the attacker, through the init's /proc/PID/exe
out=$("$ABTEST" write-exe "$ipid")
isnt $? 0 "even host root cannot write the runtime through the init's /proc/PID/exe"
diag "$(tr '\n' ' ' <<<"$out")"

# A second container joins the first one's pid namespace and waits in
# created state: its init (the runtime) is visible to the first one's
# processes, which try to overwrite it (runc-like config: they are host root).
make_bundle "$T/exe2" "$sleeper" "linux.namespaces[type=pid].path:=/proc/$ipid/ns/pid"
rtc start "$id"
id2=$(new_id)
rtc create --bundle "$T/exe2" "$id2" </dev/null >"$T/exe2/stdout" 2>"$T/exe2/stderr"
ok $? "a second container joins the first one's pid namespace and stays created"
init2=$(pid_of "$id2")
nspid=$(awk '$1 == "NSpid:" { print $NF }' "/proc/$init2/status" 2>/dev/null)
out=$(rtc exec "$id" /bin/abtest write-exe "${nspid:-0}" 2>&1)
isnt $? 0 "a container process cannot write the runtime through /proc/$nspid/exe of a created init it can see"
diag "$(tr '\n' ' ' <<<"$out")"
rtc delete --force "$id2"

# While a container process watches its pid namespace for processes that
# came from outside and tries to overwrite their executables, the host runs
# `exec` in it again and again.
rtc exec -d "$id" /bin/sh -c '/bin/abtest exe-attack 120000 /out/stop >/out/attack.tmp; mv /out/attack.tmp /out/attack' \
  </dev/null >/dev/null 2>&1
ok $? "an attacker process watches the container's pid namespace"
execs=0
for i in $(seq 1 25); do
  rtc exec "$id" /bin/abtest true </dev/null >/dev/null 2>&1 && execs=$((execs + 1))
done
is "$execs" 25 "25 execs into the attacked container succeed"
# the foreground `exec` itself: its exe on the host is the read-only overlay too
rtc exec "$id" /bin/abtest sleep 30 </dev/null >/dev/null 2>&1 &
bgexec=$!
if agentbox_only; then
  xpid=""
  for ((i = 0; i < 100; i++)); do
    # The topmost match: agentbox's own child has the same command line
    # and the overlay for an instant before it execs the program, and on a
    # loaded machine the loop may see it.
    for p in /proc/[0-9]*; do
      { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q -- "--root $AB_STATE exec $id /bin/abtest sleep 30" || continue
      [[ $(exe_kind "${p#/proc/}") == "$want_exe" ]] || continue
      # (the wrapper `timeout` above it has the same arguments, not the overlay)
      pp=$(ppid_of "${p#/proc/}")
      [[ $(exe_kind "$pp") == "$want_exe" ]] &&
        { tr '\0' ' ' <"/proc/$pp/cmdline"; } 2>/dev/null |
        grep -q -- "--root $AB_STATE exec $id /bin/abtest sleep 30" && continue
      xpid=${p#/proc/}
    done
    [ -n "$xpid" ] && break
    sleep 0.1
  done
  is "$(exe_kind "${xpid:-0}")" "$want_exe" "a running \`agentbox exec\` runs from the read-only overlay (host pid ${xpid:-none})"
fi
touch "$T/exe/out/stop"
wait_for_file "$T/exe/out/attack" 30
attack=$(cat "$T/exe/out/attack" 2>/dev/null)
diag "attacker: $(tr '\n' ' ' <<<"$attack")"
like "$attack" '^written=0$' "the attacker never wrote an executable that came from outside the container"
kill "$bgexec" 2>/dev/null
wait "$bgexec" 2>/dev/null
rtc delete --force "$id"
is "$(sha256sum <"$T/runtime-copy")" "$sum_before" "the runtime binary's hash is unchanged after all the attempts"

# ---- a user namespace that cannot write the runtime ------------------------------------------
# When the container's user namespace maps neither the runtime file's owner
# nor a group that may write it (and others may not), the kernel refuses
# every write open from inside whatever path reaches the inode, so agentbox
# runs from the file itself and saves the copy.  Shown here from both sides:
# the init's exe is the file, and the container's root, given the very
# file through a read-write bind, cannot open it for writing.
if agentbox_only 6; then
  chmod 0755 "$T/runtime-copy"
  userns=('linux.namespaces+=user' 'linux.uidMappings=[{"containerID":0,"hostID":100000,"size":65536}]'
    'linux.gidMappings=[{"containerID":0,"hostID":100000,"size":65536}]')
  make_bundle "$T/exeu" "$sleeper" "${userns[@]}" \
    "mounts+={\"destination\":\"/rt\",\"type\":\"bind\",\"source\":\"$T/runtime-copy\",\"options\":[\"bind\",\"rw\"]}"
  touch "$T/exeu/rootfs/rt"
  id=$(new_id)
  rtc create --bundle "$T/exeu" "$id" </dev/null >/dev/null 2>"$T/exeu/stderr"
  ipid=$(pid_of "$id")
  is "$(readlink "/proc/$ipid/exe" 2>&1)" "$T/runtime-copy" \
    "with the runtime's owner unmapped, the created init runs from the runtime's file (no copy)"
  rtc start "$id"
  out=$(rtc exec "$id" /bin/abtest write /rt x 2>&1)
  isnt $? 0 "... and the container's root cannot open that file for writing, even through a rw bind"
  diag "$(tr '\n' ' ' <<<"$out")"
  rtc delete --force "$id"

  # the owner's group mapped and group-writable, or others may write: sealed
  for mode in 0775 0757; do
    chmod "$mode" "$T/runtime-copy"
    make_bundle "$T/exeu-$mode" "$sleeper" 'linux.namespaces+=user' \
      'linux.uidMappings=[{"containerID":0,"hostID":100000,"size":65536}]' \
      'linux.gidMappings=[{"containerID":0,"hostID":0,"size":1},{"containerID":1,"hostID":100001,"size":65535}]'
    id=$(new_id)
    rtc create --bundle "$T/exeu-$mode" "$id" </dev/null >/dev/null 2>"$T/exeu-$mode/stderr"
    is "$(exe_kind "$(pid_of "$id")")" "$want_exe" \
      "a runtime file of mode $mode with its group mapped: the init runs from the read-only overlay"
    rtc delete --force "$id"
  done
  chmod 0755 "$T/runtime-copy"
  # host root mapped into the container's user namespace: sealed
  make_bundle "$T/exeu-root" "$sleeper" 'linux.namespaces+=user' \
    'linux.uidMappings=[{"containerID":0,"hostID":0,"size":65536}]' \
    'linux.gidMappings=[{"containerID":0,"hostID":0,"size":65536}]'
  id=$(new_id)
  rtc create --bundle "$T/exeu-root" "$id" </dev/null >/dev/null 2>"$T/exeu-root/stderr"
  is "$(exe_kind "$(pid_of "$id")")" "$want_exe" \
    "host root mapped into the user namespace: the init runs from the read-only overlay"
  rtc delete --force "$id"
  is "$(sha256sum <"$T/runtime-copy")" "$sum_before" "the runtime binary's hash is still unchanged"
fi

# ---- masked paths and a hostile /dev/null ------------------------------------------------------

# No /dev mount: the rootfs's own /dev/null is a symlink to a host file.  A
# runtime that followed it would bind the host file over the masked path.
echo "host secret" >"$T/victim/secret"
make_bundle "$T/devnull" 'process.args=["/bin/abtest","cat","/etc/hidden"]' \
  '!mounts[destination=/dev/shm]' '!mounts[destination=/dev/mqueue]' '!mounts[destination=/dev/pts]' \
  '!mounts[destination=/dev]' 'linux.maskedPaths+="/etc/hidden"'
echo "container file" >"$T/devnull/rootfs/etc/hidden"
ln -s "$T/victim/secret" "$T/devnull/rootfs/dev/null"
out=$(rt run --bundle "$T/devnull" "$(new_id)" </dev/null 2>"$T/devnull/err")
st=$?
[ $st != 0 ] || [ -z "$out" ]
ok $? "a /dev/null symlinked to a host file is refused or masks with nothing (status $st, read \`$out\`)"
unlike "$out" 'host secret' "the host file never shows through the masked path"
is "$(cat "$T/victim/secret")" "host secret" "the host file is unchanged"
if agentbox_only; then
  like "$(cat "$T/devnull/err")" '/dev/null' "agentbox refuses it, naming /dev/null"
fi
is "$(host_mounts)" "$host_before" "the host's mount table is unchanged"

# ---- tmpcopyup ---------------------------------------------------------------------------------

make_bundle "$T/copyup" \
  'mounts+={"destination":"/etc","type":"tmpfs","source":"tmpfs","options":["tmpcopyup","size=1m"]}' \
  'process.args=["/bin/sh","-c","cat /etc/passwd && echo new >/etc/added && cat /etc/added"]'
out=$(rt run --bundle "$T/copyup" "$(new_id)" </dev/null 2>&1)
like "$out" '^root:x:0:0:root' "tmpcopyup: the tmpfs on /etc starts with the rootfs's /etc/passwd"
like "$out" '^new$' "... and is writable although the root is read-only"
[ ! -e "$T/copyup/rootfs/etc/added" ]
ok $? "... while nothing written there reaches the rootfs on the host"

# ---- mount options -------------------------------------------------------------------------------

opt_bundle ()
{
  make_bundle "$@" \
    'mounts+={"destination":"/mnt/x","type":"tmpfs","source":"tmpfs","options":["size=8m"]}' \
    'mounts+={"destination":"/mnt/noexec","type":"tmpfs","source":"tmpfs","options":["size=8m","noexec"]}'
}
opt_bundle "$T/noexec" 'process.args=["/bin/sh","-c","cp /bin/abtest /mnt/x/a && cp /bin/abtest /mnt/noexec/a && /bin/abtest try-exec /mnt/x/a echo ran; /bin/abtest try-exec /mnt/noexec/a echo ran"]'
out=$(rt run --bundle "$T/noexec" "$(new_id)" </dev/null 2>&1)
is "$out" "ran
EACCES" "a binary runs from a plain tmpfs but a noexec tmpfs refuses exec (EACCES)"

# nosuid: a setuid-root copy of abtest in a host directory, run by uid 1000.
mkdir -p "$T/suid"
install -m 4755 -o 0 -g 0 "$ABTEST" "$T/suid/abtest"
make_bundle "$T/nosuid" 'process.user={"uid":1000,"gid":1000}' process.noNewPrivileges=false \
  "mounts+={\"destination\":\"/suid\",\"type\":\"bind\",\"source\":\"$T/suid\",\"options\":[\"rbind\",\"ro\"]}" \
  "mounts+={\"destination\":\"/nosuid\",\"type\":\"bind\",\"source\":\"$T/suid\",\"options\":[\"rbind\",\"ro\",\"nosuid\"]}" \
  'process.args=["/bin/sh","-c","/suid/abtest getuid | grep ^euid; /nosuid/abtest getuid | grep ^euid"]'
out=$(rt run --bundle "$T/nosuid" "$(new_id)" </dev/null 2>&1)
is "$out" "euid=0
euid=1000" "a setuid-root binary gains euid 0 from a plain bind, and nothing from a nosuid one"

# nodev: a device node in a host directory.
mkdir -p "$T/devdir"
mknod -m 0666 "$T/devdir/null" c 1 3
make_bundle "$T/nodev" \
  "mounts+={\"destination\":\"/withdev\",\"type\":\"bind\",\"source\":\"$T/devdir\",\"options\":[\"rbind\",\"rw\"]}" \
  "mounts+={\"destination\":\"/nodev\",\"type\":\"bind\",\"source\":\"$T/devdir\",\"options\":[\"rbind\",\"rw\",\"nodev\"]}" \
  'process.args=["/bin/sh","-c","/bin/abtest open-dev /withdev/null; /bin/abtest open-dev /nodev/null"]'
out=$(rt run --bundle "$T/nodev" "$(new_id)" </dev/null 2>&1)
is "$out" "ok
EACCES" "a device node opens through a plain bind and not through a nodev one (EACCES)"

# ro, and the flags as the container's mountinfo shows them
mkdir -p "$T/rodir"
make_bundle "$T/ro" "$sleeper" \
  "mounts+={\"destination\":\"/rw\",\"type\":\"bind\",\"source\":\"$T/rodir\",\"options\":[\"rbind\",\"rw\"]}" \
  "mounts+={\"destination\":\"/ro\",\"type\":\"bind\",\"source\":\"$T/rodir\",\"options\":[\"rbind\",\"ro\",\"nosuid\",\"nodev\",\"noexec\"]}"
id=$(new_id)
start_bg "$id" "$T/ro"
pid=$(pid_of "$id")
like "$(mounts_of "$pid")" '^[0-9]+ [0-9]+ [0-9:]+ [^ ]+ /ro ro,nosuid,nodev,noexec[, ]' \
  "the container's mountinfo shows /ro as ro,nosuid,nodev,noexec"
out=$(rt exec "$id" /bin/abtest write /ro/f x 2>&1)
is "$out" EROFS "a write through the ro bind fails with EROFS"
out=$(rt exec "$id" /bin/abtest write /rw/f x 2>&1)
is "$out:$(cat "$T/rodir/f" 2>&1)" "ok:x" "the same write through the rw bind lands in the host directory"
rt delete --force "$id"

# ---- a bind mount of a file -------------------------------------------------------------------------

echo "from the host" >"$T/hostfile"
make_bundle "$T/filebind" \
  "mounts+={\"destination\":\"/etc/bound\",\"type\":\"bind\",\"source\":\"$T/hostfile\",\"options\":[\"bind\",\"rw\"]}" \
  "mounts+={\"destination\":\"/etc/bound-ro\",\"type\":\"bind\",\"source\":\"$T/hostfile\",\"options\":[\"bind\",\"ro\"]}" \
  'process.args=["/bin/sh","-c","cat /etc/bound; echo changed >/etc/bound; /bin/abtest write /etc/bound-ro x"]'
out=$(rt run --bundle "$T/filebind" "$(new_id)" </dev/null 2>&1)
is "$out" "from the host
EROFS" "a bound file shows the host file's content, and its ro bind refuses writes"
is "$(cat "$T/hostfile")" changed "a write to the rw bound file reaches the host file"
[ -f "$T/filebind/rootfs/etc/bound" ] && [ ! -s "$T/filebind/rootfs/etc/bound" ]
ok $? "the mount point is an empty file created inside the rootfs"

# ---- id-mapped binds ---------------------------------------------------------------------------------

if agentbox_only 4; then
  AB_BASE_CONFIG=runtime
  rm -f "$T/base-config.json"
  mkdir -p "$T/ws-root" "$T/ws-user"
  chown 1234:1234 "$T/ws-user"
  # (the container's root may not create mount points in a rootfs it does not own)
  mkdir -p "$T/base-rootfs/ws" "$T/base-rootfs/wsu"
  make_bundle "$T/idmap" \
    "mounts+={\"destination\":\"/ws\",\"type\":\"bind\",\"source\":\"$T/ws-root\",\"options\":[\"rbind\",\"rw\",\"idmap\"]}" \
    "mounts+={\"destination\":\"/wsu\",\"type\":\"bind\",\"source\":\"$T/ws-user\",\"options\":[\"rbind\",\"rw\"],\"uidMappings\":[{\"containerID\":1234,\"hostID\":100000,\"size\":1}],\"gidMappings\":[{\"containerID\":1234,\"hostID\":100000,\"size\":1}]}" \
    'process.args=["/bin/sh","-c","/bin/abtest write /ws/f x; /bin/abtest write /wsu/f x; /bin/abtest stat /wsu | grep ^uid"]'
  out=$(rt run --bundle "$T/idmap" "$(new_id)" </dev/null 2>&1)
  is "$out" 'ok
ok
uid=0' "in the user-namespaced profile, root writes through id-mapped binds (the owner shows as root)"
  is "$(stat -c %u:%g "$T/ws-root/f" 2>&1)" 0:0 \
    "a file written through the idmap bind of a root-owned directory is owned by root on the host, not 100000"
  is "$(stat -c %u:%g "$T/ws-user/f" 2>&1)" 1234:1234 \
    "a file written through a bind mapping owner 1234 to the container's root is owned by 1234 on the host"
  mkdir -p "$T/ws-plain"
  make_bundle "$T/noidmap" \
    "mounts+={\"destination\":\"/ws\",\"type\":\"bind\",\"source\":\"$T/ws-plain\",\"options\":[\"rbind\",\"rw\"]}" \
    'process.args=["/bin/abtest","write","/ws/f","x"]'
  out=$(rt run --bundle "$T/noidmap" "$(new_id)" </dev/null 2>&1)
  is "$out" EACCES "control: without the id mapping the container's root may not write the host directory"
fi


done_testing

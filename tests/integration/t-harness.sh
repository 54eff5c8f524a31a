#!/bin/bash
# The test harness itself: make_rootfs, make_bundle, cfg.py, the cgroup view
# of with_own_cgroup_root and the leftover checker.  Needs no runtime.
AB_NO_RUNTIME=1
. "$(dirname "$0")/lib.sh"
plan_later

# ---- make_rootfs ---------------------------------------------------------------

r=$T/rootfs
make_rootfs "$r"
ok $? "make_rootfs builds a rootfs"
readelf -lW "$r/bin/abtest" 2>&1 | grep -q 'INTERP'
ok $((!$?)) "abtest is statically linked (no program interpreter)"
is "$(chroot "$r" /bin/abtest echo inside)" "inside" "abtest runs in the bare rootfs"
is "$(chroot "$r" /bin/sh -c 'echo $((6 * 7))')" "42" "busybox sh runs in the bare rootfs"
is "$(chroot "$r" /bin/id -u nobody):$(chroot "$r" /bin/id -g nobody)" "65534:65534" "/etc/passwd and /etc/group name nobody"
is "$(chroot "$r" /bin/id -u root)" "0" "/etc/passwd names root"
modes=$(cd "$r" && stat -c '%n %a %u:%g' . bin proc sys dev tmp etc root)
is "$(awk '$2 != "755" || $3 != "0:0"' <<<"$modes")" "" "rootfs directories are 0755 and owned by root"
is "$(find "$r/proc" "$r/sys" "$r/dev" "$r/tmp" -mindepth 1)" "" "/proc /sys /dev /tmp are empty"

# ---- make_bundle, cfg.py -----------------------------------------------------------

make_bundle --out "$T/b" 'process.args=["/bin/abtest","exit","3"]' hostname:=box
ok $? "make_bundle writes a bundle"
is "$(cfg "$T/b/config.json" --get process.terminal)" "false" "bundles pass stdio through (terminal false)"
is "$(cfg "$T/b/config.json" --get process.args)" '["/bin/abtest", "exit", "3"]' "edits given to make_bundle apply"
is "$(cfg "$T/b/config.json" --get hostname)" "box" "PATH:=TEXT sets a plain string"
is "$(cfg "$T/b/config.json" --get 'mounts[destination=/out].source')" "$T/b/out" \
  "--out bind-mounts the bundle's out directory at /out"
[ -d "$T/b/out" ] && [ -d "$T/b/rootfs/out" ] && [ -x "$T/b/rootfs/bin/abtest" ]
ok $? "the bundle has its own rootfs copy with /out"
isnt "$(stat -c %i "$T/b/rootfs/bin/abtest")" "$(stat -c %i "$T/base-rootfs/bin/abtest")" \
  "a bundle's rootfs is a copy, not a hard link of the base rootfs"

c=$T/c.json
cfg --default "$c"
cfg "$c" 'linux.namespaces-=network' 'linux.namespaces+=user' 'linux.namespaces[type=pid].path:=/proc/1/ns/pid' \
  '!process.rlimits' 'process.env+="A=b"' 'process.env-=TERM=xterm'
ok $? "cfg applies remove, append, selector, delete"
is "$(cfg "$c" --get linux.namespaces)" \
  '[{"type": "pid", "path": "/proc/1/ns/pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "user"}]' \
  "namespaces: network removed, user appended, pid given a path"
is "$(cfg "$c" --get process.env)" '["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "A=b"]' \
  "string lists: append and remove by value"
err=$(cfg "$c" 'process.args=[oops' 2>&1)
is "$?" 2 "a malformed edit exits 2"
like "$err" 'process\.args.*not JSON' "the error names the path and the problem"
err=$(cfg "$c" 'linux.namespaces-=cgroup' 2>&1)
like "$err" 'no element `cgroup`' "removing an absent element is an error, not a silent no-op"

# ---- with_own_cgroup_root -------------------------------------------------------------

view=$(with_own_cgroup_root cat /proc/self/cgroup)
is "$(awk -F: '$3 != "/"' <<<"$view")" "" "with_own_cgroup_root: every hierarchy reads / inside"
own=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
mnt=$(awk '$5 == "/sys/fs/cgroup/memory" { print $5 }' /proc/self/mountinfo)
if [ -n "$mnt" ]; then
  name=ab-$$-harness
  with_own_cgroup_root mkdir "/sys/fs/cgroup/memory/$name"
  [ -d "/sys/fs/cgroup/memory${own%/}/$name" ]
  ok $? "a cgroup made at /$name inside is made below our own cgroup ($own) on the host"
  rmdir "/sys/fs/cgroup/memory${own%/}/$name"
else
  skip "no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory"
fi
# (dash exports PWD: rt_noenv therefore applies env -i inside the wrapper)
is "$(with_own_cgroup_root /usr/bin/env | grep -v '^PWD=\|^_=' | sort)" "$(/usr/bin/env | grep -v '^PWD=\|^_=' | sort)" \
  "with_own_cgroup_root passes the environment through unchanged"
# Other test files run at the same time and bind their network namespaces
# (nsfs) or mount below their own test dirs: those lines are not ours.
host_mounts() { grep -v ' - nsfs \|/abtest\.' /proc/self/mountinfo; }
before=$(host_mounts)
with_own_cgroup_root true
is "$(host_mounts)" "$before" "the remounts stay in the private mount namespace"

# ---- the leftover checker --------------------------------------------------------------

is "$(_ab_leftovers | grep -v '^note:')" "" "the checker finds nothing on a clean host"
mkdir "$T/plant"
(cd "$T/plant" && exec sleep 1000) &
planted=$!
mkdir -p "$AB_STATE/ab-$$-ghost"
mount -t tmpfs abtest-plant "$T/plant"
out=$(_ab_leftovers)
like "$out" "^process: pid $planted .*sleep 1000" "the checker names a process left in the test directory"
like "$out" "^mount: $T/plant " "the checker names a mount left in the test directory"
like "$out" "^state: $AB_STATE/ab-$$-ghost" "the checker names an entry left in the state directory"
if [ -n "$mnt" ]; then
  mkdir "/sys/fs/cgroup/memory${own%/}/ab-$$-ghost"
  like "$(_ab_leftovers)" "^cgroup: .*/ab-$$-ghost still exists" "the checker names a cgroup named after a container id"
  rmdir "/sys/fs/cgroup/memory${own%/}/ab-$$-ghost"
else
  skip "no cgroup v1 memory hierarchy"
fi
kill "$planted"
wait "$planted" 2>/dev/null
umount "$T/plant"
rmdir "$AB_STATE/ab-$$-ghost" "$AB_STATE"
is "$(_ab_leftovers | grep -v '^note:')" "" "the checker is quiet once the leftovers are gone"

done_testing

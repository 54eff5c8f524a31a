# tests/integration/cgroot.sh: the private cgroup view that runc-like
# runtimes need on this host; sourced by tests/integration/lib.sh and
# tests/bench/lib.sh (sh-compatible: it only sets a variable and a function).
#
# The shell running the tests lives in a cgroup of the machine (see
# /proc/self/cgroup; here memory:/process_api/<hash>) that nothing it starts
# may leave.  runc, and agentbox with an absolute linux.cgroupsPath, create
# the container's cgroup at that path below the *root* of each hierarchy, so
# they are run in a private view where "/" is our own cgroup:
#
#   1. unshare --cgroup --mount --propagation private: a new cgroup namespace
#      rooted at our current cgroup in every hierarchy, and a private mount
#      namespace so the remounts below never propagate to the host;
#   2. for every cgroup (v1) and cgroup2 line of /proc/self/mountinfo
#      (on this hybrid host: cpu, cpuacct, cpuset, memory, devices, freezer,
#      blkio, pids, name=systemd under /sys/fs/cgroup/<name>, and the cgroup2
#      hierarchy at /sys/fs/cgroup/unified), umount it and mount the same
#      hierarchy again at the same place with the same super options
#      (`mount -t cgroup -o rw,memory cgroup /sys/fs/cgroup/memory`,
#      `mount -t cgroup2 -o rw cgroup2 /sys/fs/cgroup/unified`).  A cgroup
#      filesystem mounted inside a cgroup namespace has the namespace's root
#      as its root, so /sys/fs/cgroup/memory now *is* our own memory cgroup,
#      and /proc/self/cgroup reads "/" for every hierarchy: runc's absolute
#      paths (memory:/<id>) land below our cgroup on the host
#      (memory:/process_api/<hash>/<id>).  Unmounting first, rather than
#      mounting on top, leaves one mountinfo line per hierarchy, so a
#      runtime scanning mountinfo cannot pick the stale host-rooted mount;
#   3. exec the command.  The helper shell uses absolute paths and sets no
#      variable, but dash exports PWD: rt_noenv therefore puts `env -i`
#      between the wrapper and the runtime.
#
# Every invocation sees the same view (our cgroup does not change), so the
# paths a runtime stores in its state at `create` resolve to the same
# cgroups at `delete`.  In tests/integration/lib.sh, AB_CGROUP_WRAP=1 (the
# default except for agentbox, which puts containers under its own cgroup)
# runs every `rt` call so; tests/bench/lib.sh runs its whole driver so.

# The helper shell of steps 2 and 3; "$@" is the command (the mountinfo
# parsing runs in a subshell, so its `set --` does not clobber it).
_AB_CGROOT_SH='
cgmounts=$(while read -r _id _parent _devno _root mnt rest; do
  set -- ${rest#* - }
  case $1 in cgroup | cgroup2) echo "$1 $mnt $3" ;; esac
done </proc/self/mountinfo)
echo "$cgmounts" | while read -r fstype mnt opts; do
  [ -n "$fstype" ] || continue
  /usr/bin/umount "$mnt" && /usr/bin/mount -t "$fstype" -o "$opts" "$fstype" "$mnt" || exit 1
done || { echo "with_own_cgroup_root: cannot remount the cgroup hierarchies" >&2; exit 125; }
exec "$@"'

# with_own_cgroup_root CMD...: run CMD in the private cgroup view above.
with_own_cgroup_root ()
{
  /usr/bin/unshare --cgroup --mount --propagation private -- /bin/sh -c "$_AB_CGROOT_SH" with_own_cgroup_root "$@"
}


# with_v2_only CMD...: run CMD where the machine looks like a host with
# cgroup v2 only (e.g. Debian 12), for the v2 code paths on a hybrid host:
# in a private mount namespace every cgroup (v1) and cgroup2 mount and the
# tmpfs holding them at /sys/fs/cgroup are unmounted, and the host's cgroup2
# hierarchy is mounted again at /sys/fs/cgroup alone, with the super
# options it has (in the initial cgroup namespace a cgroup2 mount applies
# its options to the whole hierarchy, so they must be the host's own).  On
# a hybrid host that hierarchy holds no controller (they are bound to v1):
# limits cannot be tested there, but cgroup.procs, cgroup.freeze,
# cgroup.kill and the BPF device filter can.  Status 125 if the view
# cannot be made (no cgroup2 hierarchy at all).  The view is the same for
# every invocation, so paths stored at create resolve at delete.
_AB_V2ONLY_SH='
opts=$(awk '\''{ split($0, p, " - "); split(p[2], f, " "); if (f[1] == "cgroup2") { print f[3]; exit } }'\'' /proc/self/mountinfo)
[ -n "$opts" ] || { echo "with_v2_only: no cgroup2 hierarchy" >&2; exit 125; }
for m in $(awk '\''{ split($0, p, " - "); split(p[2], f, " "); if (f[1] == "cgroup" || f[1] == "cgroup2") print $5 }'\'' /proc/self/mountinfo | sort -r); do
  /usr/bin/umount "$m" || exit 125
done
if awk '\''$5 == "/sys/fs/cgroup" { f = 1 } END { exit !f }'\'' /proc/self/mountinfo; then
  /usr/bin/umount /sys/fs/cgroup || exit 125
fi
/usr/bin/mount -t cgroup2 -o "$opts" cgroup2 /sys/fs/cgroup || exit 125
exec "$@"'

with_v2_only ()
{
  /usr/bin/unshare --mount --propagation private -- /bin/sh -c "$_AB_V2ONLY_SH" with_v2_only "$@"
}

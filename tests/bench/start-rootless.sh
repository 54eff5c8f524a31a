#!/bin/bash
# Figure: start latency as an ordinary user (issue 24).  `run` of /bin/true
# to completion by the unprivileged user $AB_ROOTLESS_USER (default abuser,
# which tests/integration/lib.sh and scripts/install-deps.sh make), side by
# side in one driver run:
#   agentbox  `agentbox spec --rootless` without the time namespace: user
#             (the user's subordinate range where it has one), mount, pid,
#             net with the nftables wall, ipc, uts and cgroup namespaces,
#             seccomp, no capabilities, read-only root;
#   agentbox-1id  the same with the user's own uid and gid alone mapped
#             (no set-user-ID helper run);
#   bwrap     bubblewrap 0.8 by the same user with comparable namespaces
#             (--unshare-all: user, mount, pid, net, ipc, uts, cgroup), the
#             same rootfs read-only, /proc, /dev and a /tmp, no capabilities;
#             no seccomp and no wall;
#   runc      `runc spec --rootless` (user, mount, pid, ipc, uts; the host's
#             network), when runc is installed.
# Each contender is a small sh wrapper (setpriv to the user, then exec), the
# same cost for all three.  N runs each (default 100).
#
#   cd BUILDDIR && SRCDIR/tests/bench/start-rootless.sh [N]     (as root)
# Knobs: BENCH_N, AGENTBOX, RUNC, BWRAP, AB_ROOTLESS_USER (tests/bench/lib.sh).
. "$(dirname "$0")/lib.sh"
bench_init start-rootless 100 --no-contenders "$@"

user=${AB_ROOTLESS_USER:-abuser}
uid=$(id -u "$user" 2>/dev/null) || bench_die "no user $user (scripts/install-deps.sh makes it)"
gid=$(id -g "$user")
home=$(getent passwd "$user" | cut -d: -f6)
as_user="setpriv --reuid=$uid --regid=$gid --init-groups"
export AGENTBOX_CACHE_DIR=$B/cache-$user
mkdir -m 0700 "$B/cache-$user" && chown "$uid:$gid" "$B/cache-$user"

# wrapper NAME EXE ARGS...: $B/rl-NAME, which runs EXE ARGS as the user
# (--version passed to EXE itself, for the driver's version line).
wrapper ()
{
  local name=$1 exe=$2
  shift 2
  {
    echo '#!/bin/sh'
    echo "[ \"\$1\" = --version ] && exec $exe --version"
    echo "HOME=$home; export HOME"
    echo "exec $as_user $exe $*"
  } >"$B/rl-$name"
  chmod 0755 "$B/rl-$name"
}
# user_bundle NAME: $B/bundle-NAME and $B/state-NAME, the user's.  Each
# state root is a tmpfs of its own, as $XDG_RUNTIME_DIR (/run/user/UID),
# where agentbox and runc keep a user's state, is: on this disk a state
# directory's files cost a journalled write and unlink on every start.
user_bundle ()
{
  mkdir -p "$B/bundle-$1" && mkdir -m 0700 "$B/state-$1" \
    && mount -t tmpfs -o "mode=0700,uid=$uid,gid=$gid,size=16m" "ab-bench-state" "$B/state-$1" \
    && chown "$uid:$gid" "$B/bundle-$1" "$B/state-$1" || bench_die "cannot make the state root of $1"
  # the state roots' tmpfs mounts are the bench's, not a container's leftovers
  "$PYTHON3" "$BENCH_SRCDIR/tests/integration/leftovers.py" snapshot "$B/snapshot.json" ||
    bench_die "cannot take the leftover snapshot"
}
unmount_states ()
{
  local d
  for d in "$B"/state-*; do mountpoint -q "$d" && umount "$d"; done
  bench_cleanup
}
trap unmount_states EXIT
edit () { "$PYTHON3" "$BENCH_SRCDIR/tests/integration/cfg.py" "$@" || bench_die "cannot edit $1"; }

user_bundle agentbox
(cd "$B/bundle-agentbox" && $as_user "$AGENTBOX" spec --rootless) || bench_die "agentbox spec --rootless failed"
edit "$B/bundle-agentbox/config.json" linux.namespaces-=time process.terminal=false root.path:="$B/rootfs" \
  'process.args=["/bin/true"]'
wrapper agentbox "$AGENTBOX" '--root "$1" run --bundle "$2" "$3"'
bench_contender agentbox "$B/rl-agentbox" "not built"
# The same with the user's own ids alone (no newuidmap/newgidmap run).
user_bundle agentbox-1id
cp "$B/bundle-agentbox/config.json" "$B/bundle-agentbox-1id/config.json"
edit "$B/bundle-agentbox-1id/config.json" "linux.uidMappings=[{\"containerID\":0,\"hostID\":$uid,\"size\":1}]" \
  "linux.gidMappings=[{\"containerID\":0,\"hostID\":$gid,\"size\":1}]"
bench_contender agentbox-1id "$B/rl-agentbox" "not built"

bwrap=$(command -v "${BWRAP:-bwrap}")
if [ -n "$bwrap" ]; then
  wrapper bwrap "$bwrap" "--unshare-all --die-with-parent --new-session --cap-drop ALL --ro-bind $B/rootfs / \
--proc /proc --dev /dev --tmpfs /tmp /bin/true"
  bench_contender bwrap "$B/rl-bwrap" ""
else
  bench_contender bwrap "" "bwrap not installed (apt-get install bubblewrap)"
fi

runc=$(command -v "${RUNC:-/usr/sbin/runc}")
if [ -n "$runc" ]; then
  user_bundle runc
  (cd "$B/bundle-runc" && $as_user "$runc" spec --rootless) || bench_die "runc spec --rootless failed"
  edit "$B/bundle-runc/config.json" process.terminal=false root.path:="$B/rootfs" 'process.args=["/bin/true"]'
  wrapper runc "$runc" '--root "$1" run --bundle "$2" "$3"'
  bench_contender runc "$B/rl-runc" ""
else
  bench_contender runc "" "runc not installed (apt-get install runc)"
fi
chown "$uid:$gid" "$B/bundle-"*/config.json

bench_drive --target 'agentbox:wall:vs_bwrap<=1.0' --target 'agentbox:wall:vs_runc<=0.3' \
  latency --cmd '{rt} {root} {bundle} {id}'
bench_finish
unmount_states

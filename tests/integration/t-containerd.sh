#!/bin/bash
# containerd (Debian's 1.6) with its runc shim (io.containerd.runc.v2)
# driving the runtime under test through `ctr`, as Kubernetes does through
# the CRI: an image imported into a private containerd, then run with exit
# codes, detached tasks, exec, pause/resume, ps, kill, delete.  Evidence from
# the host: the task's process and cgroup, the frozen cgroup, and that no
# process (shim, container), cgroup or runtime state is left.
#
# The daemon, its socket, content store, snapshots, FIFOs and the runtime's
# state root (--runc-root) all live in the test directory; it and every shim run in the
# private cgroup view of with_own_cgroup_root (lib.sh), since containerd
# gives the runtime absolute cgroup paths (--cgroup /ab-PID-ctd/ID).
. "$(dirname "$0")/lib.sh"
for c in containerd ctr containerd-shim-runc-v2; do
  command -v $c >/dev/null || skip_all "$c is not installed (apt-get install containerd)"
done
require_runtime_commands create start state kill delete exec pause resume ps
plan_later

D=$T/ctd
mkdir -p "$D/fifo"
parent=/ab-$$-ctd
cat >"$D/config.toml" <<EOF
version = 2
root = "$D/root"
state = "$D/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$D/sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$D/opt"
EOF

make_rootfs "$D/rootfs"
"$PYTHON3" "$AB_LIBDIR/oci-image.py" "$D/rootfs" "$D/image.tar" localhost/agentbox-test:1 ||
  bail_out "cannot build the test image"

# Not the with_own_cgroup_root function: unshare and sh exec containerd, so
# $! is the daemon's own pid.
/usr/bin/unshare --cgroup --mount --propagation private -- /bin/sh -c "$_AB_CGROOT_SH" with_own_cgroup_root \
  containerd --config "$D/config.toml" </dev/null >"$D/containerd.log" 2>&1 7>&- &
daemon=$!
wait_for_socket "$D/sock" 10 || bail_out "containerd did not start: $(tail -3 "$D/containerd.log")"

c () { timeout -k 5 "$AB_RT_TIMEOUT" ctr --address "$D/sock" "$@" 7>&-; }

# ctr_run ARGS...: ctr run with the runtime under test and the test's
# paths; ARGS end with the image, the container id and the command.
ctr_run ()
{
  c run --snapshotter native --runc-binary "$RUNTIME" --runc-root "$D/runtime-state" --fifo-dir "$D/fifo" "$@"
}

c images import --snapshotter native "$D/image.tar" >/dev/null
ok $? "the test image imports"

# ---- run ------------------------------------------------------------------------------

# The ctr of containerd 1.6.20 (Debian 12): its task.Delete closes its end
# of the output FIFOs before it waits for them to drain (containerd#5974,
# undone by containerd#8643 in 2023), so on a busy machine a task that
# prints and ends at once can lose its output whatever the runtime.  Up to
# three tries: a runtime that never carries the output still fails.
for try in 1 2 3; do
  id=ab-$$-r$try
  out=$(ctr_run --rm --cgroup "$parent/$id" localhost/agentbox-test:1 "$id" /bin/sh -c 'echo hello from containerd; exit 5' </dev/null)
  st=$?
  [ "$out" = "hello from containerd" ] && break
  diag "try $try: ctr printed \"$out\" (exit $st)"
done
is $st 5 "ctr run exits with the task's exit code"
is "$out" "hello from containerd" "and carries its output"

# ---- a detached task ------------------------------------------------------------------------

id=ab-$$-t1
ctr_run -d --cgroup "$parent/$id" localhost/agentbox-test:1 "$id" /bin/abtest sleep-forever </dev/null >/dev/null
ok $? "ctr run -d starts a task"
pid=$(c task ls | awk -v id="$id" '$1 == id { print $2 }')
alive "$pid"
ok $? "its process runs on the host (pid ${pid:-none})"
is "$(c task ls | awk -v id="$id" '$1 == id { print $3 }')" RUNNING "ctr reports it RUNNING"
is "$(cg_path "$pid" pids)" "$(cg_path $$ pids | sed 's,/$,,')$parent/$id" "its cgroup is the one ctr asked for, below the test's own"

out=$(c task exec --exec-id e1 --fifo-dir "$D/fifo" "$id" /bin/abtest echo exec works </dev/null)
is "$out" "exec works" "ctr task exec runs a process in it"
c task exec --exec-id e2 --fifo-dir "$D/fifo" "$id" /bin/sh -c 'exit 4' </dev/null
is $? 4 "ctr task exec exits with the process's status"
ns_c=$(readlink "/proc/$pid/ns/pid" | tr -dc 0-9)
out=$(c task exec --exec-id e3 --fifo-dir "$D/fifo" "$id" /bin/abtest ns </dev/null)
like "$out" "^pid=$ns_c\$" "the exec'd process is in the task's pid namespace"

like "$(c task ps "$id")" "^$pid( |\$)" "ctr task ps lists the task's process"

c task pause "$id"
ok $? "ctr task pause succeeds"
is "$(c task ls | awk -v id="$id" '$1 == id { print $3 }')" PAUSED "ctr reports it PAUSED"
frozen=$(cg_frozen "$pid")
like "$frozen" '^1 |FROZEN$' "the task's cgroup is frozen on the host ($frozen)"
c task resume "$id"
ok $? "ctr task resume succeeds"
is "$(c task ls | awk -v id="$id" '$1 == id { print $3 }')" RUNNING "it runs again"

c task kill -s KILL "$id"
ok $? "ctr task kill -s KILL succeeds"
wait_gone "$pid"
ok $? "the task's process is gone on the host"
for ((i = 0; i < 50; i++)); do
  [ "$(c task ls | awk -v id="$id" '$1 == id { print $3 }')" = STOPPED ] && break
  sleep 0.1
done
is "$(c task ls | awk -v id="$id" '$1 == id { print $3 }')" STOPPED "ctr reports it STOPPED"
c task delete "$id" >/dev/null && c container delete "$id"
ok $? "the task and the container are deleted"
# The shim gives the runtime --root <runc-root>/<namespace>.
is "$(ls -A "$D/runtime-state/default" 2>/dev/null | wc -l)" 0 "no runtime state is left"
left=$(find /sys/fs/cgroup -type d -name "ab-$$-*" -path "*$parent/*" 2>/dev/null)
is "$left" "" "no task cgroup is left"

# ---- the daemon ---------------------------------------------------------------------------

c images rm localhost/agentbox-test:1 >/dev/null
kill -TERM "$daemon"
wait "$daemon"
ok $? "containerd stops cleanly"
# Parents named after the test that the runtime may not remove (runc keeps them).
remove_cgroup_parents "$parent"
done_testing

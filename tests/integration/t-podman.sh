#!/bin/bash
# podman (Debian's 4.3) driving the runtime under test, the way a user runs
# containers: run with exit codes, detached run, exec (also with a tty),
# pause/unpause, top, update, stop, rm.  Evidence from the host: the
# container's processes and cgroup files, and that nothing is left once
# podman has removed the container (process, cgroup, runtime state).
#
# podman's cgroupfs manager uses absolute cgroup paths, so every podman call
# runs in the private cgroup view of with_own_cgroup_root (lib.sh), where
# "/" is this test's own cgroup; the containers' cgroups go under a parent
# named after the test (--cgroup-parent), which the leftover check watches.
# Storage, run and runtime state all live in the test directory.
. "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || skip_all "podman is not installed (apt-get install podman)"
command -v conmon >/dev/null || skip_all "conmon is not installed"
require_runtime_commands create start state kill delete exec pause resume ps update
plan_later

P=$T/podman
mkdir -p "$P/root" "$P/run" "$P/tmp"
parent=/ab-$$-podman
make_rootfs "$P/rootfs"
echo "$P/rootfs" >>"$T/rootfs-list"

# podman passes --runtime-flag to create and start but not to the delete of
# its cleanup process, so the state root is given by a wrapper instead.
cat >"$P/runtime" <<EOF
#!/bin/sh
exec "$RUNTIME" --root "$AB_STATE" "\$@"
EOF
chmod 0755 "$P/runtime"

# This host's hard limits are below podman's defaults (1048576), which the
# runtime must refuse (t-isolation); give podman ones it may set.
ulimits=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

pm ()
{
  timeout -k 5 "$AB_RT_TIMEOUT" /usr/bin/unshare --cgroup --mount --propagation private -- \
    /bin/sh -c "$_AB_CGROOT_SH" with_own_cgroup_root \
    podman --root "$P/root" --runroot "$P/run" --tmpdir "$P/tmp" --storage-driver vfs \
    --cgroup-manager cgroupfs --events-backend file --runtime "$P/runtime" \
    "$@" 7>&-
}

# pm_run ARGS...: podman run with the test's defaults, then ARGS (image
# options and the command).
pm_run () { pm run --network none --cgroup-parent "$parent" "${ulimits[@]}" "$@"; }

# ---- run ------------------------------------------------------------------------------

out=$(pm_run --rm --rootfs "$P/rootfs" /bin/sh -c 'echo hello from podman; exit 3' </dev/null)
is $? 3 "podman run exits with the container's exit code"
is "$out" "hello from podman" "and carries its output"

pm_run -d --name "ab-$$-k" --rootfs "$P/rootfs" /bin/abtest sleep-forever </dev/null >/dev/null
pm kill -s KILL "ab-$$-k" >/dev/null
is "$(pm wait "ab-$$-k")" 137 "a container killed by podman kill -s KILL exits 137"
pm rm "ab-$$-k" >/dev/null

pm_run --rm --rootfs "$P/rootfs" /bin/nonexistent </dev/null >/dev/null 2>&1
st=$?
ok "$([ $st = 127 ] || [ $st = 126 ]; echo $?)" "a missing program is reported as such (status $st)"

out=$(pm_run --rm -t --rootfs "$P/rootfs" /bin/sh -c 'tty' </dev/null 2>/dev/null | tr -d '\r')
like "$out" '^/dev/pts/[0-9]+$' "podman run -t gives the container a terminal (console socket)"

# ---- a detached container ---------------------------------------------------------------

cid=$(pm_run -d --name "ab-$$-c1" --rootfs "$P/rootfs" /bin/abtest sleep-forever </dev/null)
ok $? "podman run -d starts a container"
pid=$(pm inspect -f '{{.State.Pid}}' "ab-$$-c1")
alive "$pid"
ok $? "its process runs on the host (pid ${pid:-none})"
is "$(cg_path "$pid" pids | grep -c "^$parent/")" 1 "in a cgroup below the test's --cgroup-parent"

out=$(pm exec "ab-$$-c1" /bin/abtest echo exec works </dev/null)
is "$out" "exec works" "podman exec runs a process in it"
pm exec "ab-$$-c1" /bin/sh -c 'exit 7' </dev/null
is $? 7 "podman exec exits with the process's status"
# pid:[INODE] on the host; the exec'd process reports the inode it is in.
ns_c=$(readlink "/proc/$pid/ns/pid" | tr -dc 0-9)
out=$(pm exec "ab-$$-c1" /bin/abtest ns </dev/null)
like "$out" "^pid=$ns_c\$" "the exec'd process is in the container's pid namespace"
# podman's cgroup-visible-in-container: the container reads its own limits
# where a v1 or hybrid host mounts them (runc's view), read-only.
if [ -n "$(cg_mount pids)" ]; then
  out=$(pm exec "ab-$$-c1" /bin/sh -c 'cat /sys/fs/cgroup/pids/pids.max; echo 9 > /sys/fs/cgroup/pids/pids.max' </dev/null 2>&1)
  is "$(head -1 <<<"$out")" "$(cg_read "$pid" pids pids.max pids.max)" \
    "inside, /sys/fs/cgroup/pids/pids.max is the limit podman set (host: $(cg_read "$pid" pids pids.max pids.max))"
  like "$out" 'Read-only file system' "... and cannot be written"
else
  skip "no v1 pids hierarchy" 2
fi

out=$(pm exec -t "ab-$$-c1" /bin/sh -c tty </dev/null 2>/dev/null | tr -d '\r')
like "$out" '^/dev/pts/[0-9]+$' "podman exec -t gets a terminal"

out=$(pm top "ab-$$-c1" 2>&1)
like "$out" 'sleep-forever' "podman top lists the container's process"

pm pause "ab-$$-c1" >/dev/null
ok $? "podman pause succeeds"
is "$(pm inspect -f '{{.State.Status}}' "ab-$$-c1")" paused "podman sees it paused"
frozen=$(cg_frozen "$pid")
like "$frozen" '^1 |FROZEN$' "the container's cgroup is frozen on the host ($frozen)"
pm unpause "ab-$$-c1" >/dev/null
ok $? "podman unpause succeeds"
is "$(pm inspect -f '{{.State.Status}}' "ab-$$-c1")" running "it runs again"

pm update --memory 64m --cpu-quota 50000 --cpu-period 100000 "ab-$$-c1" >/dev/null
ok $? "podman update succeeds"
is "$(cg_read "$pid" memory memory.limit_in_bytes memory.max)" 67108864 "the memory limit on the host is 64 MiB"
like "$(cg_read "$pid" cpu cpu.cfs_quota_us cpu.max)" '^50000( 100000)?$' "the CPU quota on the host is 50 ms per 100 ms"

pm stop -t 1 "ab-$$-c1" >/dev/null 2>&1
ok $? "podman stop succeeds"
wait_gone "$pid"
ok $? "the container's process is gone on the host"
pm rm "ab-$$-c1" >/dev/null
ok $? "podman rm succeeds"
is "$(ls "$AB_STATE" 2>/dev/null | wc -l)" 0 "no runtime state is left"
left=$(find /sys/fs/cgroup -path "*$parent/libpod-*" -type d 2>/dev/null)
is "$left" "" "no container cgroup (libpod-ID) is left below the parent"

# The parent and its conmon cgroup are podman's, made by its cgroupfs
# manager; remove them once conmon has gone, so that the leftover check sees
# only what the runtime left.
remove_cgroup_parents "$parent"
pm system reset -f >/dev/null 2>&1 || :
done_testing

#!/bin/bash
# The container's /sys/fs/cgroup (a config's "cgroup" mount), checked against
# the host's cgroup filesystems.  On a v1 or hybrid host it shows, as runc's
# does, a directory per hierarchy named as the host's mount point, each the
# container's own cgroup (its limits in memory/memory.limit_in_bytes,
# pids/pids.max, cpu/cpu.cfs_quota_us, ...), plus the unified tree; nothing
# of the host's other cgroups; read-only (a write fails, the host's limit is
# unchanged).  With a cgroup namespace the container's cgroup is also "/" in
# /proc/self/cgroup.  A co-mounted hierarchy (cpu,cpuacct) gets its
# controllers' symlinks.  On a v2-only host the view stays the container's
# cgroup2 directory, read-only.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run delete
plan_later

# v1_hier: "NAME CONTROLLERS" of each v1 hierarchy with a real controller
# the host mounts (NAME: the mount point's last component).
v1_hier ()
{
  awk '{ split($0, p, " - "); split(p[2], f, " "); if (f[1] != "cgroup") next
         n = split(f[3], o, ","); c = ""
         for (i = 1; i <= n; i++) if (o[i] != "rw" && o[i] != "ro" && o[i] !~ /^name=/ && o[i] !~ /=/ && o[i] != "noprefix" && o[i] != "clone_children" && o[i] != "xattr") c = c (c ? "," : "") o[i]
         if (c == "") next; m = $5; sub(".*/", "", m); print m, c }' /proc/self/mountinfo | sort -u
}

if [ -z "$(v1_hier)" ]; then
  skip "no cgroup v1 hierarchy on this host: the v1 view does not apply" 11
else
  # ---- the view without a cgroup namespace -----------------------------------------------------------
  sib_dir=$(cg_mount memory)$(cg_path $$ memory)
  sib="${sib_dir%/}/abtest-sib-$$"
  mkdir "$sib"
  make_bundle "$T/view" \
    'linux.resources.memory={"limit":67108864}' 'linux.resources.pids={"limit":77}' \
    'linux.resources.cpu={"quota":50000,"period":100000}' \
    'process.args=["/bin/sh","-c","cat /sys/fs/cgroup/pids/pids.max; cat /sys/fs/cgroup/memory/memory.limit_in_bytes; cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us; echo ls=$(ls /sys/fs/cgroup); echo memls=$(ls /sys/fs/cgroup/memory); echo ino=$(stat -c %i /sys/fs/cgroup/memory /sys/fs/cgroup/pids /sys/fs/cgroup/unified); echo 5 > /sys/fs/cgroup/pids/pids.max && echo wrote; mkdir /sys/fs/cgroup/memory/sub && echo made; mkdir /sys/fs/cgroup/new && echo made-top; echo end; sleep 60"]'
  id=$(new_id)
  start_bg "$id" "$T/view"
  ok $? "a container with a cgroup mount and memory, pids and cpu limits starts"
  pid=$(pid_of "$id")
  for ((i = 0; i < 100; i++)); do grep -q '^end$' "$T/view/stdout" 2>/dev/null && break; sleep 0.1; done
  out=$(cat "$T/view/stdout")
  is "$(sed -n 1,3p <<<"$out")" "77
67108864
50000" "inside, pids/pids.max, memory/memory.limit_in_bytes and cpu/cpu.cfs_quota_us show the container's limits"
  want=$( (v1_hier | awk '{ print $1 }'; [ -n "$(cg_mount unified)" ] && echo unified) | sort | tr '\n' ' ')
  is "$(sed -n 's/^ls=//p' <<<"$out" | tr ' ' '\n' | sort | tr '\n' ' ')" "$want" \
    "/sys/fs/cgroup lists each v1 hierarchy by the host's name, and unified"
  is "$(sed -n 's/^ino=//p' <<<"$out")" "$(stat -c %i "$(cg_dir "$pid" memory)" "$(cg_dir "$pid" pids)" "$(cg_dir "$pid" unified)" | tr '\n' ' ' | sed 's/ $//')" \
    "memory, pids and unified are the container's own cgroups on the host (same inodes)"
  unlike "$(sed -n 's/^memls=//p' <<<"$out")" "abtest-sib-$$|agentbox-" \
    "... a cgroup the host made next to the container's, or any other container's, is not visible"
  unlike "$out" '^(wrote|made|made-top)$' "writing pids.max, making a cgroup or a directory in /sys/fs/cgroup all fail inside"
  is "$(cat "$(cg_dir "$pid" pids)/pids.max")" 77 "... and on the host pids.max is still 77"
  like "$(cat "$T/view/stderr")" 'Read-only file system' "... with EROFS: the view is read-only"
  rt delete --force "$id" >/dev/null 2>&1
  rmdir "$sib"

  # ---- with a cgroup namespace -------------------------------------------------------------------------
  make_bundle "$T/viewns" 'linux.namespaces+={"type":"cgroup"}' 'linux.resources.pids={"limit":42}' \
    'process.args=["/bin/sh","-c","cat /sys/fs/cgroup/pids/pids.max; grep -c -v -e \"::/$\" -e \":/$\" /proc/self/cgroup; grep \" /sys/fs/cgroup/pids \" /proc/self/mountinfo | cut -d\" \" -f4"]'
  run_ok=0
  id=$(new_id)
  rt run --bundle "$T/viewns" "$id" </dev/null >"$T/viewns/stdout" 2>"$T/viewns/stderr" || run_ok=$?
  rt delete --force "$id" >/dev/null 2>&1
  is "$run_ok" 0 "a container with a cgroup namespace and a cgroup mount runs"
  is "$(cat "$T/viewns/stdout")" "42
0
/" "... its pids/pids.max is its limit, /proc/self/cgroup says / for every hierarchy, mountinfo shows pids rooted at /"

  # ---- a co-mounted hierarchy: cpu -> cpu,cpuacct ---------------------------------------------------
  # The host mounts the cpu hierarchy at .../cpu,cpuacct instead (as systemd
  # names co-mounted ones), in a private mount namespace: a new tmpfs over
  # /sys/fs/cgroup and every hierarchy mounted again in it.
  comount_sh='
    set -e
    lines=$(awk '\''{ split($0, p, " - "); split(p[2], f, " "); if (f[1] == "cgroup" || f[1] == "cgroup2") print f[1], $5, f[3] }'\'' /proc/self/mountinfo)
    umount -R /sys/fs/cgroup
    mount -t tmpfs -o mode=755 tmpfs /sys/fs/cgroup
    echo "$lines" | while read -r t m o; do
      [ "$m" = /sys/fs/cgroup/cpu ] && m="/sys/fs/cgroup/cpu,cpuacct"
      mkdir -p "$m"; mount -t "$t" -o "$o" "$t" "$m"
    done
    exec "$@"'
  rt_comount () { timeout -k 5 "$AB_RT_TIMEOUT" unshare --mount --propagation private -- /bin/sh -c "$comount_sh" comount "$RUNTIME" --root "$AB_STATE" "$@" 7>&-; }
  if [ -n "$(cg_mount cpu)" ] && [ "$(cg_mount cpu)" = /sys/fs/cgroup/cpu ]; then
    make_bundle "$T/comount" 'linux.resources.cpu={"quota":30000,"period":100000}' \
      'process.args=["/bin/sh","-c","readlink /sys/fs/cgroup/cpu; cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us"]'
    id=$(new_id)
    rt_comount run --bundle "$T/comount" "$id" </dev/null >"$T/comount/stdout" 2>"$T/comount/stderr"
    is "$?:$(cat "$T/comount/stdout")" "0:cpu,cpuacct
30000" "a hierarchy mounted at cpu,cpuacct shows there, with a symlink cpu -> cpu,cpuacct (as runc)"
    rt_comount delete --force "$id" >/dev/null 2>&1
  else
    skip "the cpu hierarchy is not at /sys/fs/cgroup/cpu here" 1
  fi
fi

# ---- a v2-only host: the view stays the container's cgroup2 directory --------------------------------
if with_v2_only true 2>/dev/null; then
  make_bundle "$T/view2" \
    'process.args=["/bin/sh","-c","ls /sys/fs/cgroup | grep -c -x -e memory -e pids -e unified; stat -c %i /sys/fs/cgroup; grep \" /sys/fs/cgroup \" /proc/self/mountinfo | cut -d\" \" -f6 | cut -d, -f1; echo 1 > /sys/fs/cgroup/cgroup.procs && echo wrote; sleep 60"]'
  id=$(new_id)
  rt_v2only create --bundle "$T/view2" "$id" </dev/null >"$T/view2/stdout" 2>"$T/view2/stderr" && rt_v2only start "$id"
  ok $? "v2-only: a container with a cgroup mount starts"
  pid=$(rt_v2only state "$id" 2>/dev/null | json_get pid)
  for ((i = 0; i < 50; i++)); do [ "$(wc -l <"$T/view2/stdout")" -ge 3 ] && break; sleep 0.1; done
  ino=$(stat -c %i "$(cg_dir "${pid:-0}" unified)" 2>&1)
  is "$(cat "$T/view2/stdout")" "0
$ino
ro" "v2-only: /sys/fs/cgroup is the container's own cgroup2 directory, read-only, no v1 names"
  rt_v2only delete --force "$id" >/dev/null 2>&1
fi

done_testing

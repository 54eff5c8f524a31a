#!/bin/bash
# The safety properties the start-up shortcuts of the performance work touch
# (docs/shortcuts.md lists each shortcut, its property and its test), checked
# from the host.  Each test here fails if its shortcut is wrong.
#   - the child's closes are left to execve while it builds the mount tree:
#     no fd of the host reaches the container, neither while it waits for
#     `start` nor at the execve (which resolves its path with them open);
#   - masks and binds are mount(2)s onto /proc/self/fd/N: a masked path is
#     masked on the object itself, never through a symlink, whether /proc is
#     a procfs, a tmpfs the config put there, or the image's own directory
#     with a fake self/fd/N inside;
#   - pivot_root without an rslave of its own: the old root's detach never
#     unmounts anything in the caller's mount namespace, whatever
#     rootfsPropagation says;
#   - the foreground run leaves the rlimit pre-check to the child's
#     setrlimit: the same refusal as create's, and nothing runs;
#   - a cwd of "/" is the root fd itself: the container's root, not the
#     host's;
#   - a mount point in a tmpfs the setup has just mounted is made there
#     without resolving it again: only while nothing else was mounted over
#     that tmpfs;
#   - the state directory is removed by name: delete removes it whole;
#     config.json is written in place before the first state.json: a
#     directory without state.json is no container to any reader;
#   - the seccomp cache directory is opened in one openat2 refusing
#     symlinks: a cache directory swapped for a link is never used;
#   - v1 cgroup leaves are held by path, and the release's rmdir is its
#     emptiness check: a process moved into a cgroup below the leaf (what a
#     payload with a delegated cgroup does) is killed all the same, and
#     every directory goes.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run state delete
plan_later

# ---- deferred closes: no host fd reaches the container ----------------------------------------

# A static program the rootfs does not hold, next to it in the bundle: a
# process.args that reaches it through an fd of the runtime ran a host file.
b=$T/fds
make_bundle --out "$b"
install -m 0755 "$ABTEST" "$b/host-only"
climb=$(printf '../%.0s' {1..40})
# ran_host_file CMD...: the /proc/self/fd/N paths (N = 3..24, to the bundle
# and climbing to the host's /) with which `CMD PATH` ran the host file.
ran_host_file ()
{
  local n path st ran=""
  for n in $(seq 3 24); do
    for path in "/proc/self/fd/$n/../host-only" "/proc/self/fd/$n/$climb${b#/}/host-only"; do
      "$@" "$path" </dev/null >/dev/null 2>&1
      st=$?
      { [ "$st" = 0 ] || [ -e "$b/out/ran" ]; } && ran="$ran $n:$st"
      rm -f "$b/out/ran"
    done
  done
  echo "$ran"
}
run_as_args () { cfg "$b/config.json" "process.args=[\"$1\",\"write\",\"/out/ran\",\"yes\"]" && rt run --bundle "$b" "$(new_id)"; }
exec_as_args () { rt exec "$id" "$1" write /out/ran yes; }
is "$(ran_host_file run_as_args)" "" "process.args through /proc/self/fd/N (N = 3..24) never executes a host file (CVE-2024-21626 attack 3a)"

# While it waits for start the init holds only its sockets: nothing a
# process that can read /proc/1/fd (another container sharing the pid
# namespace, an exec with CAP_SYS_PTRACE) could walk out of.
cfg "$b/config.json" 'process.args=["/bin/abtest","true"]'
id=$(new_id)
rt create --bundle "$b" "$id" </dev/null >/dev/null 2>&1
pid=$(pid_of "$id")
is "$(held_fds "$pid")" "" "a created init holds no fd above stdio but its sockets (seen from the host)"
rt delete --force "$id"

# The same attack through `exec` into a running container.
cfg "$b/config.json" 'process.args=["/bin/abtest","sleep-forever"]'
id=$(new_id)
start_bg "$id" "$b"
is "$(ran_host_file exec_as_args)" "" "exec's program through /proc/self/fd/N (N = 3..24) never is a host file"
rt delete --force "$id"

# ---- mount(2) onto /proc/self/fd/N: masks land where they are asked -------------------------

# secret: a file; sdir: a directory; secret-link: the image's link to
# real-secret, which the mask of the link must leave alone.
b=$T/mask
make_bundle "$b" 'process.args=["/bin/abtest","sleep-forever"]' \
  'linux.maskedPaths=["/etc/secret","/etc/sdir","/etc/secret-link"]'
echo SECRET >"$b/rootfs/etc/secret"
echo REAL >"$b/rootfs/etc/real-secret"
mkdir "$b/rootfs/etc/sdir" && echo S >"$b/rootfs/etc/sdir/file"
ln -s /etc/real-secret "$b/rootfs/etc/secret-link"
cp "$b/config.json" "$b/config.procfs"
# what the host sees through the container's root
masks ()
{
  local r=/proc/$1/root/etc
  echo "secret=$(cat "$r/secret" 2>&1) sdir=$(ls -A "$r/sdir" 2>&1) link=$(cat "$r/secret-link" 2>&1) real=$(cat "$r/real-secret" 2>&1)"
}
want="secret= sdir= link= real=REAL"
for how in procfs tmpfs none; do
  cp "$b/config.procfs" "$b/config.json"
  case $how in
    tmpfs) cfg "$b/config.json" 'mounts[destination=/proc].type="tmpfs"' 'mounts[destination=/proc].source="tmpfs"' ;;
    none)
      # No /proc mount: the image's /proc holds a fake self/fd/N (N = 3..63),
      # each a link to the decoy, where a mount through a path would land.
      cfg "$b/config.json" '!mounts[destination=/proc]' 'linux.readonlyPaths=[]'
      mkdir -p "$b/rootfs/proc/self/fd" && echo DECOY >"$b/rootfs/etc/decoy"
      for n in $(seq 3 63); do ln -sfn /etc/decoy "$b/rootfs/proc/self/fd/$n"; done
      ;;
  esac
  id=$(new_id)
  start_bg "$id" "$b"
  pid=$(pid_of "$id")
  is "$(masks "$pid")" "$want" "/proc $how: the masked file, directory and link read empty, the link's target does not"
  [ $how = none ] && is "$(cat "/proc/$pid/root/etc/decoy" 2>&1)" DECOY "... and no mask went through the image's fake /proc/self/fd"
  rt delete --force "$id"
done
rm -rf "$b/rootfs/proc/self"

# ---- pivot_root: the old root's detach stays in the container ------------------------------

# In a mount namespace of the test's own where every mount is shared (as /
# is on a systemd host), so the runtime's copy of it has peers here: a
# detach that propagated would take the canaries away, and a mount that
# propagated out would appear here.  (Only our canaries count for removals:
# a directory other tests remove on the host takes its mounts out of every
# namespace.)
b=$T/pivot
make_bundle "$b" 'process.args=["/bin/abtest","true"]'
mkdir -p "$T/canary"
for prop in unset private slave shared unbindable; do
  cp "$b/config.json" "$b/config.$prop"
  [ $prop = unset ] || cfg "$b/config.$prop" "linux.rootfsPropagation=\"$prop\""
done
out=$(B=$b ID=$(new_id) T=$T RUNTIME=$RUNTIME AB_STATE=$AB_STATE timeout -k 5 120 \
  unshare --mount --propagation private /bin/bash -c '
  mount --make-rshared / && mount -t tmpfs canary "$T/canary" && mkdir "$T/canary/sub" &&
    mount -t tmpfs sub "$T/canary/sub" || exit 9
  mounts () { awk "{ print \$5 }" /proc/self/mountinfo | sort; }
  before=$(mounts)
  for prop in unset private slave shared unbindable; do
    cp "$B/config.$prop" "$B/config.json"
    "$RUNTIME" --root "$AB_STATE" run --bundle "$B" "$ID-$prop" </dev/null >/dev/null 2>&1 || echo "run failed: $prop"
    new=$(comm -13 <(echo "$before") <(mounts))
    [ -z "$new" ] || echo "rootfsPropagation $prop: mounts appeared here: $(echo $new | head -c 300)"
    for m in "$T/canary" "$T/canary/sub"; do
      mountpoint -q "$m" || echo "rootfsPropagation $prop: $m is gone"
    done
  done
  umount -R "$T/canary"' 7>&- 2>&1)
is "$out" "" "runs with every rootfsPropagation leave the caller's shared mount namespace as it was"

# ---- rlimits: the foreground run's check is the child's setrlimit ---------------------------

# One above the hard limit the runtime runs under: refused unless the runtime
# holds CAP_SYS_RESOURCE and the container has no user namespace of its own;
# either way run and create must agree.
host_hard=$(ulimit -Hn)
b=$T/rlim
make_bundle --out "$b" 'process.args=["/bin/abtest","write","/out/ran","yes"]'
for userns in no yes; do
  [ $userns = yes ] && cfg "$b/config.json" 'linux.namespaces+=user' \
    'linux.uidMappings=[{"containerID":0,"hostID":0,"size":65536}]' 'linux.gidMappings=[{"containerID":0,"hostID":0,"size":65536}]'
  cfg "$b/config.json" "process.rlimits=[{\"type\":\"RLIMIT_NOFILE\",\"hard\":$((host_hard + 1)),\"soft\":1024}]"
  id=$(new_id)
  rt create --bundle "$b" "$id" </dev/null >/dev/null 2>"$T/create.err"
  cst=$?
  rt delete --force "$id" >/dev/null 2>&1
  rm -f "$b/out/ran"
  rt run --bundle "$b" "$(new_id)" </dev/null >/dev/null 2>"$T/run.err"
  rst=$?
  if [ $cst = 0 ]; then
    is "$rst $(cat "$T/run.err")" "0 " "user namespace $userns: RLIMIT_NOFILE above the hard limit is allowed here, by run as by create"
  else
    is "$rst $(cat "$T/run.err")" "125 $(cat "$T/create.err")" \
      "user namespace $userns: run refuses RLIMIT_NOFILE above the hard limit with create's message (exit 125)"
    [ ! -e "$b/out/ran" ]
    ok $? "... and the program never ran"
  fi
done

# ---- cwd "/" is the container's root ---------------------------------------------------------

b=$T/cwd
make_bundle "$b" 'process.args=["/bin/abtest","sleep-forever"]' 'process.cwd="/"'
id=$(new_id)
start_bg "$id" "$b"
pid=$(pid_of "$id")
is "$(stat -L -c %d:%i "/proc/$pid/cwd" 2>&1)" "$(stat -c %d:%i "$b/rootfs")" \
  "a cwd of / is the rootfs's directory (seen from the host), not the host's /"
rt delete --force "$id"

# ---- mount points in a fresh tmpfs ------------------------------------------------------------

# tmpfs on /mnt, the image's directory bound over it, a tmpfs on /mnt/sub:
# the last one must land on the image's sub (covering its marker), not on a
# sub made in the tmpfs below the bind.
b=$T/fresh
make_bundle "$b" 'process.args=["/bin/abtest","sleep-forever"]' \
  'mounts+={"destination":"/mnt","type":"tmpfs","source":"tmpfs"}' \
  'mounts+={"destination":"/mnt","type":"bind","source":"imgdir","options":["rbind"]}' \
  'mounts+={"destination":"/mnt/sub","type":"tmpfs","source":"tmpfs"}'
mkdir -p "$b/rootfs/mnt" "$b/imgdir/sub" && echo covered >"$b/imgdir/sub/marker" && echo seen >"$b/imgdir/top"
id=$(new_id)
start_bg "$id" "$b"
pid=$(pid_of "$id")
is "$(cat "/proc/$pid/root/mnt/top" 2>&1) $(ls -A "/proc/$pid/root/mnt/sub" 2>&1)" "seen " \
  "a tmpfs on a name below a bind that covers a fresh tmpfs lands on the bind's directory"
rt delete --force "$id"

# ---- the state directory is removed by name ---------------------------------------------------

b=$T/sdel
make_bundle "$b" 'process.args=["/bin/abtest","true"]'
id=$(new_id)
rt create --bundle "$b" "$id" </dev/null >/dev/null 2>&1
echo planted >"$AB_STATE/$id/extra"
rt delete --force "$id"
[ ! -e "$AB_STATE/$id" ]
ok $? "delete removes the state directory with files it did not make in it"
id=$(new_id)
mkdir -m 0700 "$AB_STATE/$id" && cp "$b/config.json" "$AB_STATE/$id/config.json"
out=$(rt state "$id" 2>&1)
like "$? $out" "^1 .*container \`$id\` does not exist" "a state directory holding only config.json is no container to state"
unlike "$(rt list 2>&1)" "$id" "... nor to list"
rm -rf "${AB_STATE:?}/$id"

# ---- the seccomp cache directory ----------------------------------------------------------------

b=$T/sc
make_bundle "$b" 'process.args=["/bin/abtest","syscall","getpid"]' \
  'linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getpid"],"action":"SCMP_ACT_ERRNO"}]}'
C=$T/sc-cache
mkdir -p -m 0711 "$C" && mkdir -m 0700 "$T/sc-elsewhere" && ln -s "$T/sc-elsewhere" "$C/seccomp"
out=$(AGENTBOX_CACHE_DIR=$C rt run --bundle "$b" "$(new_id)" </dev/null 2>"$T/err")
is "$out $(ls -A "$T/sc-elsewhere")" "getpid=EPERM " "a seccomp cache directory that is a symlink is not written through, and the filter holds"
like "$(cat "$T/err")" "cache not used .seccomp programs are compiled anew" "... and the log says the cache is not used"

# ---- cgroup leaves by path: nothing below them escapes the release ---------------------------

# The host pid namespace, so that the daemon's pid is the host's.
b=$T/cgpath
make_bundle --out "$b" \
  'process.args=["/bin/sh","-c","/bin/abtest setsid-sleeper >/out/pid; while [ ! -e /out/go ]; do sleep 0.1; done"]' \
  'linux.namespaces-=pid' '!mounts[destination=/proc]' 'linux.maskedPaths=[]' 'linux.readonlyPaths=[]'
id=$(new_id)
rt run --bundle "$b" "$id" </dev/null >/dev/null 2>&1 &
runner=$!
wait_for_file "$b/out/pid"
daemon=$(sed -n 's/^pid=//p' "$b/out/pid")
moved="" dirs=""
while IFS=: read -r _ ctrl path; do
  case $ctrl in
    "") m=$(cg_mount unified) ;;
    name=*) m=$(awk -v n="$ctrl" '$0 ~ " - cgroup " && $0 ~ n { print $5; exit }' /proc/self/mountinfo) ;;
    *) m=$(cg_mount "${ctrl%%,*}") ;;
  esac
  case $path in *"$id"*) ;; *) continue ;; esac
  [ -n "$m" ] && mkdir "$m$path/sub" && echo "$daemon" >"$m$path/sub/cgroup.procs" && moved="$moved ${ctrl:-unified}"
  dirs="$dirs $m$path"
done <"/proc/$daemon/cgroup"
[ -n "$moved" ]
ok $? "the daemon (host pid ${daemon:-none}) was moved below the container's leaf in:${moved:- none}"
touch "$b/out/go"
wait "$runner"
wait_gone "$daemon"
ok $? "when the program ends, run kills the daemon that sat below the leaf"
left=""
for d in $dirs; do [ -e "$d" ] && left="$left $d"; done
is "$left" "" "... and removes the leaf and the cgroup below it in every hierarchy"

done_testing

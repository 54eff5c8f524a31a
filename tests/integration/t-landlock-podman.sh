#!/bin/bash
# The sandbox without namespaces where agents usually are: inside a rootful
# podman container with podman's default seccomp profile and no extra
# capability, as its root and as a non-root user (docs/landlock.md).  There
# the namespaced sandbox cannot be set up (the container's cgroups are
# read-only; with a seccomp profile that refuses unshare(CLONE_NEWUSER), no
# user namespace at all): `run --default` says so on one line and names the
# flag; `run --default --fallback landlock` runs the program under landlock,
# which cannot write outside the workspace, and the record lists what it
# does not give.  Checked from the host: the files in the directories bound
# into the container, and the processes in the container's pid namespace.
#
# podman runs the runtime under test as its own runtime too (as t-podman.sh
# does), in the private cgroup view of with_own_cgroup_root.
. "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || skip_all "podman is not installed (apt-get install podman)"
command -v conmon >/dev/null || skip_all "conmon is not installed"
is_agentbox || skip_all "the fallback is agentbox's"
kabi=$("$PYTHON3" -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); r = l.syscall(444, None, 0, 1); print(r if r > 0 else 0)')
[ "$kabi" -gt 0 ] || skip_all "landlock is not available on this kernel (landlock_create_ruleset: no ABI)"
plan_later

P=$T/podman
mkdir -p "$P/root" "$P/run" "$P/tmp" "$P/rootfs"/{usr,etc,proc,sys,dev,tmp,run,var,root,ab,ws,out,outside}
chmod 1777 "$P/rootfs/tmp"
parent=/ab-$$-llpodman
# The host's /usr and /etc, read-only: agentbox and the shell run from
# them; on a usr-merged host /bin, /lib... are links into /usr.
vols=(-v /usr:/usr:ro -v /etc:/etc:ro -v "$(dirname "$RUNTIME"):/ab:ro")
for d in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$d" ]; then
    ln -s "$(readlink "/$d")" "$P/rootfs/$d"
  elif [ -d "/$d" ]; then
    mkdir -p "$P/rootfs/$d" && vols+=(-v "/$d:/$d:ro")
  fi
done
echo "$P/rootfs" >>"$T/rootfs-list"
cat >"$P/runtime" <<EOF
#!/bin/sh
exec "$RUNTIME" --root "$AB_STATE" "\$@"
EOF
chmod 0755 "$P/runtime"

pm ()
{
  timeout -k 5 "$AB_RT_TIMEOUT" /usr/bin/unshare --cgroup --mount --propagation private -- \
    /bin/sh -c "$_AB_CGROOT_SH" with_own_cgroup_root \
    podman --root "$P/root" --runroot "$P/run" --tmpdir "$P/tmp" --storage-driver vfs \
    --cgroup-manager cgroupfs --events-backend file --runtime "$P/runtime" "$@" 7>&-
}

# inbox WHO DIR [PODMAN OPTION...] -- SCRIPT: run SCRIPT in a podman
# container as WHO (root or a uid), with the host directories DIR/ws,
# DIR/out and DIR/outside at /ws, /out and /outside; agentbox is /ab/agentbox.
inbox ()
{
  local who=$1 dir=$2 user=()
  shift 2
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  mkdir -p "$dir/ws" "$dir/out" "$dir/outside" && chmod 0777 "$dir/ws" "$dir/out" "$dir/outside"
  [ "$who" = root ] || user=(--user "$who:$who")
  pm run --rm --network none --cgroup-parent "$parent" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
    "${user[@]}" "${vols[@]}" -v "$dir/ws:/ws" -v "$dir/out:/out" -v "$dir/outside:/outside" -e HOME=/tmp \
    "${opts[@]}" --rootfs "$P/rootfs" /bin/sh -c "$1"
}

# In the container: agentbox with a state root of the user's.
AB='/ab/agentbox --root /tmp/ab-$(id -u)'

for who in root 1000; do
  d=$T/$who
  # ---- without the flag: one line, the refusal and the flag
  inbox "$who" "$d" -- "$AB run --default t1 -- /bin/true 2>/out/err; echo \$? >/out/st" </dev/null >/dev/null 2>&1
  is "$(cat "$d/out/st" 2>/dev/null)" 125 "podman, as $who: run --default cannot set up its namespaces (125)"
  # The first step the container refuses: agentbox there is rootless (no
  # CAP_SYS_ADMIN), so no cgroup is tried, and a fresh /proc cannot be
  # mounted over podman's masked one (docs/rootless.md, "Nested"); a
  # rootful agentbox is refused its cgroups (read-only) first.
  like "$(cat "$d/out/err")" '^agentbox: .*(Read-only file system|mount proc filesystem: refused while [0-9]+ mounts cover parts of the /proc .*unmask=ALL\): Operation not permitted); where namespaces cannot be set up, `run --default --fallback landlock` runs without them' \
    "... one line names what refused it and the flag"
  is "$(wc -l <"$d/out/err")" 1 "... on one line"

  # ---- with it: the program runs, writes its workspace and nothing else
  cp "$ABTEST" "$d/ws/abtest" 2>/dev/null || { mkdir -p "$d/ws" && cp "$ABTEST" "$d/ws/abtest"; }
  chmod 0755 "$d/ws/abtest"
  inbox "$who" "$d" -- "$AB run --default --fallback landlock --workspace /ws --record /out/rec t2 -- \
      /bin/sh -c 'id -u >uid; echo x >/outside/x; echo y >/tmp/y; cat /etc/shadow; exit 7' 2>/out/err; echo \$? >/out/st" \
    </dev/null >/dev/null 2>&1
  is "$(cat "$d/out/st" 2>/dev/null)" 7 "podman, as $who: run --default --fallback landlock runs the program (its status 7)"
  is "$(cat "$d/ws/uid" 2>/dev/null)" "$([ "$who" = root ] && echo 0 || echo "$who")" "... which wrote its workspace (seen on the host)"
  ok "$([ ! -e "$d/outside/x" ]; echo $?)" "... and could not write /outside, a writable bind of the container (nothing on the host)"
  like "$(cat "$d/out/err")" '/outside/x: Permission denied' "... refused by landlock (EACCES)"
  like "$(cat "$d/out/err")" '/etc/shadow: Permission denied' "... /etc/shadow unreadable"
  deg=$("$PYTHON3" -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["result"]["structuredContent"]["degraded"]))' "$d/out/rec" 2>&1)
  miss=""
  for w in '^namespaces: none \(the namespaced sandbox could not be set up: .*(Read-only file system|mount proc filesystem: refused while [0-9]+ mounts cover parts of the /proc .*Operation not permitted)\)' '^pid: .*landlock refuses it signals' \
    '^mounts: none' '^network: no network namespace' '^cgroup: no memory, pids or CPU limit'; do
    grep -Eq "$w" <<<"$deg" || miss+="$w "
  done
  is "$miss" "" "... the record lists what the mode does not give in degraded" || diag "$deg"
  is "$(ls "$P/rootfs/tmp" | grep -c agentbox-fallback)" 0 "... its private temporary directory is gone"

  # ---- a setsid'd, double-forked grandchild does not outlive the run
  name=ab-$$-ll-$who
  # (the program writes only its workspace: the markers it sees are there)
  rm -f "$d/ws"/{gpid,started,go} "$d/out"/{done,end}
  user=()
  [ "$who" = root ] || user=(--user "$who:$who")
  pm run -d --name "$name" --network none --cgroup-parent "$parent" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
    "${user[@]}" "${vols[@]}" -v "$d/ws:/ws" -v "$d/out:/out" -e HOME=/tmp --rootfs "$P/rootfs" /bin/sh -c \
    "$AB run --default --fallback landlock --workspace /ws t3 -- /bin/sh -c \
       './abtest setsid-sleeper >gpid; touch started; while [ ! -e go ]; do sleep 0.05; done'; \
     touch /out/done; while [ ! -e /out/end ]; do sleep 0.05; done" </dev/null >/dev/null 2>&1
  wait_for_file "$d/ws/started" 30
  cpid=$(pm inspect -f '{{.State.Pid}}' "$name" 2>/dev/null)
  pidns=$(readlink "/proc/$cpid/ns/pid" 2>/dev/null)
  sleepers ()
  {
    local p
    for p in /proc/[0-9]*; do
      [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$pidns" ] || continue
      [ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" = "./abtest setsid-sleeper " ] && echo "${p#/proc/}"
    done
  }
  is "$(sleepers | wc -l)" 1 "podman, as $who: while the program runs, its setsid'd grandchild runs (host pid $(sleepers))"
  touch "$d/ws/go"
  wait_for_file "$d/out/done" 30
  is "$(sleepers | wc -l)" 0 "... once the run ended it is gone, with the container still up (checked from the host)"
  touch "$d/out/end"
  pm wait "$name" >/dev/null 2>&1
  pm rm -f "$name" >/dev/null 2>&1
done

# ---- the minimal outer profile of docs/rootless.md: the namespaced sandbox, nested
# seccomp=unconfined lets agentbox make its namespaces, unmask=ALL lets it
# mount a fresh /proc and /sys in them; no capability, no --privileged.
for who in root 1000; do
  d=$T/nested-$who
  inbox "$who" "$d" --security-opt seccomp=unconfined --security-opt unmask=ALL -- \
    "$AB run --default t4 -- /bin/sh -c 'echo nested; id -u' >/out/o 2>/out/err; echo \$? >/out/st" \
    </dev/null >/dev/null 2>&1
  is "$(cat "$d/out/st" 2>&1) $(tr '\n' ' ' <"$d/out/o" 2>&1)" "0 nested 0 " \
    "podman, as $who, with seccomp=unconfined and unmask=ALL: run --default runs nested, in its namespaces" ||
    diag "$(cat "$d/out/err" 2>&1)"
done
d=$T/nested-masked
inbox root "$d" --security-opt seccomp=unconfined -- \
  "$AB run --default t5 -- /bin/true 2>/out/err; echo \$? >/out/st" </dev/null >/dev/null 2>&1
like "$(cat "$d/out/st" 2>&1) $(cat "$d/out/err" 2>&1)" '^125 agentbox: mounts\[[0-9]+\] \(/proc\): mount proc filesystem: refused while [0-9]+ mounts cover parts of the /proc agentbox runs with \(an outer container.s masked paths; podman: --security-opt unmask=ALL\)' \
  "... without unmask=ALL, podman's masked /proc keeps a fresh one from being mounted: one line names the mount and the setting"

# ---- a seccomp profile that refuses user namespaces ----------------------------------------

# podman's default profile lets a container call unshare(CLONE_NEWUSER);
# Docker's and many others' do not.  The same profile with that refused
# (EPERM for unshare and clone with CLONE_NEWUSER, clone3 ENOSYS):
"$PYTHON3" - /usr/share/containers/seccomp.json "$T/nouserns.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
for r in p["syscalls"]:
    r["names"] = [n for n in r["names"] if n not in ("unshare", "clone", "clone3")]
NEWUSER = 0x10000000
for n in ("unshare", "clone"):
    p["syscalls"].append({"names": [n], "action": "SCMP_ACT_ALLOW",
                          "args": [{"index": 0, "value": NEWUSER, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]})
    p["syscalls"].append({"names": [n], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
                          "args": [{"index": 0, "value": NEWUSER, "valueTwo": NEWUSER, "op": "SCMP_CMP_MASKED_EQ"}]})
p["syscalls"].append({"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38})
json.dump(p, open(sys.argv[2], "w"))
EOF
if [ -s "$T/nouserns.json" ]; then
  d=$T/seccomp
  inbox 1000 "$d" --security-opt "seccomp=$T/nouserns.json" -- \
    "$AB run --default t4 -- /bin/true 2>/out/err; echo \$? >/out/st; \
     $AB run --default --fallback landlock --workspace /ws --record /out/rec t5 -- /bin/sh -c 'echo ok >ok' 2>/out/err2; echo \$? >/out/st2" \
    </dev/null >/dev/null 2>&1
  is "$(cat "$d/out/st" 2>/dev/null)" 125 "a profile refusing unshare(CLONE_NEWUSER): run --default fails (125)"
  like "$(cat "$d/out/err")" '^agentbox: no user namespace can be made here: a seccomp filter on this process refuses unshare\(CLONE_NEWUSER\) \(Operation not permitted.*--fallback landlock' \
    "... one line names the seccomp refusal and the flag"
  is "$(wc -l <"$d/out/err")" 1 "... on one line"
  is "$(cat "$d/out/st2")/$(cat "$d/ws/ok" 2>/dev/null)" 0/ok "with --fallback landlock the program runs (it wrote its workspace)" ||
    diag "$(cat "$d/out/err2")"
  like "$("$PYTHON3" -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["structuredContent"]["degraded"][0])' "$d/out/rec" 2>&1)" \
    '^namespaces: none \(no user namespace can be made here: a seccomp filter' "... its record says why there are no namespaces"
else
  skip "no /usr/share/containers/seccomp.json to derive the profile from" 5
fi

remove_cgroup_parents "$parent"
pm system reset -f >/dev/null 2>&1 || :
done_testing

#!/bin/bash
# Hostile bundles and images (issue 10), each checked from the host:
#   1. a bind source through a symlink of the image never reaches the host;
#   2. capability names capabilities(7) does not define are refused;
#   3. the state root is left exactly as create found it;
#   4. a rootfs of an unmapped owner: an error naming owner, mapping and
#      fix, or an id-mapped rootfs that works with nothing chowned.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start delete validate

# ---- 1. bind sources through a symlink of the image ------------------------

# mounts_in CONFIG: how many mounts it has (a mount added next gets that index).
mounts_in () { cfg "$1" --get mounts | "$PYTHON3" -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

secret="HOST-SECRET-$$-$RANDOM"
mkdir -p "$T/hostdir" && echo "$secret" >"$T/hostdir/secret"
if agentbox_only 13; then
  b=$T/links
  make_bundle "$b" 'process.args=["/bin/abtest","cat","/mnt/secret"]'
  mkdir -p "$b/rootfs/mnt"
  ln -s "$T/hostdir" "$b/rootfs/srcvol"
  cp "$b/config.json" "$b/config.base.json"
  cfg "$b/config.json" "mounts+={\"destination\":\"/mnt\",\"type\":\"bind\",\"source\":\"$b/rootfs/srcvol\",\"options\":[\"rbind\",\"ro\"]}"
  n=$(($(mounts_in "$b/config.json") - 1))
  out=$(rt validate --bundle "$b" 2>&1)
  like "$? $out" "^1 agentbox: config.json: mounts\[$n\] \(/mnt\): source \`$b/rootfs/srcvol\` passes through the symlink \`$b/rootfs/srcvol\` -> \`$T/hostdir\` inside \`$b\`, which leads out of it" \
    "validate refuses a bind source through an image symlink that leaves the bundle, naming mounts[$n] and the link"
  rt run --bundle "$b" "$(new_id)" </dev/null >"$T/out" 2>"$T/err"
  st=$?
  unlike "$(cat "$T/out" "$T/err")" "$secret" "the host secret never reaches the container's output"
  like "$st $(cat "$T/err")" "^125 .*mounts\[$n\] \(/mnt\): source .* passes through the symlink" "run refuses it (exit 125)"

  # The same source relative to the bundle, and a relative link climbing out.
  cp "$b/config.base.json" "$b/config.json"
  cfg "$b/config.json" 'mounts+={"destination":"/mnt","type":"bind","source":"rootfs/srcvol","options":["rbind"]}'
  rt run --bundle "$b" "$(new_id)" </dev/null >"$T/out" 2>"$T/err"
  like "$? $(cat "$T/out" "$T/err")" "^125 .*source \`rootfs/srcvol\` passes through the symlink \`$b/rootfs/srcvol\`" \
    "a relative source is relative to the bundle, and refused the same way"
  rm "$b/rootfs/srcvol" && ln -s "../../../../../../../../../../..$T/hostdir" "$b/rootfs/srcvol"
  rt run --bundle "$b" "$(new_id)" </dev/null >"$T/out" 2>"$T/err"
  st=$?
  unlike "$(cat "$T/out" "$T/err")" "$secret" "a relative link climbing out with .. does not reach the host either"
  like "$st $(cat "$T/err")" "^125 .*passes through the symlink .*srcvol\` -> \`\.\./\.\./" "... and is refused naming it"

  # A directory of the path is the link (rootfs/srcvol/secret), and an idmapped bind.
  cp "$b/config.base.json" "$b/config.json"
  cfg "$b/config.json" "mounts+={\"destination\":\"/mnt/secret\",\"type\":\"bind\",\"source\":\"$b/rootfs/srcvol/secret\",\"options\":[\"bind\"]}"
  rt run --bundle "$b" "$(new_id)" </dev/null >"$T/out" 2>"$T/err"
  st=$?
  unlike "$(cat "$T/out" "$T/err")" "$secret" "a link in the middle of the source path is caught too"
  is "$st" 125 "... and refused"

  # Links that stay inside the bundle keep working (an image's lib -> usr/lib).
  mkdir -p "$b/rootfs/data/real" && echo inside >"$b/rootfs/data/real/secret"
  ln -s real "$b/rootfs/data/link"
  cp "$b/config.base.json" "$b/config.json"
  cfg "$b/config.json" 'mounts+={"destination":"/mnt","type":"bind","source":"rootfs/data/link","options":["rbind"]}'
  is "$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)" "inside" "a link that stays inside the bundle is followed"
  rt validate --bundle "$b"
  is "$?" 0 "... and validates"

  # A source outside the bundle is the author's: resolved as given.
  ln -s "$T/hostdir" "$T/author-link"
  cp "$b/config.base.json" "$b/config.json"
  cfg "$b/config.json" "mounts+={\"destination\":\"/mnt\",\"type\":\"bind\",\"source\":\"$T/author-link\",\"options\":[\"rbind\"]}"
  is "$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)" "$secret" "a symlink outside the bundle (the config author's) is followed"

  # root.path through a link of the bundle, to a host directory that would
  # make a working root (a copy of the rootfs holding the secret).
  cp -a "$T/base-rootfs" "$T/hostfs" && cp "$T/hostdir/secret" "$T/hostfs/secret"
  cp "$b/config.base.json" "$b/config.json"
  ln -s "$T/hostfs" "$b/rootfs/hostroot"
  cfg "$b/config.json" 'root.path:=rootfs/hostroot' 'process.args=["/bin/cat","/secret"]'
  rt run --bundle "$b" "$(new_id)" </dev/null >"$T/out" 2>"$T/err"
  st=$?
  unlike "$(cat "$T/out" "$T/err")" "$secret" "root.path through an image symlink never makes a host directory the root"
  like "$st $(cat "$T/err")" "root\.path \`rootfs/hostroot\` passes through the symlink \`$b/rootfs/hostroot\` -> \`$T/hostfs\`" \
    "... refused naming the link"
  cp "$b/config.base.json" "$b/config.json"
fi

# ---- 2. unknown capability names ------------------------------------------

if agentbox_only 5; then
  b=$T/caps
  make_bundle --out "$b" 'process.args=["/bin/abtest","write","/out/ran","yes"]' \
    'process.capabilities.bounding=["CAP_BOGUS"]'
  out=$(rt validate --bundle "$b" 2>&1)
  st=$?
  is "$st" 1 "validate: an unknown capability is an error (exit 1)"
  is "$out" 'agentbox: config.json: process.capabilities.bounding[0]: unknown capability "CAP_BOGUS"' \
    "validate names the JSON path and the capability"
  id=$(new_id)
  rt run --bundle "$b" "$id" </dev/null >/dev/null 2>"$T/err"
  st=$?
  like "$st $(cat "$T/err")" '^125 .*process\.capabilities\.bounding\[0\]: unknown capability "CAP_BOGUS"$' \
    "run refuses it with the same path and exits 125"
  [ ! -e "$b/out/ran" ]
  ok $? "the program never ran: nothing was written to the host's $b/out"
  cfg "$b/config.json" 'process.capabilities.bounding=["CAP_KILL"]' 'process.capabilities.ambient=["CAP_KILL","CAP_KILL "]'
  rt create --bundle "$b" "$(new_id)" </dev/null >/dev/null 2>"$T/err"
  like "$? $(cat "$T/err")" '^1 .*process\.capabilities\.ambient\[1\]: unknown capability "CAP_KILL "$' \
    "create refuses a near miss in another set, naming its index"
fi

# ---- 3. the state root is left as create found it ---------------------------

# (lib.sh points AGENTBOX_CACHE_DIR at $T/cache.)
listing () { find "$1" -printf '%P %y %m %u\n' | sort; }

if agentbox_only 9; then
  R=$T/root3
  mkdir -m 0711 "$R"
  before=$(listing "$R")
  b=$T/b3
  make_bundle "$b" 'process.args=["/bin/abtest","true"]' \
    'linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mount"],"action":"SCMP_ACT_ERRNO"}]}'
  id=$(new_id)
  "$RUNTIME" --root "$R" run --bundle "$b" "$id" </dev/null >/dev/null 2>"$T/err" 7>&-
  is "$?" 0 "run of a bundle with a seccomp profile works"
  is "$(listing "$R")" "$before" "after run the state root holds exactly what it held before (no .cache)"
  [ -n "$(find "$T/cache/seccomp" -type f 2>/dev/null)" ]
  ok $? "the compiled seccomp program went to the cache directory instead"

  id=$(new_id)
  "$RUNTIME" --root "$R" create --bundle "$b" "$id" </dev/null >/dev/null 2>&1 7>&- &&
    "$RUNTIME" --root "$R" start "$id" 7>&- && AB_STATE=$R wait_for_status "$id" stopped &&
    "$RUNTIME" --root "$R" delete "$id" 7>&-
  is "$?" 0 "create, start, delete"
  is "$(listing "$R")" "$before" "after create/start/delete the state root is as before"

  # create killed while a createRuntime hook runs: everything of the
  # container exists by then (state, cgroups, the child); then delete --force.
  cp "$b/config.json" "$b/config.plain.json"
  cfg "$b/config.json" 'hooks.createRuntime=[{"path":"/bin/sh","args":["sh","-c","touch '"$T"'/hook-ran; exec sleep 30"]}]'
  id=$(new_id)
  rm -f "$T/hook-ran"
  "$RUNTIME" --root "$R" create --bundle "$b" "$id" </dev/null >/dev/null 2>&1 7>&- &
  pid=$!
  for ((i = 0; i < 100; i++)); do [ -e "$T/hook-ran" ] && break; sleep 0.05; done
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  "$RUNTIME" --root "$R" delete --force "$id" 7>&-
  is "$?" 0 "delete --force of a create killed during its hook"
  is "$(listing "$R")" "$before" "after delete --force of a killed create the state root is as before"
  cp "$b/config.plain.json" "$b/config.json"

  id=$(new_id)
  "$RUNTIME" --root "$R" run --default "$id" -- /bin/true </dev/null >/dev/null 2>"$T/err" 7>&-
  is "$?" 0 "run --default works"
  is "$(listing "$R")" "$before" "after run --default the state root is as before (no sandbox skeleton, no cache)"
fi

# ---- 3b. the cache is safe against a hostile or broken writer ---------------

if agentbox_only 12; then
  denyA='linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getpid"],"action":"SCMP_ACT_ERRNO"}]}'
  denyB='linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mount"],"action":"SCMP_ACT_ERRNO"}]}'
  make_bundle "$T/ca" 'process.args=["/bin/abtest","syscall","getpid"]' "$denyA"
  make_bundle "$T/cb" 'process.args=["/bin/abtest","syscall","getpid"]' "$denyB"
  runc_out () { # BUNDLE CACHE: the program's stdout, agentbox's stderr in $T/err
    AGENTBOX_CACHE_DIR=$2 "$RUNTIME" --root "$AB_STATE" run --bundle "$1" "$(new_id)" </dev/null 2>"$T/err" 7>&-
  }
  C=$T/c3
  is "$(runc_out "$T/ca" "$C/a")" "getpid=EPERM" "profile A denies getpid"
  is "$(runc_out "$T/cb" "$C/b")" "getpid=ok" "profile B allows it"
  ea=$(find "$C/a/seccomp" -type f) eb=$(find "$C/b/seccomp" -type f)
  is "$(stat -c '%a %U' "$C/a" "$C/a/seccomp" "$ea" | tr '\n' ' ')" "711 root 700 root 600 root " \
    "the cache directory is root's 0711, its seccomp directory 0700, the entry 0600"

  # A's program under B's name (what a hash collision or a confused writer
  # would leave): the stored key differs, so B compiles its own.
  cp "$ea" "$eb"
  is "$(runc_out "$T/cb" "$C/b")" "getpid=ok" "an entry of another profile under B's name is a miss, never A's filter"
  cmp -s "$ea" "$eb"
  isnt "$?" 0 "and B's own entry replaced it"

  # Flipped bytes in the program, then a truncated entry: a miss that says why.
  python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[-3]^=0xff; open(p,"wb").write(b)' "$ea"
  is "$(runc_out "$T/ca" "$C/a")" "getpid=EPERM" "a tampered entry is not used: A still denies getpid"
  like "$(cat "$T/err")" 'seccomp cache: entry [0-9a-f]{16}: checksum mismatch: compiling anew' "the log says why"
  truncate -s 100 "$ea"
  is "$(runc_out "$T/ca" "$C/a")" "getpid=EPERM" "a truncated entry is a miss"
  like "$(cat "$T/err")" "entry [0-9a-f]{16}: 100 bytes, not what its header says" "the log says so"

  # A directory others may write, and an entry that is a symlink: ignored.
  chmod 0777 "$C/a/seccomp"
  out=$(runc_out "$T/ca" "$C/a")
  like "$out $(cat "$T/err")" "^getpid=EPERM .*cache not used \(seccomp programs are compiled anew\): .*seccomp. has mode 0777 \(at most 0700\)" \
    "a cache directory writable by others is not used, and the run works"
  chmod 0700 "$C/a/seccomp"
  echo junk >"$T/elsewhere"
  chmod 0600 "$T/elsewhere"
  rm -f "$ea" && ln -s "$T/elsewhere" "$ea"
  is "$(runc_out "$T/ca" "$C/a") $(cat "$T/elsewhere")" "getpid=EPERM junk" \
    "an entry that is a symlink is neither followed nor written through"

  # Bounded: 100 stale entries, the oldest go.
  for ((i = 0; i < 100; i++)); do
    f=$C/b/seccomp/$(printf '%016x' $i)
    echo stale >"$f" && chmod 0600 "$f" && touch -d '2020-01-01' "$f"
  done
  runc_out "$T/ca" "$C/b" >/dev/null
  n=$(find "$C/b/seccomp" -type f | wc -l)
  ok "$([ "$n" -le 64 ] && [ -n "$(find "$C/b/seccomp" -type f -newer "$T/elsewhere")" ] && echo 0 || echo 1)" \
    "at most 64 entries are kept, the oldest evicted, the new one kept (now $n)"
fi

# ---- 4. a rootfs owned outside the user namespace's mapping ----------------

# The hardened profile maps container root to host 100000; the rootfs is
# host root's, as extracted by a root tool, and lacks the mount point /sys,
# which the container's root may not create.
hardened_bundle () { # DIR [spec option...]
  local d=$1
  shift
  mkdir -p "$d" && cp -a "$T/base-rootfs" "$d/rootfs" && echo "$d/rootfs" >>"$T/rootfs-list"
  (cd "$d" && "$RUNTIME" spec --bundle "$d" "$@" 7>&-) &&
    cfg "$d/config.json" process.terminal=false
}
owners () { find "$1" -printf '%P %U:%G\n' | sort; }

if agentbox_only 9; then
  b=$T/unmapped
  hardened_bundle "$b"
  rmdir "$b/rootfs/sys"
  cfg "$b/config.json" 'process.args=["/bin/abtest","true"]'
  before=$(owners "$b/rootfs")
  rt run --bundle "$b" "$(new_id)" </dev/null >/dev/null 2>"$T/err"
  st=$?
  err=$(cat "$T/err")
  is "$st" 125 "a root-owned rootfs under the hardened mapping cannot be set up (exit 125)"
  like "$err" "create directory \`sys\` in the container: Permission denied; \`$b/rootfs\` belongs to host uid 0, outside the user namespace's uid mapping \(container 0-65535 = host 100000-165535\)" \
    "the error names the directory, its host owner and the mapping"
  like "$err" "chown the rootfs into the mapped range, create the mount points in the image, or mount the rootfs id-mapped \(annotation dev.agentbox.rootfs.idmap=true" \
    "... and the three fixes"
  is "$(printf '%s\n' "$err" | wc -l)" 1 "... on one line"

  b=$T/idmapped
  hardened_bundle "$b" --idmap-rootfs
  rmdir "$b/rootfs/sys"
  cfg "$b/config.json" 'process.args=["/bin/sh","-c","id -u; ls -ln /bin/abtest | { read m l u g r; echo $u:$g; }; touch /tmp/x"]'
  is "$(cfg "$b/config.json" --get annotations)" '{"dev.agentbox.landlock": "auto", "dev.agentbox.rootfs.idmap": "true"}' \
    "spec --idmap-rootfs sets the annotation"
  before=$(owners "$b/rootfs")
  out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>"$T/err")
  is "$? $out" "0 0
0:0" "the same root-owned rootfs runs id-mapped under the hardened profile, its files the container root's"
  after=$(owners "$b/rootfs")
  is "$(comm -23 <(echo "$before") <(echo "$after"))" "" "nothing on disk was chowned"
  is "$(comm -13 <(echo "$before") <(echo "$after"))" "sys 0:0" "the mount point the container's root made is host root's"

  # A writable root: what the container's root makes is host root's on disk.
  cfg "$b/config.json" root.readonly=false 'process.args=["/bin/abtest","touch","/made-inside"]'
  rt run --bundle "$b" "$(new_id)" </dev/null >/dev/null 2>"$T/err"
  is "$? $(stat -c %u:%g "$b/rootfs/made-inside" 2>&1)" "0 0:0" \
    "a file the container creates on the writable id-mapped root belongs to host root (not 100000)"
  rm -f "$b/rootfs/made-inside"
  rt validate --bundle "$b"
  is "$?" 0 "the annotation validates"
  cfg "$b/config.json" 'linux.namespaces-=user' '!linux.uidMappings' '!linux.gidMappings'
  like "$(rt validate --bundle "$b" 2>&1)" "annotations.dev.agentbox.rootfs.idmap: needs a new user namespace" \
    "without a user namespace it is refused"
fi

# ---- 5. root.path: the host's / or a directory above agentbox's own ----------

# Each of these would run the container on the host's files, or let it
# rewrite the state of other containers or the seccomp programs they load.
# Refused by validate and create alike (compared by device and inode of the
# directory opened, so every spelling of / is caught), and nothing runs.
if agentbox_only 18; then
  marker=$T/ran-on-the-host
  b=$T/slash
  make_bundle "$b" 'root.path:=/' "process.args=[\"/bin/sh\",\"-c\",\"echo ran >$marker\"]"
  out=$(rt validate --bundle "$b" 2>&1)
  is "$? $out" "1 agentbox: config.json: root.path: \`/\` is the host's root directory; a container needs a root filesystem of its own" \
    "validate refuses root.path / in one line naming root.path (exit 1)"
  like "$(rt audit --bundle "$b" 2>&1 | head -3)" "agentbox refuses this config: config.json: root.path: \`/\` is the host's root directory" \
    "audit gives create's verdict"
  id=$(new_id)
  rt create --bundle "$b" "$id" </dev/null >"$T/out" 2>&1 # (a file: an init that got created must not hang us)
  like "$? $(cat "$T/out")" "^1 agentbox: config.json: root.path: \`/\` is the host's root directory" "create refuses it (exit 1)"
  rt delete --force "$id" >/dev/null 2>&1
  out=$(rt run --bundle "$b" "$id" </dev/null 2>&1)
  like "$? $out" "^125 agentbox: config.json: root.path: \`/\` is the host's root directory" "run refuses it (exit 125)"
  [ ! -e "$marker" ] && [ ! -e "$AB_STATE/$id" ] && ! rt state "$id" >/dev/null 2>&1
  ok $? "the program never ran on the host, and no state of the id is left"

  hardened_bundle "$T/slash-hardened"
  cfg "$T/slash-hardened/config.json" 'root.path:=/' "process.args=[\"/bin/sh\",\"-c\",\"echo ran >$marker\"]"
  out=$(rt run --bundle "$T/slash-hardened" "$(new_id)" </dev/null 2>&1)
  like "$? $out" "^125 agentbox: config.json: root.path: \`/\` is the host's root directory" \
    "the hardened profile of \`spec\` with root.path / is refused too"

  ln -s / "$T/to-slash"
  cfg "$b/config.json" "root.path:=$T/to-slash"
  like "$(rt validate --bundle "$b" 2>&1)" "root.path: \`$T/to-slash\` is the host's root directory" \
    "a symlink to / is refused"
  cfg "$b/config.json" "root.path:=$T/../../../../../../../../../.."
  like "$(rt validate --bundle "$b" 2>&1)" "root.path: \`$T(/\.\.)+\` is the host's root directory" \
    "a path that climbs to / with .. is refused"
  cfg "$b/config.json" "root.path:=/proc/self/root"
  out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
  like "$? $out" "^125 .*root.path: \`/proc/self/root\` is the host's root directory" "/proc/self/root is refused"
  # A bind mount of / elsewhere is the same directory under another name;
  # made in a private mount namespace so the host never sees it.
  mkdir -p "$T/alias"
  cfg "$b/config.json" "root.path:=$T/alias"
  out=$(B=$b ID=$(new_id) timeout -k 5 60 unshare --mount --propagation private /bin/sh -c \
    'mount --bind / "$1" && shift && "$@" validate --bundle "$B" 2>&1; echo "status $?"; "$@" run --bundle "$B" "$ID" </dev/null 2>&1; echo "status $?"' \
    sh "$T/alias" "$RUNTIME" --root "$AB_STATE" 7>&-)
  like "$out" "root.path: \`$T/alias\` is the host's root directory" "a bind mount of / is refused (validate)"
  like "$(printf '%s\n' "$out" | grep -c '^status [1-9]')" "^2$" "... and run fails too, both with a non-zero status"
  [ ! -e "$marker" ]
  ok $? "none of them ran the program on the host"

  # Above the state root (--root) or the cache: a working rootfs otherwise.
  b=$T/above
  make_bundle "$b" 'process.args=["/bin/abtest","true"]'
  R=$b/rootfs/run/agentbox
  out=$("$RUNTIME" --root "$R" validate --bundle "$b" 2>&1 7>&-)
  is "$? $out" "1 agentbox: config.json: root.path: \`rootfs\` is or contains agentbox's state root \`$R\` (--root); the container could rewrite it" \
    "a root that would hold the state root (not made yet) is refused, naming root.path and --root"
  id=$(new_id)
  out=$("$RUNTIME" --root "$R" run --bundle "$b" "$id" </dev/null 2>&1 7>&-)
  like "$? $out" "^125 .*root.path: \`rootfs\` is or contains agentbox's state root" "run refuses it (exit 125)"
  [ ! -e "$b/rootfs/run" ]
  ok $? "... before the state root is made inside it"
  out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
  is "$? $out" "0 " "the same bundle runs with a state root elsewhere"
  out=$(AGENTBOX_CACHE_DIR=$b/rootfs/var/cache/agentbox rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
  like "$? $out" "^125 .*root.path: \`rootfs\` is or contains agentbox's cache \`$b/rootfs/var/cache/agentbox\` \(AGENTBOX_CACHE_DIR\)" \
    "a root that holds the cache is refused"
  cfg "$b/config.json" "root.path:=$T"
  like "$(rt validate --bundle "$b" 2>&1)" "root.path: \`$T\` is or contains agentbox's state root \`$AB_STATE\`" \
    "a directory above the state root is refused"
  cfg "$b/config.json" "root.path:=$AB_STATE"
  like "$(rt validate --bundle "$b" 2>&1)" "root.path: \`$AB_STATE\` is or contains agentbox's state root" \
    "the state root itself is refused"
fi

# ---- a bind of agentbox's own directories -------------------------------------------------------
# A bind (the workspace above all) that is, holds or lies in the state root
# would let the container rewrite its own state directory: config.json's
# hooks, which a later `delete` runs on the host as root, and state.json's
# cgroup paths, which delete empties and removes.  Refused before anything
# is made, at validate as at create, by the identity of what is mounted.
if agentbox_only 9; then
  id=$(new_id)
  out=$(rt run --default --workspace "$AB_STATE" "$id" -- /bin/sh -c 'echo x >/workspace/planted' </dev/null 2>&1)
  like "$? $out" "^125 agentbox: mounts\[[0-9]+\] \(/workspace\): bind source \`$AB_STATE\` is or contains agentbox's state root \`$AB_STATE\` \(--root\); the container could rewrite it$" \
    "run --default --workspace <the state root> is refused in one line (exit 125)"
  [ ! -e "$AB_STATE/planted" ] && [ ! -e "$AB_STATE/$id" ]
  ok $? "... nothing planted in the state root, no state directory left"
  out=$(rt run --default --workspace "$T" "$(new_id)" -- true </dev/null 2>&1)
  like "$? $out" "^125 .*bind source \`$T\` is or contains agentbox's state root" "a workspace above the state root is refused"

  # A running container's state directory, bound into another.
  a=$(new_id)
  rt run --default --detach "$a" -- sleep 30 </dev/null >/dev/null 2>&1
  out=$(rt run --default --ro-bind "$AB_STATE/$a:/peek" "$(new_id)" -- cat /peek/config.json </dev/null 2>&1)
  like "$? $out" "^125 .*bind source \`$AB_STATE/$a\` lies inside agentbox's state root" \
    "another container's state directory, even read-only, is refused (its config holds its environment)"
  rt delete --force "$a" >/dev/null 2>&1

  # A bundle: validate and create give the same line; the state root is untouched.
  b=$T/fence
  make_bundle "$b" 'process.args=["/bin/abtest","true"]' \
    "mounts+={\"destination\":\"/w\",\"type\":\"bind\",\"source\":\"$T\",\"options\":[\"rbind\",\"rw\"]}"
  v=$(rt validate --bundle "$b" 2>&1)
  is "$?" 1 "validate refuses a bundle bind above the state root"
  id=$(new_id)
  rt create --bundle "$b" "$id" </dev/null >"$T/fence.out" 2>&1
  is "$?:$(cat "$T/fence.out")" "1:$v" "... and create with exactly validate's line"
  like "$v" "^agentbox: config.json: mounts\[[0-9]+\] \(/w\): source \`$T\` is or contains agentbox's state root" \
    "... naming the mount and its source"
  [ ! -e "$AB_STATE/$id" ]
  ok $? "... leaving no state directory"
  cfg "$b/config.json" "mounts[destination=/w].source:=$b/rootfs/tmp"
  is "$(rt validate --bundle "$b" 2>&1)" "" "a bind of another directory validates"
fi

# ---- 6. the runtime's writes to /proc cannot be taken elsewhere -----------------------------------
# CVE-2025-52881: a mount over /proc/sys/... (or /proc/self/attr/...) receives
# a write meant for the kernel, and the setting is silently not made.  Each
# case sets a namespaced sysctl; the decoy a mount would put in its way must
# stay as it was, checked from the host.

if agentbox_only 14; then
  sysctl='linux.sysctl={"net.ipv4.ip_default_ttl":"42"}'
  show='process.args=["/bin/abtest","cat","/proc/sys/net/ipv4/ip_default_ttl"]'
  b=$T/procw
  make_bundle "$b" "$sysctl" "$show"
  is "$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)" 42 "a namespaced sysctl is made (the control)"
  cp "$b/config.json" "$b/config.base.json"
  n=$(mounts_in "$b/config.json")

  # A mount inside /proc, as written: refused by validate and create alike.
  echo decoy >"$T/decoy"
  cfg "$b/config.json" "mounts+={\"destination\":\"/proc/sys/net/ipv4/ip_default_ttl\",\"type\":\"bind\",\"source\":\"$T/decoy\",\"options\":[\"bind\"]}"
  v=$(rt validate --bundle "$b" 2>&1)
  like "$? $v" "^1 agentbox: config\.json: mounts\[$n\]\.destination: \"/proc/sys/net/ipv4/ip_default_ttl\" is inside /proc, " \
    "validate refuses a mount inside /proc, naming mounts[$n] and the destination"
  id=$(new_id)
  rt create --bundle "$b" "$id" </dev/null >"$T/procw.out" 2>&1
  is "$?:$(cat "$T/procw.out")" "1:$v" "... and create with exactly validate's line"
  is "$(cat "$T/decoy")" decoy "... the bound file is untouched"

  # A benign volume at /data, and the image's /data -> /proc/sys/net/ipv4.
  cp "$b/config.base.json" "$b/config.json"
  mkdir -p "$T/vol" && echo decoy >"$T/vol/ip_default_ttl"
  ln -s /proc/sys/net/ipv4 "$b/rootfs/data"
  cfg "$b/config.json" "mounts+={\"destination\":\"/data\",\"type\":\"bind\",\"source\":\"$T/vol\",\"options\":[\"rbind\"]}"
  out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
  like "$? $out" "^125 agentbox: mounts\[$n\] \(/data\): the target resolves into a procfs" \
    "a volume the image's symlink puts over /proc/sys/net/ipv4 is refused (exit 125), naming the mount"
  is "$(cat "$T/vol/ip_default_ttl")" decoy "... the volume's file on the host is untouched"
  unlike "$out" "^42" "... and the container never ran"

  # The same through a tmpfs.
  cp "$b/config.base.json" "$b/config.json"
  rm "$b/rootfs/data" && ln -s /proc/sys "$b/rootfs/data"
  cfg "$b/config.json" 'mounts+={"destination":"/data","type":"tmpfs","source":"tmpfs"}'
  out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
  like "$? $out" "^125 agentbox: mounts\[$n\] \(/data\): the target resolves into a procfs" \
    "a tmpfs the image's symlink puts over /proc/sys is refused too"
  rm "$b/rootfs/data"

  # A mount made after the config's own (a container racing on a shared
  # mount would make it; a createContainer hook stands in for it here): the
  # sysctl is refused rather than written to what is mounted in its way.
  cp "$b/config.base.json" "$b/config.json"
  cfg "$b/config.json" "hooks.createContainer=[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"mount --bind $T/decoy $b/rootfs/proc/sys/net/ipv4/ip_default_ttl\"]}]"
  out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
  like "$? $out" "^125 agentbox: linux\.sysctl\.net\.ipv4\.ip_default_ttl: open /proc/sys/net/ipv4/ip_default_ttl: something is mounted on its way" \
    "a bind over the sysctl's file, made after the mounts, fails the run naming the sysctl"
  is "$(cat "$T/decoy")" decoy "... and the bound file is untouched"

  # A /proc that is not a procfs's root: refused, not written through.
  cp "$b/config.base.json" "$b/config.json"
  cfg "$b/config.json" "hooks.createContainer=[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"mount -t tmpfs tmpfs $b/rootfs/proc\"]}]"
  out=$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)
  like "$? $out" "^125 agentbox: linux\.sysctl: /proc is not the root of a procfs" "a tmpfs over /proc fails the sysctl the same way"

  # The files lxcfs stands in for still take a bind: the container reads it.
  cp "$b/config.base.json" "$b/config.json"
  printf 'MemTotal: 1234 kB\n' >"$T/meminfo"
  cfg "$b/config.json" 'process.args=["/bin/abtest","cat","/proc/meminfo"]' \
    "mounts+={\"destination\":\"/proc/meminfo\",\"type\":\"bind\",\"source\":\"$T/meminfo\",\"options\":[\"bind\",\"ro\"]}"
  is "$(rt validate --bundle "$b" 2>&1)" "" "a bind at /proc/meminfo (lxcfs) validates"
  is "$(rt run --bundle "$b" "$(new_id)" </dev/null 2>&1)" "MemTotal: 1234 kB" "... and shows the bound file"
  is "$(cat "$T/decoy")" decoy "the decoy is still untouched at the end"
fi

done_testing

#!/bin/bash
# The container's root filesystem as runc-compatible callers shape it, every
# effect checked from the host:
#  - linux.rootfsPropagation in the recursive spellings containerd's CRI
#    writes (rslave, rshared): a mount the host makes under a shared volume
#    shows inside, a mount the container makes never reaches the host (a
#    bind volume is a slave of its source, even with rshared, where runc
#    makes it a peer);
#  - a process.cwd that does not exist is made, as runc makes it, beneath
#    the root: a link on the way never leads to the host;
#  - a mount destination that is a dangling symlink to a host path is made
#    where the link points inside the rootfs, never on the host.
. "$(dirname "$0")/lib.sh"
require_runtime_commands create start run delete
plan_later

caps_admin=()
for set in bounding effective permitted; do
  caps_admin+=("process.capabilities.$set=[\"CAP_SYS_ADMIN\",\"CAP_KILL\",\"CAP_AUDIT_WRITE\",\"CAP_NET_BIND_SERVICE\"]")
done

# run_in BUNDLE: `run` it to completion (stdout and stderr in BUNDLE); its status.
run_in ()
{
  local id st
  id=$(new_id)
  rt run --bundle "$1" "$id" </dev/null >"$1/stdout" 2>"$1/stderr"
  st=$?
  [ "$st" = 0 ] || diag "$(head -3 "$1/stderr")"
  rt delete --force "$id" >/dev/null 2>&1
  return $st
}

# host_mounted DIR: DIR is a mount point in the host's mount table.
host_mounted () { awk -v d="$1" '$5 == d { f = 1 } END { exit !f }' /proc/self/mountinfo; }

# ---- rootfsPropagation: rslave, rshared, rprivate; binds by default ----------------------------------
# The volume is a shared mount on the host.  The container (CAP_SYS_ADMIN)
# mounts a tmpfs on /vol/fromctr and says so; the host then mounts a tmpfs
# with a marker file on the volume's fromhost and says so; the container
# prints the marker if that mount reached it.  From the host: whether the
# container's tmpfs is in the host's mount table.
# vol_test PROP IN OUT: rootfsPropagation PROP ("default": none), whether
# the host's mount must reach the container, whether the container's must
# reach the host.
vol_test ()
{
  local prop=$1 in=$2 out=$3 id st vol=$T/vol-$1 edit="linux.rootfsPropagation:=$1"
  [ "$prop" = default ] && edit=process.noNewPrivileges=true
  mkdir -p "$vol"
  mount --bind "$vol" "$vol" && mount --make-shared "$vol" || { ok 1 "$prop: shared host volume"; return; }
  mkdir -p "$vol/fromctr" "$vol/fromhost"
  make_bundle "$T/prop-$prop" "${caps_admin[@]}" process.noNewPrivileges=true "$edit" \
    "mounts+={\"destination\":\"/vol\",\"type\":\"bind\",\"source\":\"$vol\",\"options\":[\"rbind\"]}" \
    'process.args=["/bin/sh","-c","mount -t tmpfs ctr /vol/fromctr && touch /vol/fromctr/ctr-file && echo ready >/vol/ready && i=0; while [ ! -s /vol/host-done ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; cat /vol/fromhost/host-file 2>/dev/null || echo none"]'
  id=$(new_id)
  start_bg "$id" "$T/prop-$prop"
  ok $? "$prop: a container with linux.rootfsPropagation \"$prop\" starts"
  wait_for_file "$vol/ready" 20 || diag "$prop: no ready file; stderr: $(head -3 "$T/prop-$prop/stderr")"
  mount -t tmpfs host "$vol/fromhost" && echo "from the host" >"$vol/fromhost/host-file"
  echo done >"$vol/host-done"
  wait_for_status "$id" stopped 30
  if [ "$in" = yes ]; then
    is "$(cat "$T/prop-$prop/stdout")" "from the host" \
      "$prop: a tmpfs the host mounts under the shared volume afterwards shows inside the container"
  else
    is "$(cat "$T/prop-$prop/stdout")" none "$prop: a tmpfs the host mounts under the volume afterwards stays out"
  fi
  host_mounted "$vol/fromctr"
  st=$?
  if [ "$out" = yes ]; then
    ok $st "$prop: the container's tmpfs on /vol/fromctr reaches the host (mounts propagate both ways)"
  else
    isnt $st 0 "$prop: the container's tmpfs on /vol/fromctr does not reach the host"
    [ ! -e "$vol/fromctr/ctr-file" ]
    ok $? "$prop: ... and the file written in it is not in the host's directory"
  fi
  rt delete --force "$id" >/dev/null 2>&1
  umount -l "$vol/fromctr" 2>/dev/null
  umount -l "$vol/fromhost" 2>/dev/null
  umount -l "$vol"
}
vol_test rslave yes no
vol_test rshared yes no
vol_test rprivate no no
# No rootfsPropagation: runc's rslave.  The bind's tree was cloned in the
# host's mount namespace, where the source is shared: it must still not
# carry the container's mounts out.
vol_test default yes no

# validate and audit take each recursive word as its plain form: validate
# passes, and audit's report (the bundle path aside) is the plain word's.
if agentbox_only 8; then
  for w in shared slave private unbindable; do
    make_bundle "$T/v-$w" "linux.rootfsPropagation:=$w" >/dev/null
    make_bundle "$T/v-r$w" "linux.rootfsPropagation:=r$w" >/dev/null
    out=$(rt validate --bundle "$T/v-r$w" 2>&1)
    is "$?:$out" "0:" "validate accepts rootfsPropagation r$w"
    "$RUNTIME" audit --bundle "$T/v-$w" --format json 7>&- 2>&1 | sed "s|$T/v-$w|BUNDLE|g" >"$T/a-$w.json"
    "$RUNTIME" audit --bundle "$T/v-r$w" --format json 7>&- 2>&1 | sed "s|$T/v-r$w|BUNDLE|g" >"$T/a-r$w.json"
    [ -s "$T/a-r$w.json" ] && cmp -s "$T/a-$w.json" "$T/a-r$w.json"
    ok $? "audit reports rootfsPropagation r$w exactly as $w"
  done
fi

# ---- process.cwd that does not exist -----------------------------------------------------------------
# runc makes it (os.MkdirAll after pivot_root, as the container's root,
# 0755), before the root is made read-only (the base config's root is).
# A link on the way, dangling or not, is followed inside the root: the
# host directory it names by its host path must stay untouched.
umask 022
make_bundle "$T/cwd" 'process.cwd:=/work/deep/dir' 'process.user={"uid":65534,"gid":65534}' \
  'process.args=["/bin/abtest","cwd"]'
run_in "$T/cwd"
ok $? "a container whose process.cwd /work/deep/dir is missing runs (root.readonly, uid 65534)"
is "$(sed -n 's/^ino=//p' "$T/cwd/stdout")" "$(stat -c %i "$T/cwd/rootfs/work/deep/dir" 2>&1)" \
  "... in that directory of the rootfs (its inode, from the host)"
is "$(stat -c '%F %u:%g %a' "$T/cwd/rootfs/work" "$T/cwd/rootfs/work/deep/dir" 2>&1)" \
  "directory 0:0 755
directory 0:0 755" "... made in the rootfs with every missing level, owned by the container's root, 0755 (as runc)"

mkdir -p "$T/host-cwd" "$T/host-cwd-up"
make_bundle "$T/cwdlink" 'process.cwd:=/evil/sub' 'process.args=["/bin/abtest","cwd"]'
ln -s "$T/host-cwd" "$T/cwdlink/rootfs/evil"
run_in "$T/cwdlink"
ok $? "a cwd whose parent is a symlink to a host directory (by its host path) runs"
[ ! -e "$T/host-cwd/sub" ]
ok $? "... nothing is made in the host directory"
is "$(sed -n 's/^ino=//p' "$T/cwdlink/stdout")" "$(stat -c %i "$T/cwdlink/rootfs$T/host-cwd/sub" 2>&1)" \
  "... the link is followed inside the rootfs, the cwd made and entered there"
make_bundle "$T/cwdup" 'process.cwd:=/evil/sub' 'process.args=["/bin/abtest","cwd"]'
ln -s "../../../../../../../../../..$T/host-cwd-up" "$T/cwdup/rootfs/evil"
run_in "$T/cwdup"
ok $? "a cwd below a ../../.. symlink climbing to a host directory runs"
[ ! -e "$T/host-cwd-up/sub" ]
ok $? "... nothing is made in the host directory"
is "$(sed -n 's/^ino=//p' "$T/cwdup/stdout")" "$(stat -c %i "$T/cwdup/rootfs$T/host-cwd-up/sub" 2>&1)" \
  "... the climb stops at the rootfs, the cwd is made and entered inside it"

# exec makes no cwd (runc's exec neither): a missing --cwd is an error.
if "$RUNTIME" exec --help </dev/null >/dev/null 2>&1 7>&-; then
  make_bundle "$T/cwdexec" 'process.args=["/bin/abtest","sleep","60"]'
  id=$(new_id)
  start_bg "$id" "$T/cwdexec"
  rt exec --cwd /not/there "$id" /bin/abtest true </dev/null >/dev/null 2>"$T/cwdexec/exec.err"
  isnt $? 0 "exec with a --cwd missing in the container fails"
  [ ! -e "$T/cwdexec/rootfs/not" ]
  ok $? "... and makes nothing in the rootfs"
  rt delete --force "$id" >/dev/null 2>&1
fi

# ---- a mount destination that is a dangling symlink -------------------------------------------------
# runc resolves it beneath the rootfs (securejoin) and makes the target
# there.  Links to a host path (absolute, and climbing with ../..): the
# mounts land inside the rootfs, nothing appears on the host.
mkdir -p "$T/dsrc" && echo bound >"$T/dsrc-file"
make_bundle "$T/dangle" process.noNewPrivileges=true \
  'mounts+={"destination":"/mnt-abs","type":"tmpfs","source":"tmpfs","options":["nosuid"]}' \
  "mounts+={\"destination\":\"/mnt-up\",\"type\":\"bind\",\"source\":\"$T/dsrc\",\"options\":[\"rbind\"]}" \
  "mounts+={\"destination\":\"/etc/mnt-file\",\"type\":\"bind\",\"source\":\"$T/dsrc-file\",\"options\":[\"bind\"]}" \
  "process.args=[\"/bin/sh\",\"-c\",\"touch /mnt-abs/in-tmpfs && ls /mnt-up >/dev/null && cat /etc/mnt-file && grep -c '$T/host-' /proc/self/mountinfo\"]"
ln -s "$T/host-abs" "$T/dangle/rootfs/mnt-abs"
ln -s "../../../../../../../../..$T/host-up" "$T/dangle/rootfs/mnt-up"
ln -s "$T/host-file" "$T/dangle/rootfs/etc/mnt-file"
run_in "$T/dangle"
ok $? "mounts onto dangling symlinks to host paths (absolute, ../../.., a file) run"
is "$(cat "$T/dangle/stdout")" "bound
3" "... the three mounts are where the links point, seen from inside"
[ ! -e "$T/host-abs" ] && [ ! -e "$T/host-up" ] && [ ! -e "$T/host-file" ]
ok $? "... nothing appears at those paths on the host"
is "$(stat -c %F "$T/dangle/rootfs$T/host-abs" "$T/dangle/rootfs$T/host-up" "$T/dangle/rootfs$T/host-file" 2>&1)" \
  "directory
directory
regular empty file" "... the mount points are made inside the rootfs (directories, and a file for the file bind)"

done_testing

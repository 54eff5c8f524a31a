#!/bin/bash
# Capture the real-world fixtures of `agentbox audit` (run by hand, as root,
# from the build directory; not part of `make check`):
#
#   AGENTBOX=$PWD/agentbox ../tests/audit/capture.sh
#
# writes tests/audit/fixtures/<name>/config.json for
#   runc-spec                 `runc spec` (runc 1.1.5 here)
#   agentbox-spec[-rootless]  `agentbox spec [--rootless]` (rootless as uid 1000)
#   podman-*                  the config podman 4.3 hands its runtime for `podman run`
#                             with --privileged, --cap-add ALL, -v /:/host, --pid host,
#                             --network host, and with no option at all
# podman is driven as in tests/integration/t-podman.sh (offline, a local rootfs,
# cgroupfs inside the private cgroup view of with_own_cgroup_root); its runtime
# is a shim that copies the bundle's config.json and then execs agentbox.  The
# capture's temporary directory and podman's random container ids are replaced
# by fixed strings, so that a new capture only differs where podman changed.
AB_NO_RUNTIME=1
. "$(dirname "$0")/../integration/lib.sh"
set -e
command -v podman >/dev/null || bail_out "podman is not installed"
[ -x "${AGENTBOX:-}" ] || bail_out "set AGENTBOX to the agentbox binary"
OUT=$(cd "$(dirname "$0")" && pwd)/fixtures
P=$T/podman
CAP=$T/captured
mkdir -p "$P/root" "$P/run" "$P/tmp" "$CAP"
make_rootfs "$P/rootfs"

put () { mkdir -p "$OUT/$1" && cat >"$OUT/$1/config.json"; }

(cd "$T" && /usr/sbin/runc spec && put runc-spec <config.json && rm config.json)
mkdir -p "$T/spec" && "$AGENTBOX" spec --bundle "$T/spec" && put agentbox-spec <"$T/spec/config.json"
rm "$T/spec/config.json" && setpriv --reuid 1000 --regid 1000 --clear-groups "$AGENTBOX" spec --rootless \
  --bundle "$T/spec" 2>/dev/null || { chmod 0777 "$T/spec"; setpriv --reuid 1000 --regid 1000 --clear-groups \
  "$AGENTBOX" spec --rootless --bundle "$T/spec"; }
put agentbox-spec-rootless <"$T/spec/config.json"

cat >"$P/runtime" <<EOF
#!/bin/sh
# podman's runtime: keep the bundle's config.json, then run agentbox.
prev=
for a in "\$@"; do
  [ "\$prev" = --bundle ] && cp "\$a/config.json" "$CAP/last.json"
  case \$a in --bundle=*) cp "\${a#--bundle=}/config.json" "$CAP/last.json" ;; esac
  prev=\$a
done
exec "$AGENTBOX" --root "$T/state" "\$@"
EOF
chmod 0755 "$P/runtime"

pm ()
{
  /usr/bin/unshare --cgroup --mount --propagation private -- /bin/sh -c "$_AB_CGROOT_SH" with_own_cgroup_root \
    podman --root "$P/root" --runroot "$P/run" --tmpdir "$P/tmp" --storage-driver vfs --cgroup-manager cgroupfs \
    --events-backend file --runtime "$P/runtime" "$@" 7>&-
}

capture ()
{
  local name=$1 ids
  shift
  rm -f "$CAP/last.json"
  pm run --rm --cgroup-parent "/ab-$$-capture" --ulimit nofile=1024:1024 "$@" --rootfs "$P/rootfs" /bin/true \
    </dev/null >/dev/null 2>&1 || :
  [ -s "$CAP/last.json" ] || bail_out "podman run $* handed its runtime no config"
  # podman's ids: the container's (64 hex digits) and its 12-digit short form.
  ids=$(grep -o '[0-9a-f]\{64\}' "$CAP/last.json" | sort -u)
  sed -e "s|$T|/run/podman-capture|g" "$CAP/last.json" >"$CAP/norm.json"
  for id in $ids; do
    sed -i -e "s/$id/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/g" \
      -e "s/${id:0:12}/0123456789ab/g" "$CAP/norm.json"
  done
  sed -i -e "s|/ab-$$-capture|/podman-capture|g" "$CAP/norm.json"
  python3 -m json.tool --indent 2 "$CAP/norm.json" | put "podman-$name"
}

capture default --network none
capture privileged --network none --privileged
capture cap-add-all --network none --cap-add ALL
capture host-root --network none -v /:/host
capture pid-host --network none --pid host
capture net-host --network host
pm system reset -f >/dev/null 2>&1 || :
find /sys/fs/cgroup -depth -type d -path "*/ab-$$-capture*" -exec rmdir {} + 2>/dev/null || :
ok 0 "fixtures written to $OUT"
done_testing

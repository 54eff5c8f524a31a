#!/bin/sh
# Install what agentbox needs to build and test on Debian 12 (run as root).
#   scripts/install-deps.sh            install everything
#   scripts/install-deps.sh --if-needed  only when something is missing
# It also makes the unprivileged user the rootless tests run as
# (AB_ROOTLESS_USER, default abuser), with a subordinate id range.
set -eu

AB_USER=${AB_ROOTLESS_USER:-abuser}

# make_user: the unprivileged test user, if missing (useradd gives it an
# /etc/subuid and /etc/subgid range of SUB_UID_COUNT ids from login.defs).
make_user ()
{
  id -u "$AB_USER" >/dev/null 2>&1 && return 0
  [ "$(id -u)" = 0 ] || return 0
  useradd -m -s /bin/sh "$AB_USER"
}

PKGS="build-essential autoconf automake pkg-config clang libclang-rt-14-dev
libseccomp-dev libcap-dev libyajl-dev libmnl-dev libnftnl-dev
python3 python3-jsonschema busybox-static iproute2 nftables runc curl podman containerd strace
containernetworking-plugins python3-grpcio python3-protobuf protobuf-compiler
uidmap bubblewrap musl-tools gperf"

if [ "${1:-}" = "--if-needed" ]; then
  missing=""
  for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
  done
  if [ -z "$missing" ]; then
    make_user
    exit 0
  fi
  echo "install-deps: missing:$missing" >&2
fi

if [ "$(id -u)" != 0 ]; then
  echo "install-deps: run as root (apt-get)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
make_user

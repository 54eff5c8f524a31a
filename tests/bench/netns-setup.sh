#!/bin/sh
# Cost of the egress wall at container start: ab_netns_apply (one nftables
# batch, lo up, two routes) and, alone, lo up + routes, each in a fresh
# network namespace per run.  Prints the median and spread; asserts nothing.
#
#   tests/bench/netns-setup.sh [BUILDDIR] [RUNS]     (as root; default 100 runs)
set -eu
builddir=${1:-${AB_TOP_BUILDDIR:-.}}
runs=${2:-100}
driver=$builddir/tests/netns/netns-driver
if [ ! -x "$driver" ]; then
	echo "netns-setup: build $driver first (make check or make tests/netns/netns-driver)" >&2
	exit 2
fi
if [ "$(id -u)" != 0 ]; then
	echo "netns-setup: needs root (each run unshares a network namespace)" >&2
	exit 2
fi
echo "# $(uname -r), $(nproc) CPUs, policy: 3 entries (IPv4 and IPv6)"
exec "$driver" bench "$runs"

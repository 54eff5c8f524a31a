#!/bin/bash
# Not a figure of issue 12: what the network namespace and its egress wall
# (lo up, two routes, one nftables batch: runtime/lifecycle/network.c) add to
# `agentbox run`.  Two contenders, both the agentbox under test: `netns`
# runs the hardened profile (minus the time namespace), `no-netns` the same
# without the network namespace; /bin/true to completion, N runs each
# (default 100), interleaved.  The cost of the network is the difference
# of the two medians (no ratio line: neither contender is runc or crun).
#
#   cd BUILDDIR && SRCDIR/tests/bench/netns-run.sh [N]          (as root)
. "$(dirname "$0")/lib.sh"
bench_init netns-run 100 --no-contenders "$@"
bench_contender netns "$AGENTBOX" "not built"
bench_contender no-netns "$AGENTBOX" "not built"
bench_bundle --for netns hardened 'process.args=["/bin/true"]'
bench_bundle --for no-netns hardened 'process.args=["/bin/true"]' linux.namespaces-=network
bench_drive latency --cmd '{rt} --root {root} run --bundle {bundle} {id}'
bench_finish

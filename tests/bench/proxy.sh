#!/bin/bash
# Not a figure of issue 12: what the egress proxy (netns/egress-*.c) costs an
# HTTP client (issue 25).  The same C client (tests/egress/httpbench) fetches
# from the same C server four ways: direct (no proxy), through the proxy as
# an HTTP_PROXY client, through a CONNECT tunnel, and captured transparently
# by the egress wall's redirect; and, as the floor under those three, two
# relays with no engine in its place (tests/egress/relaybound: a bare splice
# loop, and a BPF sockmap where no process touches the data; the latter is
# skipped with a note where BPF is refused).  Everything runs in network namespaces and
# veths of tests/bench/proxy.py's own (loopback and a veth pair), removed
# with it.  Two metrics, interleaved run by run, the order rotated:
#   throughput  MB/s of one BENCH_PROXY_MB body (default 200 MB) on a new connection
#               (and proxy_cpu: the engine's CPU time per GB relayed)
#   latency     microseconds of a small request on a new connection
#               (BENCH_PROXY_BATCH, default 50, per run)
# then the proxy's syscalls per small request (strace -c, untimed,
# BENCH_PROXY_STRACE requests, default 200; 0: none).  Targets (issue 25):
# each proxied way >= 0.9x the direct throughput and <= 1.2x its latency.
# BENCH_PROXY_DRIVER=EXE measures another build's tests/egress/egress-driver
# (an older engine) in the same way.
#
#   cd BUILDDIR && SRCDIR/tests/bench/proxy.sh [N]          (as root; default N=10)
. "$(dirname "$0")/lib.sh"
bench_init proxy 10 --no-contenders "$@"
targets=()
for way in proxy connect transparent; do
  targets+=(--target "$way:throughput:vs_direct>=0.9" --target "$way:latency:vs_direct<=1.2")
done
"$PYTHON3" "$BENCH_LIBDIR/proxy.py" --builddir "${AB_TOP_BUILDDIR:-.}" --runs "$BENCH_N" \
  --size-mb "${BENCH_PROXY_MB:-200}" --latency-batch "${BENCH_PROXY_BATCH:-50}" \
  --strace "${BENCH_PROXY_STRACE:-200}" ${BENCH_PROXY_DRIVER:+--driver "$BENCH_PROXY_DRIVER"} "${targets[@]}" ||
  bench_die "the driver failed (exit $?)"
bench_finish

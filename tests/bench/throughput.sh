#!/bin/bash
# Figure 4: throughput.  Batches of BENCH_BATCH (default 200) runs of
# `sh -c 'echo hi'` in the hardened profile (minus the time namespace),
# 4 at a time (BENCH_CONCURRENCY); each run must exit 0 and print exactly
# "hi", else it counts as a failure.  min(N, BENCH_ROUNDS) rounds (default
# 3), each round one batch per contender in rotated order.  Prints runs per
# second (median over the rounds), the per-run latency inside the batches,
# and at the end checks that nothing was left behind (state, cgroups,
# mounts, processes).
#
#   cd BUILDDIR && SRCDIR/tests/bench/throughput.sh [N]         (as root)
. "$(dirname "$0")/lib.sh"
bench_init throughput 3 "$@"
rounds=${BENCH_ROUNDS:-3}
[ "$BENCH_N" -lt "$rounds" ] && rounds=$BENCH_N
bench_bundle hardened 'process.args=["/bin/sh","-c","echo hi"]'
bench_drive --target 'agentbox:runs_per_s:vs_crun>=2' --target 'agentbox:runs_per_s:fail<=0' \
  throughput --cmd '{rt} --root {root} run --bundle {bundle} {id}' --expect 'hi\n' \
  --concurrency "${BENCH_CONCURRENCY:-4}" --rounds "$rounds" --batch "${BENCH_BATCH:-200}"
bench_finish

#!/bin/bash
# Figure 1: start latency of the hardened profile.  `run` of /bin/true to
# completion, the runtime's delete included (a foreground run removes its
# container), with the config of `agentbox spec` minus the time namespace so
# that runc and crun run the very same file; agentbox, runc and crun
# interleaved, N runs each (default 100).
#
#   cd BUILDDIR && SRCDIR/tests/bench/start-hardened.sh [N]     (as root)
# Knobs: BENCH_N, AGENTBOX, RUNC, CRUN, BUSYBOX (tests/bench/lib.sh).
. "$(dirname "$0")/lib.sh"
bench_init start-hardened 100 "$@"
bench_bundle hardened 'process.args=["/bin/true"]'
bench_drive --target 'agentbox:wall:vs_runc<=0.40' --target 'agentbox:wall:vs_crun<=0.55' \
  --target 'agentbox:wall:median<=17' \
  latency --cmd '{rt} --root {root} run --bundle {bundle} {id}'
bench_finish

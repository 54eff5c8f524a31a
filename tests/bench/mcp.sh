#!/bin/bash
# Figure 6: the `agentbox mcp` round trip.  One server (`agentbox mcp`);
# N times (default 100), interleaved: a tools/call of sandbox_run
# {"argv":["/bin/true"]} timed from writing the request line to reading the
# response line (the record checked against docs/result-schema.json), and
# the bare `agentbox run --default ... -- /bin/true` with the options the
# server's worker gets (docs/result-record.md, "Workers").  Prints both,
# minus_run (the difference of the medians: the target) and mcp-minus-run
# (the median of the per-pair differences; the runs' times are bimodal,
# a v1 cgroup attach waits for an RCU grace period or not, so this one
# mostly says that the pairs fall in the same mode: read it with the first).
#
#   cd BUILDDIR && SRCDIR/tests/bench/mcp.sh [N]                (as root)
. "$(dirname "$0")/lib.sh"
bench_init mcp 100 --agentbox-only "$@"
bench_drive --target 'mcp:wall:minus_run<=2' \
  mcp --agentbox "$AGENTBOX" --argv '["/bin/true"]'
bench_finish

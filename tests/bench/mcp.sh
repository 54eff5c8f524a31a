#!/bin/bash
# Figure 6: the `agentbox mcp` round trip.  One server (`agentbox mcp`);
# N times (default 100), interleaved: a tools/call of sandbox_run
# {"argv":["/bin/true"]} timed from writing the request line to reading the
# response line (the record checked against docs/result-schema.json), and
# the bare `agentbox run --default ... -- /bin/true` with the options the
# server's worker gets (docs/result-record.md, "Workers").  Prints both,
# mcp-minus-run (the median of the per-pair differences) and minus_run
# (the difference of the medians).
#
#   cd BUILDDIR && SRCDIR/tests/bench/mcp.sh [N]                (as root)
. "$(dirname "$0")/lib.sh"
bench_init mcp 100 --agentbox-only "$@"
bench_drive --target 'mcp-minus-run:wall:median<=2' --target 'mcp:wall:minus_run<=2' \
  mcp --agentbox "$AGENTBOX" --argv '["/bin/true"]'
bench_finish

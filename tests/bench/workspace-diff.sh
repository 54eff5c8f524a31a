#!/bin/bash
# Issue 27: `agentbox workspace diff ID` (the whole command, to its exit)
# for 10 changes in a workspace of 10 files and of 100,000 files, and for
# 10,000 changes (tests/bench/workspace-lib.sh).  Before each timed diff,
# untimed, a run makes the change set; after it the change set is
# discarded.  N diffs each (default 30), interleaved.  Targets: 10 changes
# of a 100,000-file workspace within 10 ms, and within 1 ms of the same in
# a 10-file workspace (the cost follows the change, not the workspace).
#
#   cd BUILDDIR && SRCDIR/tests/bench/workspace-diff.sh [N]          (as root)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/workspace-lib.sh"
bench_init workspace-diff 30 --no-contenders "$@"
ws_contenders
bench_drive --target 'big10:wall:median<=10' --target 'big10:wall:minus_small10<=1' latency --minus big10=small10 \
  --before '{rt} --root {root} run --bundle {bundle} {id}' \
  --cmd '{rt} --root {root} workspace diff {id}' \
  --after '{rt} --root {root} workspace discard {id}'
bench_finish

#!/bin/bash
# Issue 27: `agentbox workspace apply ID` (the whole command: the change
# list, the checks, the journal, staging, renameat2 into place, removing
# the change set and its tmpfs) for 10 changes in a workspace of 10 files
# and of 100,000 files, and for 10,000 changes
# (tests/bench/workspace-lib.sh).  Before each timed apply, untimed, a run
# makes the change set.  N applies each (default 30), interleaved.
# Targets: 10 changes of a 100,000-file workspace within 10 ms, and within
# 1 ms of the same in a 10-file workspace.
#
#   cd BUILDDIR && SRCDIR/tests/bench/workspace-apply.sh [N]          (as root)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/workspace-lib.sh"
bench_init workspace-apply 30 --no-contenders "$@"
ws_contenders
bench_drive --target 'big10:wall:median<=10' --target 'big10:wall:minus_small10<=1' latency --minus big10=small10 \
  --before '{rt} --root {root} run --bundle {bundle} {id}' \
  --cmd '{rt} --root {root} workspace apply {id}'
bench_finish

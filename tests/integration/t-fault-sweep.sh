#!/bin/sh
# A bounded sample of the fault sweep, scripts/fault-sweep.py: points
# (syscall, occurrence, error or SIGKILL) of `create`, `run` and
# `run --default`, each checked from the host -- the command failed with
# one line, or its program runs in the full sandbox of a clean run; a
# killed supervisor took its container along; and `delete --force` left
# nothing.  The whole sweep (every point, a minute or two): make fault-sweep.
#   AB_FAULT_SAMPLE  points per command (default 80)
#   AB_FAULT_SEED    which ones (default 28: the same sample every time;
#                    a failing point is reproduced with --points, printed)
top=${AB_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec "${PYTHON3:-python3}" "$top/scripts/fault-sweep.py" --tap --sample "${AB_FAULT_SAMPLE:-80}" \
  --seed "${AB_FAULT_SEED:-28}"

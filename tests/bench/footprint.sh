#!/bin/bash
# Figure 5: footprint of a hardened run (`agentbox spec` minus the time
# namespace, /bin/true to completion): the peak RSS of the runtime process
# (`/usr/bin/time -f %M`: ru_maxrss of the runtime and of the children it
# reaped, so for agentbox also its container init before and after the
# exec, for runc its `runc init`), N runs each (default 100), and the
# syscalls of a whole run (`strace -f -c`, total calls, every process of
# the run; min(N, BENCH_STRACE_N) runs, default 5).
#
#   cd BUILDDIR && SRCDIR/tests/bench/footprint.sh [N]          (as root)
. "$(dirname "$0")/lib.sh"
bench_init footprint 100 "$@"
strace_n=${BENCH_STRACE_N:-5}
[ "$BENCH_N" -lt "$strace_n" ] && strace_n=$BENCH_N
STRACE=${STRACE:-$(command -v strace)} || bench_die "strace missing: apt-get install strace"
GNUTIME=${GNUTIME:-/usr/bin/time}
[ -x "$GNUTIME" ] || bench_die "$GNUTIME missing: apt-get install time"
bench_bundle hardened 'process.args=["/bin/true"]'
bench_drive --target 'agentbox:maxrss:median<=2048' --target 'agentbox:syscalls:median<=400' \
  footprint --cmd '{rt} --root {root} run --bundle {bundle} {id}' --strace-runs "$strace_n" --strace "$STRACE" \
  --time "$GNUTIME"
bench_finish

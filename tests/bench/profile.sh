#!/bin/bash
# Not a figure: where the time of one hardened agentbox run goes (the
# profile in docs/benchmarks.md).  N untraced runs (default 20) of the
# hardened bundle (`agentbox spec` minus the time namespace, /bin/true)
# with --debug, whose phase log gives `phase` lines (median offset of each
# phase from the start; median, p95 and max of the step from the previous
# phase, per run); then one run (without --debug)
# under `strace -f -y -tt -T` summarised as `milestone` lines (clone, ID
# maps, each v1 cgroup attach with its duration, the child's mounts,
# pivot_root, seccomp, exec, exit, delete; strace slows every syscall, so
# read its offsets as an order, the phase lines as the times), and the
# syscall counts of that run by name.
# BENCH_NEIGHBOUR=runc (or crun): that runtime runs the same bundle between
# the profiled runs, untimed, as in the interleaved figures; the phase log
# then shows what the neighbour changes (the v1 cgroup attach, see
# docs/benchmarks.md).
#
#   cd BUILDDIR && SRCDIR/tests/bench/profile.sh [N]            (as root)
. "$(dirname "$0")/lib.sh"
bench_init profile 20 --agentbox-only "$@"
case ${BENCH_NEIGHBOUR:-} in
  '') ;;
  runc) bench_contender runc "$(command -v "${RUNC:-/usr/sbin/runc}")" "runc not installed" ;;
  crun) bench_contender crun "$(command -v "${CRUN:-crun}")" "crun not installed" ;;
  *) bench_die "BENCH_NEIGHBOUR: runc or crun, not $BENCH_NEIGHBOUR" ;;
esac
STRACE=${STRACE:-$(command -v strace)} || bench_die "strace missing: apt-get install strace"
bench_bundle hardened 'process.args=["/bin/true"]'
bench_drive profile --cmd '{rt} --root {root} --debug run --bundle {bundle} {id}' \
  --trace-cmd '{rt} --root {root} run --bundle {bundle} {id}' --neighbour-cmd '{rt} --root {root} run --bundle {bundle} {id}' \
  --strace "$STRACE"
bench_finish

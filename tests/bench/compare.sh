#!/bin/bash
# Two or more builds of agentbox side by side: the contenders of one
# driver run, interleaved run by run, so that a busy machine weighs on
# each alike.  For "is this change as fast as before" (docs/benchmarks.md,
# "The layered tree"); no targets.
#
#   SRCDIR/tests/bench/compare.sh start|exec|throughput NAME=EXE NAME=EXE... [-- N]   (as root)
# start: the hardened /bin/true run of start-hardened.sh; exec: exec.sh's
# exec of /bin/true; throughput: throughput.sh's batches (N rounds of 200).
. "$(dirname "$0")/lib.sh"
fig=${1:-}
shift
contenders=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do contenders+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
case $fig in
  start | exec) bench_init "compare-$fig" 100 --no-contenders "$@" ;;
  throughput) bench_init compare-throughput 3 --no-contenders "$@" ;;
  *) bench_die "usage: compare.sh start|exec|throughput NAME=EXE... [-- N]" ;;
esac
[ ${#contenders[@]} -ge 2 ] || bench_die "give two or more NAME=EXE"
for c in "${contenders[@]}"; do bench_contender "${c%%=*}" "${c#*=}" "not executable"; done
case $fig in
  start)
    bench_bundle hardened 'process.args=["/bin/true"]'
    bench_drive latency --cmd '{rt} --root {root} run --bundle {bundle} {id}' ;;
  exec)
    bench_bundle hardened 'process.args=["/bin/sleep","100000"]'
    bench_drive latency --setup '{rt} --root {root} run --detach --bundle {bundle} {cid}' \
      --cmd '{rt} --root {root} exec {cid} /bin/true' \
      --teardown '{rt} --root {root} delete --force {cid}' ;;
  throughput)
    bench_bundle hardened 'process.args=["/bin/sh","-c","echo hi"]'
    bench_drive throughput --cmd '{rt} --root {root} run --bundle {bundle} {id}' --expect 'hi\n' \
      --concurrency 4 --rounds "$BENCH_N" --batch 200 ;;
esac
bench_finish

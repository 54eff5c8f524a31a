#!/bin/bash
# Figure 3: exec latency.  Each contender starts one detached container of
# the hardened profile (minus the time namespace) running `sleep`; then N
# times (default 100), interleaved, `exec ID /bin/true` into it to
# completion.  The containers are deleted (--force) at the end, untimed.
#
#   cd BUILDDIR && SRCDIR/tests/bench/exec.sh [N]               (as root)
. "$(dirname "$0")/lib.sh"
bench_init exec 100 "$@"
bench_bundle hardened 'process.args=["/bin/sleep","100000"]'
bench_drive --target 'agentbox:wall:vs_runc<=0.20' \
  latency --setup '{rt} --root {root} run --detach --bundle {bundle} {cid}' \
  --cmd '{rt} --root {root} exec {cid} /bin/true' \
  --teardown '{rt} --root {root} delete --force {cid}'
bench_finish

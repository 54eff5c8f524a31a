#!/bin/bash
# Figure 2: start latency on runc's default config (`runc spec`: no user
# namespace, no seccomp).  `run` of /bin/true to completion, delete
# included; agentbox, runc and crun interleaved, N runs each (default 100).
#
#   cd BUILDDIR && SRCDIR/tests/bench/start-runc-spec.sh [N]    (as root)
. "$(dirname "$0")/lib.sh"
bench_init start-runc-spec 100 "$@"
bench_bundle runc-spec 'process.args=["/bin/true"]'
bench_drive --target 'agentbox:wall:vs_runc<=0.35' \
  latency --cmd '{rt} --root {root} run --bundle {bundle} {id}'
bench_finish

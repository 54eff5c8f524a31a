#!/bin/bash
# Issue 26: what landlock adds to a hardened start.  Two contenders, both
# the agentbox under test, on the hardened profile of `agentbox spec`
# (minus the time namespace, as start-hardened): `off` with
# dev.agentbox.landlock=off, `on` with the profile's own "auto" (the
# ruleset of the mount plan: one landlock_create_ruleset, an O_PATH open and
# a landlock_add_rule per mount, landlock_restrict_self).  /bin/true to
# completion, N runs each (default 100), interleaved.  Target: the median of
# on minus the median of off, at most 0.3 ms.
#
#   cd BUILDDIR && SRCDIR/tests/bench/landlock-start.sh [N]          (as root)
. "$(dirname "$0")/lib.sh"
bench_init landlock-start 100 --no-contenders "$@"
bench_contender off "$AGENTBOX" "not built"
bench_contender on "$AGENTBOX" "not built"
bench_bundle --for off hardened 'process.args=["/bin/true"]' 'annotations={"dev.agentbox.landlock":"off"}'
bench_bundle --for on hardened 'process.args=["/bin/true"]' 'annotations={"dev.agentbox.landlock":"auto"}'
bench_drive --target 'on:wall:minus_off<=0.3' latency --minus on=off \
  --cmd '{rt} --root {root} run --bundle {bundle} {id}'
bench_finish

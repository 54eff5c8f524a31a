#!/bin/bash
# Issue 27: what an overlay workspace adds to the start of a run.  Two
# contenders, both the agentbox under test, on the hardened profile with a
# host directory bound at /workspace (root-owned, id-mapped through the
# container's user namespace, as `run --default --workspace` binds it):
# `bind` binds it, `overlay` shows it through an overlay
# (dev.agentbox.workspace.mode=overlay: the change set's directory and
# tmpfs, its layers, the overlay).  /bin/true to completion, N runs each
# (default 100), interleaved; the change set an overlay run leaves is
# discarded after it, untimed.  Target: the median of overlay minus the
# median of bind, at most 1 ms.
#
#   cd BUILDDIR && SRCDIR/tests/bench/workspace-start.sh [N]          (as root)
. "$(dirname "$0")/lib.sh"
bench_init workspace-start 100 --no-contenders "$@"
bench_contender bind "$AGENTBOX" "not built"
bench_contender overlay "$AGENTBOX" "not built"
mkdir -p "$B/ws" "$B/rootfs/workspace" && echo x >"$B/ws/file" || bench_die "cannot make the workspace"
ws='mounts+={"destination":"/workspace","type":"bind","source":"'$B/ws'","options":["rbind","rw","nosuid","nodev","idmap"]}'
bench_bundle --for bind hardened 'process.args=["/bin/true"]' "$ws"
bench_bundle --for overlay hardened 'process.args=["/bin/true"]' "$ws" \
  'annotations={"dev.agentbox.workspace.mode":"overlay"}'
bench_drive --target 'overlay:wall:minus_bind<=1' latency --minus overlay=bind \
  --cmd '{rt} --root {root} run --bundle {bundle} {id}' \
  --after '/bin/sh -c "[ ! -d {root}/.changesets/{id} ] || exec {rt} --root {root} workspace discard {id} >/dev/null"'
bench_finish

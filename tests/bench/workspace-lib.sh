# tests/bench/workspace-lib.sh: the contenders of workspace-diff.sh and
# workspace-apply.sh (sourced after lib.sh's bench_init).  Three bundles
# (hardened profile, a root-owned host directory bound id-mapped at
# /workspace, dev.agentbox.workspace.mode=overlay), whose program makes the
# change set the timed command reads:
#   small10  10 files written in a workspace of 10 files
#   big10    10 files written in a workspace of 100,000 files
#   big10k   10,000 files written in that same workspace
# (each writes its own names: new ones the first time, rewritten after an
# apply).  The workspace is made once per figure, untimed.
ws_contenders ()
{
  local name n dir
  for name in small10 big10 big10k; do bench_contender "$name" "$AGENTBOX" "not built"; done
  mkdir -p "$B/rootfs/workspace" "$B/ws-small" "$B/ws-big" || bench_die "cannot make the workspaces"
  "$PYTHON3" - "$B/ws-small" 10 "$B/ws-big" 100000 <<'PY' || bench_die "cannot fill the workspaces"
import os, sys
for top, n in ((sys.argv[1], int(sys.argv[2])), (sys.argv[3], int(sys.argv[4]))):
    for i in range(n):
        d = os.path.join(top, "d%03d" % (i // 1000))
        if i % 1000 == 0:
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%d" % i), "w") as f:
            f.write("file %d\n" % i)
PY
  for name in small10 big10 big10k; do
    case $name in
      small10) dir=$B/ws-small n=10 ;;
      big10) dir=$B/ws-big n=10 ;;
      big10k) dir=$B/ws-big n=10000 ;;
    esac
    bench_bundle --for "$name" hardened \
      'process.args=["/bin/sh","-c","i=0; while [ $i -lt '$n' ]; do echo $$ >/workspace/'$name'-$i; i=$((i+1)); done"]' \
      'mounts+={"destination":"/workspace","type":"bind","source":"'$dir'","options":["rbind","rw","nosuid","nodev","idmap"]}' \
      'annotations={"dev.agentbox.workspace.mode":"overlay"}'
  done
  echo "note fig=$BENCH_FIG workspaces: small10 $(find "$B/ws-small" -type f | wc -l) files, big10 and big10k $(find "$B/ws-big" -type f | wc -l) files"
}

# tests/bench/lib.sh: sourced by every figure script of tests/bench/ (bash).
#
#   . "$(dirname "$0")/lib.sh"
#   bench_init start-hardened 100 "$@"      # figure name, default N, the script's args
#   bench_bundle hardened 'process.args=["/bin/true"]'
#   bench_drive --target 'agentbox:wall:vs_runc<=0.40' latency --cmd '{rt} --root {root} run --bundle {bundle} {id}'
#   bench_finish
#
# What it gives every figure:
#   - the contenders: the agentbox under test ($AGENTBOX, default ./agentbox
#     of the build directory), runc ($RUNC, default /usr/sbin/runc) and crun
#     ($CRUN, default crun in PATH); a missing one is skipped with a `skip`
#     line saying so, never silently;
#   - N: the first argument, else $BENCH_N, else the figure's default;
#   - BENCH_GAP_MS: an untimed pause before every timed run (default 0:
#     back to back), for the start of a lone run on an idle machine;
#   - one scratch directory $B (removed at exit; in $BENCH_TMPDIR, default
#     /tmp: a tmpfs there puts the state roots where /run usually is) holding the rootfs (static
#     busybox), the bundle, one state root per contender and agentbox's
#     seccomp cache (AGENTBOX_CACHE_DIR, warmed by the untimed warm-up runs);
#   - the driver, tests/bench/bench.py, run once per figure inside the
#     private cgroup view of tests/integration/cgroot.sh, so runc's and
#     crun's absolute cgroups land below our own cgroup; all contenders run
#     in that same view.  The driver interleaves the contenders and prints
#     the `result`, `ratio` and `target` lines (format: bench.py's docstring);
#   - the machine: nproc, kernel, and `cat /proc/loadavg` before and after;
#   - the leftover check of tests/integration/leftovers.py at the end
#     (processes, mounts, cgroups, state entries, netns, links): a `clean`
#     line, or one `leftover` line each and exit status 1.
# Exit status 2: the benchmark could not run (no agentbox, not root, ...).

set -u

BENCH_SRCDIR=${AB_TOP_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BENCH_LIBDIR=$BENCH_SRCDIR/tests/bench
PYTHON3=${PYTHON3:-/usr/bin/python3}
BUSYBOX=${BUSYBOX:-/bin/busybox}
. "$BENCH_SRCDIR/tests/integration/cgroot.sh"

bench_die ()
{
  echo "${BENCH_FIG:-bench}: $*" >&2
  exit 2
}

# bench_contender NAME EXE-OR-EMPTY WHY: add NAME to the driver's contenders,
# or print why it is skipped.
bench_contender ()
{
  if [ -n "$2" ] && [ -x "$2" ]; then
    BENCH_CONTENDERS+=(--contender "$1=$2")
    BENCH_HAVE+=" $1"
    echo "version fig=$BENCH_FIG contender=$1 $("$2" --version 2>/dev/null | head -1) ($2)"
  else
    echo "skip fig=$BENCH_FIG contender=$1 reason=\"$3\""
  fi
}

bench_has () { [[ " $BENCH_HAVE " == *" $1 "* ]]; }

# bench_init FIG DEFAULT_N [--agentbox-only | --no-contenders] [N]
# (--no-contenders: the script adds its own with bench_contender.)
bench_init ()
{
  BENCH_FIG=$1
  local n=${BENCH_N:-$2} only=0
  shift 2
  case ${1:-} in
    --agentbox-only) only=1; shift ;;
    --no-contenders) only=2; shift ;;
  esac
  [ $# -gt 0 ] && n=$1
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || bench_die "N must be a positive number, not '$n'"
  BENCH_N=$n
  [ "$(id -u)" = 0 ] || bench_die "needs root (containers, namespaces, cgroups)"
  local ab=${AGENTBOX:-}
  [ -n "$ab" ] || for ab in "${AB_TOP_BUILDDIR:-.}/agentbox" ./agentbox; do [ -x "$ab" ] && break; done
  AGENTBOX=$(readlink -f "$ab" 2>/dev/null) && [ -x "$AGENTBOX" ] ||
    bench_die "agentbox not found: set AGENTBOX or run from the build directory"
  [ -x "$BUSYBOX" ] || bench_die "$BUSYBOX missing: apt-get install busybox-static"
  BENCH_PREFIX=abb-$$-
  B=$(mktemp -d "${BENCH_TMPDIR:-/tmp}/ab-bench.XXXXXX") || bench_die "mktemp failed"
  chmod 0711 "$B" # the containers' user namespaces traverse it
  trap bench_cleanup EXIT
  export AGENTBOX_CACHE_DIR=$B/cache
  BENCH_CONTENDERS=()
  BENCH_HAVE=
  echo "bench fig=$BENCH_FIG n=$BENCH_N nproc=$(nproc) kernel=$(uname -r) date=$(date -u +%Y-%m-%dT%H:%M:%SZ) gap_ms=${BENCH_GAP_MS:-0}"
  [ $only = 2 ] || bench_contender agentbox "$AGENTBOX" "not built"
  if [ $only = 0 ]; then
    bench_contender runc "$(command -v "${RUNC:-/usr/sbin/runc}")" "runc not installed (apt-get install runc)"
    bench_contender crun "$(command -v "${CRUN:-crun}")" "crun not installed (apt-get install crun)"
  fi
  echo "load before: $(cat /proc/loadavg)"
  bench_rootfs "$B/rootfs"
  echo "$B/rootfs" >"$B/rootfs-list"
  "$PYTHON3" "$BENCH_SRCDIR/tests/integration/leftovers.py" snapshot "$B/snapshot.json" ||
    bench_die "cannot take the leftover snapshot"
}

bench_cleanup ()
{
  [ -n "${B:-}" ] && [ -d "$B" ] && [ -z "${BENCH_KEEP:-}" ] && rm -rf --one-file-system "$B"
}

# bench_rootfs DIR: a minimal rootfs, a static busybox and a few applets.
bench_rootfs ()
{
  local d=$1 a
  mkdir -p "$d"/{bin,proc,sys,dev,tmp,etc,root} || bench_die "cannot make $d"
  install -m 0755 "$BUSYBOX" "$d/bin/busybox" || bench_die "cannot copy $BUSYBOX"
  for a in sh true echo sleep cat; do ln -sf busybox "$d/bin/$a"; done
  printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' >"$d/etc/passwd"
  printf '%s\n' 'root:x:0:' >"$d/etc/group"
  chmod 0755 "$d" "$d"/{bin,proc,sys,dev,etc,root}
  chmod 1777 "$d/tmp"
}

# bench_bundle [--for CONTENDER] hardened|runc-spec [EDIT...]: $B/bundle/config.json,
# the one config every contender runs (with --for, $B/bundle-CONTENDER,
# that contender's own).
#   hardened:  `agentbox spec` without the time namespace (runc 1.1 and crun
#              1.8 do not know it);
#   runc-spec: `runc spec` (cfg.py's runc-like default if runc is missing).
# Then: the process without a terminal, root.path $B/rootfs, ociVersion
# 1.0.2-dev (crun 1.8 refuses the 1.3.0 that agentbox writes; nothing in
# these configs depends on it), and the EDITs (tests/integration/cfg.py).
bench_bundle ()
{
  local dir=$B/bundle
  [ "$1" = --for ] && { dir=$B/bundle-$2; shift 2; }
  local kind=$1 c=$dir/config.json
  shift
  mkdir -p "$dir"
  case $kind in
    hardened)
      (cd "$dir" && "$AGENTBOX" spec) || bench_die "agentbox spec failed"
      set -- linux.namespaces-=time "$@"
      ;;
    runc-spec)
      if bench_has runc; then
        (cd "$dir" && "$(command -v "${RUNC:-/usr/sbin/runc}")" spec) || bench_die "runc spec failed"
      else
        echo "note fig=$BENCH_FIG runc missing: the bundle is cfg.py's runc-like default instead of \`runc spec\`"
        "$PYTHON3" "$BENCH_SRCDIR/tests/integration/cfg.py" --default "$c"
      fi
      ;;
    *) bench_die "bench_bundle: unknown kind $kind" ;;
  esac
  "$PYTHON3" "$BENCH_SRCDIR/tests/integration/cfg.py" "$c" process.terminal=false root.path:="$B/rootfs" \
    ociVersion:=1.0.2-dev "$@" || bench_die "cannot edit $c"
}

# bench_drive DRIVER-ARGS...: bench.py in the private cgroup view, with the
# figure, N, the scratch directory and the contenders.
bench_drive ()
{
  with_own_cgroup_root "$PYTHON3" "$BENCH_LIBDIR/bench.py" --fig "$BENCH_FIG" --runs "$BENCH_N" --dir "$B" \
    --srcdir "$BENCH_SRCDIR" --prefix "$BENCH_PREFIX" --gap-ms "${BENCH_GAP_MS:-0}" --crun-ns "${BENCH_CONTENDERS[@]}" "$@" ||
    bench_die "the driver failed (exit $?)"
}

# bench_finish: the load after, and the leftover check of every state root.
bench_finish ()
{
  local root out bad=0
  echo "load after: $(cat /proc/loadavg)"
  for root in "$B"/state-*; do
    [ -d "$root" ] || continue
    out=$("$PYTHON3" "$BENCH_SRCDIR/tests/integration/leftovers.py" check "$B/snapshot.json" --shell-pid $$ \
      --dir "$B" --state "$root" --id-prefix "$BENCH_PREFIX" --rootfs-list "$B/rootfs-list" | grep -v '^note:')
    [ -z "$out" ] && continue
    bad=1
    sed "s/^/leftover fig=$BENCH_FIG /" <<<"$out"
  done
  if [ $bad = 0 ]; then
    echo "clean fig=$BENCH_FIG (no process, mount, cgroup, state entry, netns or link left)"
    return 0
  fi
  BENCH_KEEP=1
  echo "note fig=$BENCH_FIG $B kept for inspection"
  exit 1
}

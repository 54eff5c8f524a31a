#!/bin/bash
# What the network namespace and its egress wall (lo up, two routes, one
# nftables batch: runtime/network.c) add to `agentbox run`: RUNS foreground
# runs of a runc-like bundle (tests/integration/cfg.py --default, the process
# `abtest true`) with the network namespace and RUNS without it, interleaved
# (with, without, with, ...) so that drift on the machine hits both alike.
# Prints the medians, the spread and the difference; asserts nothing.
#
#   tests/bench/netns-run.sh [BUILDDIR] [RUNS]      (as root; default 100 runs)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
builddir=$(cd "${1:-${AB_TOP_BUILDDIR:-.}}" && pwd)
runs=${2:-100}
agentbox=$builddir/agentbox
abtest=$builddir/tests/helper/abtest
python=${PYTHON3:-/usr/bin/python3}

for f in "$agentbox" "$abtest"; do
	[ -x "$f" ] || { echo "netns-run: build $f first (make, make check)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "netns-run: needs root" >&2; exit 2; }

dir=$(mktemp -d /tmp/ab-bench-netns.XXXXXX)
trap 'rm -rf --one-file-system "$dir"' EXIT
chmod 0711 "$dir"

# bundle NAME EDIT...: a minimal rootfs holding abtest, the runc-like config.
bundle () {
	local b=$dir/$1
	shift
	mkdir -p "$b"/rootfs/{bin,proc,sys,dev,tmp,etc,root}
	install -m 0755 "$abtest" "$b/rootfs/bin/abtest"
	"$python" "$top/tests/integration/cfg.py" --default "$b/config.json"
	"$python" "$top/tests/integration/cfg.py" "$b/config.json" 'process.args=["/bin/abtest","true"]' "$@"
}
bundle with
bundle without 'linux.namespaces-=network'

# one NAME I: the wall-clock microseconds of one `run` of bundle NAME.
one () {
	local t0 t1
	t0=$EPOCHREALTIME
	"$agentbox" --root "$dir/state" run --bundle "$dir/$1" "bench-$1-$2" </dev/null >/dev/null 2>"$dir/err" ||
		{ echo "netns-run: run of the $1 bundle failed: $(cat "$dir/err")" >&2; exit 1; }
	t1=$EPOCHREALTIME
	echo $(((${t1/./} - ${t0/./})))
}

# Warm up the page cache and the state root.
one with 0 >/dev/null
one without 0 >/dev/null
: >"$dir/with.us"
: >"$dir/without.us"
for ((i = 1; i <= runs; i++)); do
	one with "$i" >>"$dir/with.us"
	one without "$i" >>"$dir/without.us"
done

echo "# netns-run: $runs runs each, interleaved; $(uname -r), $(nproc) CPUs"
"$python" - "$dir/with.us" "$dir/without.us" <<'EOF'
import statistics, sys

def load(p):
    with open(p) as f:
        return [int(l) / 1000.0 for l in f if l.strip()]

w, wo = load(sys.argv[1]), load(sys.argv[2])

def row(name, v):
    q = statistics.quantiles(v, n=10)
    print("%-28s median %7.2f ms   p10 %7.2f   p90 %7.2f   min %7.2f" % (name, statistics.median(v), q[0], q[-1], min(v)))

row("run without netns:", wo)
row("run with netns + wall:", w)
print("%-28s %7.2f ms (difference of the medians)" % ("netns + rules setup adds:", statistics.median(w) - statistics.median(wo)))
print("%-28s %7.2f ms (median of the pairwise differences)" % ("", statistics.median(a - b for a, b in zip(w, wo))))
EOF

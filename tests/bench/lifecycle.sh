#!/bin/bash
# Lifecycle benchmark: the wall time of `run` of /bin/true to completion
# (the runtime's own delete included: both runtimes remove a foreground
# container when it exits) for agentbox and runc, in ONE interleaved loop so
# that load on the machine hits both alike:
#
#   (a) runc's default config (`runc spec`), both runtimes;
#   (b) agentbox's hardened default (`agentbox spec`), both if runc can run
#       it, else agentbox alone (the reason is printed);
#   (b') the same without the time namespace, which runc 1.1 does not know:
#       both runtimes, a user-namespaced comparison;
#   (c) `agentbox run --default` (the built-in sandbox) of /bin/true.
#
# Everything runs inside with_own_cgroup_root (a private cgroup and mount
# namespace where "/" of every hierarchy is this shell's own cgroup), so
# runc's absolute cgroups stay below it; agentbox runs in the same view.
# Prints, per case: runs, median, p90, min, max in ms, and the ratio of the
# medians agentbox/runc.  It asserts nothing about time; at the end the test
# library checks that nothing was left behind.
#
#   cd BUILDDIR && SRCDIR/tests/bench/lifecycle.sh [RUNS]     (default 50)
# Knobs: AGENTBOX (default ./agentbox), RUNC (default runc), ABTEST, BUSYBOX.
AB_NO_RUNTIME=1
AB_TOP_SRCDIR=${AB_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$AB_TOP_SRCDIR/tests/integration/lib.sh"

runs=${1:-50}
AGENTBOX=$(readlink -f "${AGENTBOX:-$PWD/agentbox}")
RUNC=$(command -v "${RUNC:-runc}")
[ -x "$AGENTBOX" ] || bail_out "agentbox not found: set AGENTBOX or run from the build directory"
[ -x "$RUNC" ] || bail_out "runc not found: apt-get install runc"
[[ $runs =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] || bail_out "RUNS must be a positive number"

make_rootfs "$T/rootfs" || bail_out "cannot build the rootfs"

# bundle DIR SPEC-COMMAND: a config from the runtime's `spec`, running /bin/true.
bundle ()
{
  mkdir -p "$1" && (cd "$1" && "$2" spec) || return 1
  cfg "$1/config.json" process.terminal=false 'process.args=["/bin/true"]' root.path:="$T/rootfs"
}
bundle "$T/runc-spec" "$RUNC" || bail_out "runc spec failed"
bundle "$T/agentbox-spec" "$AGENTBOX" || bail_out "agentbox spec failed"
mkdir -p "$T/agentbox-spec-notime"
cp "$T/agentbox-spec/config.json" "$T/agentbox-spec-notime/"
cfg "$T/agentbox-spec-notime/config.json" linux.namespaces-=time
echo "$T/rootfs" >>"$T/rootfs-list"
mkdir -p "$T/state-agentbox" "$T/state-runc" "$T/state-sandbox"

cat >"$T/bench.py" <<'EOF'
import os, statistics, subprocess, sys, time

agentbox, runc, tdir, runs, prefix = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
null = subprocess.DEVNULL

def cmd(kind, bundle, cid):
    if kind == "sandbox":
        return [agentbox, "--root", tdir + "/state-sandbox", "run", "--default", cid, "--", "/bin/true"]
    exe = agentbox if kind == "agentbox" else runc
    return [exe, "--root", "%s/state-%s" % (tdir, kind), "run", "--bundle", bundle, cid]

def once(kind, bundle, cid):
    t0 = time.perf_counter_ns()
    p = subprocess.run(cmd(kind, bundle, cid), stdin=null, stdout=null, stderr=subprocess.PIPE)
    t1 = time.perf_counter_ns()
    return p.returncode, (t1 - t0) / 1e6, p.stderr.decode("utf-8", "replace").strip()

cases = [("a", "agentbox", tdir + "/runc-spec"), ("a", "runc", tdir + "/runc-spec"),
         ("b", "agentbox", tdir + "/agentbox-spec"), ("b", "runc", tdir + "/agentbox-spec"),
         ("d", "agentbox", tdir + "/agentbox-spec-notime"), ("d", "runc", tdir + "/agentbox-spec-notime"),
         ("c", "sandbox", None)]
# Does runc run the hardened profile at all?  One try, outside the timing.
rc, _, err = once("runc", tdir + "/agentbox-spec", prefix + "probe")
subprocess.run([runc, "--root", tdir + "/state-runc", "delete", "--force", prefix + "probe"], stdout=null, stderr=null)
if rc != 0:
    why = err.splitlines()[-1] if err else "exit %d" % rc
    print("(b) runc cannot run agentbox's hardened profile, agentbox alone: %s" % why)
    cases = [c for c in cases if c[:2] != ("b", "runc")]
# warm-up, untimed: page cache, the sandbox skeleton
for i, (_, kind, bundle) in enumerate(cases):
    once(kind, bundle, "%swarm-%d" % (prefix, i))

times = {c[:2]: [] for c in cases}
fails = {c[:2]: 0 for c in cases}
for r in range(runs):
    # interleaved, the order rotated every round
    order = cases[r % len(cases):] + cases[:r % len(cases)]
    for n, (cfg, kind, bundle) in enumerate(order):
        rc, ms, err = once(kind, bundle, "%s%d-%d" % (prefix, r, n))
        if rc == 0:
            times[(cfg, kind)].append(ms)
        else:
            fails[(cfg, kind)] += 1
            if fails[(cfg, kind)] == 1:
                print("(%s) %s failed (exit %d): %s" % (cfg, kind, rc, err[-300:]))

def p90(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]

names = {"a": "runc spec", "b": "agentbox spec", "d": "... no time ns", "c": "run --default"}
print("%-16s %-9s %5s %9s %9s %9s %9s" % ("config", "runtime", "runs", "median", "p90", "min", "max"))
med = {}
for (cfg, kind) in times:
    v = times[(cfg, kind)]
    if not v:
        print("%-16s %-9s %5d  (every run failed)" % (names[cfg], kind, 0))
        continue
    med[(cfg, kind)] = statistics.median(v)
    print("%-16s %-9s %5d %7.1f ms %6.1f ms %6.1f ms %6.1f ms" % (names[cfg], kind, len(v), statistics.median(v),
                                                                p90(v), min(v), max(v)))
    if fails[(cfg, kind)]:
        print("%-16s %-9s %5d failed" % ("", "", fails[(cfg, kind)]))
for cfg in "abd":
    if (cfg, "agentbox") in med and (cfg, "runc") in med:
        print("ratio agentbox/runc, %s: %.2f (median), %.2f (p90)" % (
            names[cfg], med[(cfg, "agentbox")] / med[(cfg, "runc")],
            p90(times[(cfg, "agentbox")]) / p90(times[(cfg, "runc")])))
EOF

echo "lifecycle: $runs interleaved runs of /bin/true per case; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" >&7
echo "agentbox: $AGENTBOX ($("$AGENTBOX" --version 2>/dev/null | head -1)); runc: $RUNC ($("$RUNC" --version | head -1))" >&7
with_own_cgroup_root "$PYTHON3" "$T/bench.py" "$AGENTBOX" "$RUNC" "$T" "$runs" "ab-$$-" >&7 ||
  bail_out "the benchmark driver failed"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&7
done_testing

#!/bin/bash
# The benchmark scripts must not rot: each script of tests/bench/ runs with
# N=2 (a batch of 4 for the throughput figure, one strace run) and its
# output is checked for form, never for speed:
#   - the header (`bench fig=F n=2`), `load before:` and `load after:`;
#   - for every contender it did not skip (agentbox always; runc and crun
#     when installed), one well-formed `result` line per metric of the
#     figure, with n >= 1 and fail=0 (the runs themselves worked);
#   - well-formed `ratio` and `target` lines, and no `leftover` but a
#     `clean` line (the script's own check that nothing was left behind).
# Skipped without root or without runc (the figures compare against it).
AB_NO_RUNTIME=1
. "$(dirname "$0")/../integration/lib.sh"

# The driver's order of the contenders (bench.py round_order), from
# outside: over 200 rounds of four, how often each one runs right after
# each other one (round boundaries included), and never right after
# itself.  A rotation made the first in the list follow the last in three
# rounds of four, and never follow some others at all.
order=$("$PYTHON3" - "$AB_TOP_SRCDIR/tests/bench" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import bench
names = ["agentbox", "agentbox-1id", "bwrap", "runc"]
count, prev = {}, None
for r in range(200):
    for n in bench.round_order(names, r, prev):
        if prev is not None:
            count[(prev, n)] = count.get((prev, n), 0) + 1
        prev = n
pairs = [count.get((a, b), 0) for a in names for b in names if a != b]
selves = sum(count.get((a, a), 0) for a in names)
print("balanced" if min(pairs) * 1.6 > max(pairs) and selves == 0 else "unbalanced: %s" % sorted(count.items()))
PY
)
is "$order" "balanced" "bench.py: each contender runs right after each other one about as often, never after itself"

[ "$(id -u)" = 0 ] || skip_all "needs root"
RUNC=${RUNC:-/usr/sbin/runc}
command -v "$RUNC" >/dev/null || skip_all "runc not installed"
[ -x "${AGENTBOX:-}" ] || skip_all "AGENTBOX not set (make check sets it)"
bench=$AB_TOP_SRCDIR/tests/bench
# The footprint and profile figures run agentbox under strace, and
# LeakSanitizer cannot work under ptrace (a sanitizer build aborts at exit):
# no leak check here; every other suite keeps it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

num='-?[0-9]+(\.[0-9]+)?'
# check_figure SCRIPT FIG CONTENDER:METRIC...: run the script and check its lines.
check_figure ()
{
  local targets=1
  [ "$1" = --no-targets ] && { targets=0; shift; }
  local script=$1 fig=$2 out st want who metric bad
  shift 2
  out=$(BENCH_N=2 BENCH_BATCH=4 BENCH_STRACE_N=1 "$bench/$script" 2>"$T/$fig.err" </dev/null)
  st=$?
  is "$st" 0 "$script: exit status 0" || diag "$(tail -5 "$T/$fig.err")"
  like "$out" "^bench fig=$fig n=2 nproc=[0-9]+ kernel=" "$script: the header names the figure, N and the machine"
  like "$out" "^load before: $num $num $num " "$script: the load before"
  like "$out" "^load after: $num $num $num " "$script: the load after"
  like "$out" "^machine fig=$fig wall_s=$num cpus=[0-9]+ busy_pct=$num ours_pct=$num others_pct=$num steal_pct=$num\$" \
    "$script: the CPU use of the run, ours and the others'"
  for want in "$@"; do
    who=${want%%:*} metric=${want#*:}
    if [[ $who = runc || $who = crun || $who = bwrap ]] && grep -q "^skip fig=$fig contender=$who " <<<"$out"; then
      skip "$who not installed" 1
      continue
    fi
    like "$out" "^result fig=$fig contender=$who metric=$metric unit=[^ ]+ n=[1-9][0-9]* fail=0 median=$num p95=$num min=$num max=$num\$" \
      "$script: a well-formed $metric result for $who"
  done
  [ $targets = 0 ] ||
    like "$out" "^target fig=$fig contender=[^ ]+ metric=[^ ]+ want=" "$script: it states its targets"
  bad=$(grep -E '^(ratio|target) ' <<<"$out" | grep -vE "^(ratio fig=$fig contender=[^ ]+ metric=[^ ]+( (vs|minus)_[a-z0-9]+=$num)+|target fig=$fig contender=[^ ]+ metric=[^ ]+ want=[a-z0-9_]+(<=|>=)$num got=($num|none) met=(yes|no|unknown))\$")
  is "$bad" "" "$script: every ratio and target line is well-formed"
  unlike "$out" '^leftover ' "$script: nothing left behind"
  like "$out" "^clean fig=$fig " "$script: its own leftover check ran"
}

all="agentbox runc crun"
each () { local m=$1 c; for c in $all; do echo "$c:$m"; done; }

check_figure start-hardened.sh start-hardened $(each wall)
check_figure start-runc-spec.sh start-runc-spec $(each wall)
# As an ordinary user (made here if missing, as the rootless tests do).
if ab_user "${AB_ROOTLESS_USER:-abuser}" >/dev/null; then
  check_figure start-rootless.sh start-rootless agentbox:wall agentbox-1id:wall bwrap:wall runc:wall
else
  skip "cannot make the user ${AB_ROOTLESS_USER:-abuser} for start-rootless.sh" 13
fi
check_figure exec.sh exec $(each wall)
check_figure throughput.sh throughput $(each runs_per_s) $(each wall)
check_figure footprint.sh footprint $(each maxrss) $(each syscalls)
check_figure mcp.sh mcp mcp:wall run:wall mcp-minus-run:wall
check_figure --no-targets netns-run.sh netns-run netns:wall no-netns:wall
BENCH_PROXY_MB=20 BENCH_PROXY_BATCH=5 BENCH_PROXY_STRACE=5 \
  check_figure proxy.sh proxy direct:throughput proxy:throughput connect:throughput transparent:throughput \
  direct:latency proxy:latency connect:latency transparent:latency
check_figure workspace-start.sh workspace-start bind:wall overlay:wall
check_figure landlock-start.sh landlock-start off:wall on:wall
check_figure workspace-diff.sh workspace-diff small10:wall big10:wall big10k:wall
check_figure workspace-apply.sh workspace-apply small10:wall big10:wall big10k:wall

# compare.sh, not a figure: two builds as contenders of one driver run.
out=$("$bench/compare.sh" start a="$AGENTBOX" b="$AGENTBOX" -- 2 2>"$T/compare.err" </dev/null)
is "$?" 0 "compare.sh: exit status 0" || diag "$(tail -5 "$T/compare.err")"
like "$out" "^result fig=compare-start contender=a metric=wall unit=ms n=2 fail=0 median=$num" "compare.sh: a result for the first build"
like "$out" "^result fig=compare-start contender=b metric=wall unit=ms n=2 fail=0 median=$num" "compare.sh: ... and for the second"
like "$out" "^clean fig=compare-start " "compare.sh: nothing left behind"

# profile.sh, not a figure: phases, milestones, the syscall counts.
out=$(BENCH_N=2 "$bench/profile.sh" 2>"$T/profile.err" </dev/null)
is "$?" 0 "profile.sh: exit status 0" || diag "$(tail -5 "$T/profile.err")"
like "$out" "^phase fig=profile at_ms=$num step_ms=$num step_p95_ms=$num step_max_ms=$num n=2 what=." \
  "profile.sh: phase lines from the --debug log"
like "$out" "^milestone fig=profile at_ms=$num took_ms=$num what=clone_container\$" "profile.sh: the strace timeline has the clone"
like "$out" "^milestone fig=profile at_ms=$num took_ms=$num what=exec_program\$" "profile.sh: ... and the exec"
like "$out" "^syscalls fig=profile total=[1-9][0-9]* top=[a-z0-9_]+:[0-9]+" "profile.sh: the syscall counts"
like "$out" "^clean fig=profile " "profile.sh: nothing left behind"
done_testing

#!/bin/sh
# The whole test suite, as CI runs it (as root on Debian 12):
#   1. build and `make check` (unit, integration, netns, egress, MCP suites)
#   2. the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   3. `make distcheck` (tarball builds and passes its checks)
#   4. the libFuzzer target for $FUZZ_SECONDS (default 60)
# Prints one line "N passed, M failed" last; exits non-zero on any failure.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
"$top/scripts/install-deps.sh" --if-needed || exit 1

passed=0
failed=0
log() { printf '%s\n' "$*" >&2; }

# Count the TAP results of a build directory's test-suite.log files.
tally() {
  for f in $(find "$1" -name test-suite.log -newer "$2" 2>/dev/null); do
    p=$(sed -n 's/^# PASS: *//p' "$f" | head -1)
    x=$(sed -n 's/^# XFAIL: *//p' "$f" | head -1)
    s=$(sed -n 's/^# SKIP: *//p' "$f" | head -1)
    fl=$(sed -n 's/^# FAIL: *//p' "$f" | head -1)
    e=$(sed -n 's/^# ERROR: *//p' "$f" | head -1)
    xp=$(sed -n 's/^# XPASS: *//p' "$f" | head -1)
    passed=$((passed + ${p:-0} + ${x:-0} + ${s:-0}))
    failed=$((failed + ${fl:-0} + ${e:-0} + ${xp:-0}))
  done
}

step() { # name, command...: one pass/fail for steps that are not TAP suites
  name=$1; shift
  log "== $name"
  if "$@"; then passed=$((passed + 1)); else log "FAILED: $name"; failed=$((failed + 1)); fi
}

# The MCP interop test drives the official TypeScript SDK (package-lock.json).
if command -v npm >/dev/null 2>&1 && [ ! -d tests/mcp/node_modules ]; then
  (cd tests/mcp && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null 2>&1) ||
    log "npm ci in tests/mcp failed: the SDK interop test will skip"
fi

[ -x configure ] || ./autogen.sh >/dev/null 2>&1 || { echo "0 passed, 1 failed"; exit 1; }
stamp=$(mktemp)

check_in() { # build dir, configure flags
  dir=$1; shift
  mkdir -p "$dir"
  (cd "$dir" && { [ -f Makefile ] || "$top/configure" -q "$@"; } && make -s -j"$(nproc)" >/dev/null \
     && make -s -j"$(nproc)" check >/dev/null 2>&1)
  r=$?
  if [ ! -f "$dir/test-suite.log" ]; then
    log "FAILED: build in $dir"; failed=$((failed + 1))
  fi
  return $r
}

log "== make check"
check_in "$top/_build"
log "== make check with sanitizers"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  check_in "$top/_build-san" --enable-sanitizers
tally "$top/_build" "$stamp"
tally "$top/_build-san" "$stamp"
# failures of individual tests are counted above; print the names, and the
# diagnostic lines (up to 3, cut at 400 columns) each "not ok" carries
for f in $(find "$top/_build" "$top/_build-san" -name '*.log' -newer "$stamp" 2>/dev/null); do
  awk -v f="$f" '/^(not ok|FAIL:|ERROR:)/ { print f ":" $0; d = /^not ok/ ? 3 : 0; next }
                 d > 0 && /^#/ { print f ":" substr($0, 1, 400); d--; next } { d = 0 }' "$f" 2>/dev/null |
    head -30 >&2
done

# distcheck runs the suite once more, from the tarball; on failure its tree
# is left in place, and the failing tests are named from its logs.
step "make distcheck" sh -c "cd '$top/_build' && make -s distcheck >'$top/_build/distcheck.log' 2>&1 || {
  grep -H '^\(not ok\|FAIL:\|ERROR:\)' \$(find '$top/_build' -path '*/agentbox-*/_build/*' -name '*.log' 2>/dev/null) \
    2>/dev/null | head -20 >&2; tail -5 '$top/_build/distcheck.log' >&2; exit 1; }"
step "fuzz the config parser for ${FUZZ_SECONDS:-60} s" \
  sh -c "cd '$top/_build' && make -s fuzz-run FUZZ_SECONDS=${FUZZ_SECONDS:-60} >'$top/_build/fuzz.log' 2>&1"

rm -f "$stamp"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

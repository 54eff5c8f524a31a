#!/bin/bash
# The OCI runtime conformance programs of opencontainers/runtime-tools
# (validation/*.t) against a runtime:
#
#   tests/oci-validation/run.sh RUNTIME [SNAPSHOT]
#
# SNAPSHOT (or $OCI_RUNTIME_TOOLS) is a runtime-tools source tree or a bare
# git directory of it.  It is not part of agentbox; get one with
#   git clone https://github.com/opencontainers/runtime-tools
# (or the fetch of github:opencontainers/runtime-tools into /work/.mirror,
# which gives a bare git dir).  Needs Go >= 1.19 (Debian 12: golang-go);
# the snapshot's go.mod asks 1.21, so the copy built here gets small local
# helpers for the four 1.21 library calls it uses (slices.Contains,
# slices.DeleteFunc, sync.OnceValue(s), strings.CutPrefix) and builds
# offline with -mod=vendor.  No test logic is changed.
#
# The build goes to $OCI_VALIDATION_WORK (default /var/tmp/oci-validation),
# keyed by the snapshot's commit, and is reused.  Each validation/X/X.t runs
# with RUNTIME=... in a private cgroup namespace and mount namespace where
# the cgroup hierarchies are remounted, so "/" of every hierarchy is the
# caller's own cgroup (absolute cgroupsPath of the tests land below it; no
# process leaves the caller's cgroup).  Output: per test "name pass/total",
# then "N passed, M failed" (TAP assertions, plus one for the program's exit
# status where that is its verdict, see below); exit status 0 when nothing
# failed, 1 otherwise, 2 for a usage or build problem.  Run as root.
# $OCI_VALIDATION_TESTS limits the tests run (space separated names),
# $OCI_VALIDATION_LOGS names a directory that keeps each test's TAP output.
set -u
runtime=${1:-}
snap=${2:-${OCI_RUNTIME_TOOLS:-}}
if [ -z "$runtime" ]; then
  echo "usage: $0 RUNTIME [SNAPSHOT]  (SNAPSHOT or \$OCI_RUNTIME_TOOLS: runtime-tools tree or bare git dir)" >&2
  exit 2
fi
runtime=$(command -v "$runtime") || { echo "$0: runtime \`${1}' not found" >&2; exit 2; }
case $runtime in /*) ;; *) runtime=$PWD/$runtime ;; esac
if [ -z "$snap" ] || [ ! -d "$snap" ]; then
  echo "$0: no runtime-tools snapshot: pass it as SNAPSHOT or set OCI_RUNTIME_TOOLS;" >&2
  echo "  get one with: git clone https://github.com/opencontainers/runtime-tools" >&2
  exit 2
fi
command -v go >/dev/null || { echo "$0: needs go (Debian: apt-get install golang-go)" >&2; exit 2; }
work=${OCI_VALIDATION_WORK:-/var/tmp/oci-validation}

# ---- the source copy ---------------------------------------------------------
if git --git-dir="$snap" rev-parse -q --verify HEAD >/dev/null 2>&1; then
  rev=$(git --git-dir="$snap" rev-parse --short HEAD)
  export_src () { git --git-dir="$snap" archive HEAD | tar -x -C "$1"; }
elif git -C "$snap" rev-parse -q --verify HEAD >/dev/null 2>&1; then
  rev=$(git -C "$snap" rev-parse --short HEAD)
  export_src () { git -C "$snap" archive HEAD | tar -x -C "$1"; }
else
  rev=tree
  export_src () { cp -a "$snap/." "$1"; }
fi
src=$work/runtime-tools-$rev

# shim_file FILE: replace the Go 1.21 library calls in FILE by helpers
# defined in a file of its own package (compat_go119.go).
shim_file ()
{
  local f=$1 dir pkg
  dir=$(dirname "$f")
  pkg=$(sed -n 's/^package \([a-z_0-9]*\).*/\1/p' "$f" | head -1)
  sed -i -e '/^[[:space:]]*"slices"$/d' -e 's/^import "slices"$//' \
    -e 's/\bslices\.Contains(/compatContains(/g' -e 's/\bslices\.DeleteFunc(/compatDeleteFunc(/g' \
    -e 's/\bsync\.OnceValues(/compatOnceValues(/g' -e 's/\bsync\.OnceValue(/compatOnceValue(/g' \
    -e 's/\bstrings\.CutPrefix(/compatCutPrefix(/g' "$f"
  # Keep imports that only the replaced calls used.
  grep -q '^[[:space:]]*"sync"$' "$f" && echo 'var _ = sync.NewCond' >>"$f"
  grep -q '^[[:space:]]*"strings"$' "$f" && echo 'var _ = strings.Cut' >>"$f"
  [ -f "$dir/compat_go119.go" ] && return 0
  cat >"$dir/compat_go119.go" <<GO
package $pkg

// Local stand-ins for Go 1.21 library functions (slices, sync, strings),
// so this copy builds with Go 1.19; added by agentbox's oci-validation/run.sh.

import (
	"strings"
	"sync"
)

func compatContains[E comparable](s []E, v E) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func compatDeleteFunc[E any](s []E, del func(E) bool) []E {
	out := s[:0]
	for _, x := range s {
		if !del(x) {
			out = append(out, x)
		}
	}
	return out
}

func compatOnceValue[T any](f func() T) func() T {
	var once sync.Once
	var v T
	return func() T { once.Do(func() { v = f() }); return v }
}

func compatOnceValues[T, U any](f func() (T, U)) func() (T, U) {
	var once sync.Once
	var v T
	var u U
	return func() (T, U) { once.Do(func() { v, u = f() }); return v, u }
}

func compatCutPrefix(s, prefix string) (string, bool) {
	if !strings.HasPrefix(s, prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

var _ = compatContains[int]
var _ = compatDeleteFunc[int]
var _ = compatOnceValue[int]
var _ = compatOnceValues[int, int]
var _ = compatCutPrefix
GO
}

build ()
{
  rm -rf "$src.tmp" && mkdir -p "$src.tmp" && export_src "$src.tmp" || return 1
  (
    cd "$src.tmp" || exit 1
    goversion=$(go env GOVERSION | sed -n 's/^go\([0-9]*\.[0-9]*\).*/\1/p')
    case $goversion in
      1.19 | 1.20)
        sed -i 's/^go 1\.2[1-9].*/go 1.19/' go.mod
        sed -i 's/^\(## explicit; go\) 1\.2[1-9].*/\1 1.19/' vendor/modules.txt
        grep -rlE '"slices"|sync\.OnceValues?\(|strings\.CutPrefix\(' --include='*.go' . |
          grep -v '_test\.go$' | grep -v '^\./vendor/golang.org/' | grep -v '/testify/' |
          while read -r f; do shim_file "$f"; done
        ;;
    esac
    export GOFLAGS=-mod=vendor GOPROXY=off GOCACHE="$work/gocache" CGO_ENABLED=0
    go build -tags 'netgo osusergo' -o runtimetest ./cmd/runtimetest || exit 1
    for d in validation/*/; do
      t=$(basename "$d")
      [ "$t" = util ] && continue
      [ -f "$d$t.go" ] || continue
      go build -o "$d$t.t" "./$d" || exit 1
    done
  ) || { echo "$0: building runtime-tools failed" >&2; return 1; }
  rm -rf "$src" && mv "$src.tmp" "$src"
}

mkdir -p "$work"
if [ ! -x "$src/runtimetest" ]; then
  echo "# building runtime-tools $rev in $src" >&2
  build || exit 2
fi

# ---- the run ---------------------------------------------------------------
# The private cgroup view of tests/integration/cgroot.sh: each cgroup
# hierarchy unmounted and mounted again inside the new cgroup namespace, so
# its root is the caller's cgroup.
. "$(cd "$(dirname "$0")/.." && pwd)/integration/cgroot.sh"

logs=${OCI_VALIDATION_LOGS:-}
[ -n "$logs" ] && mkdir -p "$logs"
tests=${OCI_VALIDATION_TESTS:-$(cd "$src/validation" && for d in */; do
  [ -x "$d${d%/}.t" ] && echo "${d%/}"; done)}
passed=0 failed=0
cd "$src" || exit 1
for t in $tests; do
  out=$(timeout -k 10 300 /usr/bin/unshare --cgroup --mount --propagation private -- \
    /bin/sh -c "$_AB_CGROOT_SH" sh env RUNTIME="$runtime" "./validation/$t/$t.t" 2>&1 </dev/null)
  st=$?
  [ -n "$logs" ] && printf '%s\n' "$out" >"$logs/$t.tap"
  p=$(printf '%s\n' "$out" | grep -c '^ok ')
  f=$(printf '%s\n' "$out" | grep -c '^not ok ')
  # The program's own verdict is one assertion more: a non-zero exit
  # (util.Fatal, a crash, the timeout) fails once on top of its TAP lines;
  # a program that exits 0 without TAP (the *_fail tests, which expect the
  # runtime's error) passes once; a plan of 1..0 alone is 0/0.
  if [ "$st" != 0 ]; then
    f=$((f + 1))
  elif [ "$p" = 0 ] && [ "$f" = 0 ] && ! printf '%s\n' "$out" | grep -q '^1\.\.0'; then
    p=1
  fi
  printf '%-40s %d/%d\n' "$t" "$p" $((p + f))
  passed=$((passed + p)) failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

#!/bin/bash
# agentbox compiles against musl: every object of the binary through
# `scripts/static-musl.sh --compile-check` (musl-gcc, the -dev packages'
# headers, nothing linked), so that a change that uses what only glibc has
# fails here, though the musl build itself needs the libraries' sources
# (docs/benchmarks.md, "Without glibc's start-up").
set -u
top=${AB_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
n=0
failed=0
ok ()
{
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
if ! command -v musl-gcc >/dev/null; then
  echo "1..0 # SKIP musl-gcc not installed (apt-get install musl-tools)"
  exit 0
fi
d=$(mktemp -d /tmp/abtest.musl.XXXXXX)
trap 'rm -rf "$d"' EXIT

"$top/scripts/static-musl.sh" --compile-check "$d/b" >"$d/log" 2>&1
rc=$?
[ $rc = 0 ] || { grep -E 'error|warning' "$d/log" | head -20 | sed 's/^/#   /'; tail -3 "$d/log" | sed 's/^/#   /'; }
ok $rc "every object of agentbox compiles against musl's headers"
grep -q '^#define AB_LIBC_COMPAT 1' "$d/b/config.h" 2>/dev/null
ok $? "... configured as a C library other than glibc (base/libc-compat.h in config.h)"
nobj=$(find "$d/b" -name '*.o' | wc -l)
[ "$nobj" -ge 100 ]
ok $? "... $nobj objects made"

# The same compiler refuses what only glibc declares: the check can fail.
cc=$(sed -n 's/^CC = //p' "$d/b/Makefile")
printf '#include "config.h"\n#include <gnu/libc-version.h>\nconst char *v (void) { return gnu_get_libc_version (); }\n' \
  >"$d/probe.c"
# shellcheck disable=SC2086
! $cc -I"$d/b" -I"$top" -c "$d/probe.c" -o "$d/probe.o" 2>/dev/null
ok $? "a file that calls gnu_get_libc_version () does not compile there"
printf '#include "config.h"\n#include <sys/mount.h>\nint v (void) { return open_tree (-1, "", OPEN_TREE_CLONE); }\n' \
  >"$d/probe2.c"
# shellcheck disable=SC2086
$cc -Werror -I"$d/b" -I"$top" -c "$d/probe2.c" -o "$d/probe2.o" 2>/dev/null
ok $? "... and one that calls open_tree () does (base/libc-compat.h declares it)"
echo "1..$n"
exit $failed

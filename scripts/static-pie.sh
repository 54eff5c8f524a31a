#!/bin/sh
# Build agentbox as a static PIE (configure --enable-static-pie) in BUILDDIR.
#
#   scripts/static-pie.sh LIBMNL_SRC BUILDDIR
#
# Debian ships static archives of libseccomp, libcap, yajl and libnftnl
# (the -dev packages) but not libmnl.a.  LIBMNL_SRC is a libmnl source tree
# (a release tarball or a checkout, 1.0.4 or later); its four source files
# are compiled into BUILDDIR/libmnl/libmnl.a here, outside this repository,
# without running libmnl's own autotools.  Nothing of libmnl is kept in
# agentbox's tree.  The result: BUILDDIR/agentbox, `make bench` in BUILDDIR
# measures it (docs/benchmarks.md, fourth pass).
set -eu
[ $# -eq 2 ] || { echo "usage: $0 LIBMNL_SRC BUILDDIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
for f in attr callback nlmsg socket; do
  [ -f "$src/src/$f.c" ] || { echo "$0: $src/src/$f.c: not a libmnl source tree" >&2; exit 2; }
done
[ -f "$top/configure" ] || (cd "$top" && ./autogen.sh)

mkdir -p "$out/libmnl"
# libmnl's only configure result that its sources use
echo '#define HAVE_VISIBILITY_HIDDEN 1' >"$out/libmnl/config.h"
for f in attr callback nlmsg socket; do
  ${CC:-cc} -O2 -fPIE -I"$out/libmnl" -I"$src/include" -c "$src/src/$f.c" \
    -o "$out/libmnl/$f.o"
done
rm -f "$out/libmnl/libmnl.a"
ar rcs "$out/libmnl/libmnl.a" "$out/libmnl"/attr.o "$out/libmnl"/callback.o "$out/libmnl"/nlmsg.o \
  "$out/libmnl"/socket.o

cd "$out"
[ -f Makefile ] || "$top/configure" -q --enable-static-pie LDFLAGS="-L$out/libmnl"
make -s -j"$(nproc)"
# a static PIE: type DYN, no program interpreter
if readelf -l agentbox | grep -q INTERP || ! readelf -h agentbox | grep -q 'DYN'; then
  echo "$0: $out/agentbox is not a static PIE" >&2
  exit 1
fi
echo "$out/agentbox"

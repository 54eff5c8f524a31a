#!/bin/sh
# Build agentbox as a static PIE against musl in BUILDDIR.
#
#   scripts/static-musl.sh SRCDIR BUILDDIR
#
# Why: glibc's start-up probes the CPU's caches with `cpuid` (init_cpu_features,
# dl_init_cacheinfo), and where `cpuid` traps to the hypervisor, as on this
# project's VMs, an exec of any glibc program costs about 0.55 ms more than one
# of a musl program (docs/benchmarks.md, "Without glibc's start-up").  A sandbox
# start is one exec of agentbox.
#
# SRCDIR holds the source trees of the five libraries, one directory each whose
# name starts with libmnl, libnftnl, libseccomp, libcap and yajl (`apt-get source
# libseccomp libcap2 yajl` gives Debian's, patched; Debian's mirror may lack
# libmnl's and libnftnl's: any release tree or checkout, libmnl >= 1.0.4,
# libnftnl >= 1.2.0).  Each is compiled with musl-gcc (Debian's musl-tools)
# into BUILDDIR/musl (gperf is needed for libseccomp's), outside this repository; nothing of them is kept in
# agentbox's tree.  Then agentbox is configured with CC=musl-gcc and
# --enable-static-pie against them.  The result: BUILDDIR/agentbox; `make
# bench` in BUILDDIR measures it.
#
#   scripts/static-musl.sh --compile-check BUILDDIR
#
# compiles every object of agentbox with musl-gcc against the installed
# -dev packages' headers (the libraries' headers do not depend on the C
# library) and links nothing: what a change uses of glibc that musl lacks
# fails here without the five source trees (tests/tree/t-musl.sh, make check).
set -eu
check=no
if [ "${1:-}" = --compile-check ]; then
  check=yes
  shift
  [ $# -eq 1 ] || { echo "usage: $0 --compile-check BUILDDIR" >&2; exit 2; }
else
  [ $# -eq 2 ] || { echo "usage: $0 SRCDIR BUILDDIR" >&2; exit 2; }
  srcdir=$(cd "$1" && pwd)
  shift
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
command -v musl-gcc >/dev/null || { echo "$0: musl-gcc not found: apt-get install musl-tools" >&2; exit 2; }
jobs=$(nproc)

pfx="$out/musl"
mkdir -p "$pfx/include" "$pfx/lib/pkgconfig" "$pfx/obj"
# musl-gcc searches musl's headers alone; the libraries and agentbox also need
# the kernel's (linux/, asm/, asm-generic/), which do not depend on the libc.
for k in linux asm-generic; do ln -sfn "/usr/include/$k" "$pfx/include/$k"; done
ln -sfn "/usr/include/$(gcc -print-multiarch)/asm" "$pfx/include/asm"
# Debian's musl-gcc.specs knows no -static-pie: the same specs, with musl's
# rcrt1.o (it relocates the program itself) and no program interpreter for it.
ml=/usr/lib/$(uname -m)-linux-musl
sed -e "s|%{!shared: $ml/Scrt1.o}|%{static-pie: $ml/rcrt1.o} %{!static-pie:%{!shared: $ml/Scrt1.o}}|" \
  -e "s|^-dynamic-linker \([^ ]*\) |%{static-pie:-static -pie --no-dynamic-linker -z text} %{!static-pie:-dynamic-linker \1} |" \
  "$ml/musl-gcc.specs" >"$pfx/musl-gcc.specs"
export CC="gcc -specs $pfx/musl-gcc.specs -isystem $pfx/include"
[ -f "$top/configure" ] || (cd "$top" && ./autogen.sh)

if [ "$check" = yes ]; then
  # the five libraries' headers, from the -dev packages
  for h in seccomp.h seccomp-syscalls.h yajl libmnl libnftnl; do
    [ -e "/usr/include/$h" ] || { echo "$0: /usr/include/$h missing: scripts/install-deps.sh" >&2; exit 2; }
    ln -sfn "/usr/include/$h" "$pfx/include/$h"
  done
  mkdir -p "$pfx/include/sys"
  ln -sfn /usr/include/sys/capability.h "$pfx/include/sys/capability.h"
  cd "$out"
  [ -f Makefile ] || "$top/configure" -q --disable-static-libs CC="$CC" CFLAGS="-O2"
  grep -q '^#define AB_LIBC_COMPAT 1' config.h || { echo "$0: configure took $CC for glibc" >&2; exit 1; }
  make -s -j"$jobs" compile-only
  exit 0
fi

command -v gperf >/dev/null || { echo "$0: gperf not found (libseccomp's build): apt-get install gperf" >&2; exit 2; }
tree() {
  for d in "$srcdir/$1"*; do
    [ -d "$d" ] && { echo "$d"; return; }
  done
  echo "$0: no $1 source tree in $srcdir" >&2
  exit 2
}
mnl=$(tree libmnl); nftnl=$(tree libnftnl); seccomp=$(tree libseccomp)
cap=$(tree libcap); yajl=$(tree yajl)

export CFLAGS="-O2 -fPIE -fstack-protector-strong -D_FORTIFY_SOURCE=2"
export PKG_CONFIG_LIBDIR="$pfx/lib/pkgconfig"
unset PKG_CONFIG_PATH

pc() { # NAME VERSION LIB
  printf 'prefix=%s\nincludedir=${prefix}/include\nlibdir=${prefix}/lib\n\nName: %s\nDescription: %s\nVersion: %s\nCflags: -I${includedir}\nLibs: -L${libdir} -l%s\n' \
    "$pfx" "$1" "$1" "$2" "$3" >"$pfx/lib/pkgconfig/$1.pc"
}
objs() { # DIR NAME SOURCES...: compile into DIR, archive as libNAME.a
  d=$1; n=$2; shift 2
  mkdir -p "$d"
  for f in "$@"; do # expr/counter.c and obj/counter.c: the directory in the name
    $CC $CFLAGS $ccextra -c "$f" -o "$d/$(basename "$(dirname "$f")")-$(basename "$f" .c).o"
  done
  rm -f "$pfx/lib/lib$n.a"
  ar rcs "$pfx/lib/lib$n.a" "$d"/*.o
}

# libmnl: its only configure result that its sources use
if [ ! -f "$pfx/lib/libmnl.a" ]; then
  mkdir -p "$pfx/obj/mnl"
  echo '#define HAVE_VISIBILITY_HIDDEN 1' >"$pfx/obj/mnl/config.h"
  ccextra="-I$pfx/obj/mnl -I$mnl/include"
  objs "$pfx/obj/mnl" mnl "$mnl"/src/attr.c "$mnl"/src/callback.c "$mnl"/src/nlmsg.c "$mnl"/src/socket.c
  cp -r "$mnl/include/libmnl" "$pfx/include/"
  pc libmnl "$(sed -n 's/^AC_INIT(\[libmnl\], *\[\([0-9.]*\)\].*/\1/p' "$mnl/configure.ac")" mnl
fi

# libnftnl: every source file, no configure result used but the visibility one
if [ ! -f "$pfx/lib/libnftnl.a" ]; then
  mkdir -p "$pfx/obj/nftnl"
  echo '#define HAVE_VISIBILITY_HIDDEN 1' >"$pfx/obj/nftnl/config.h"
  ccextra="-I$pfx/obj/nftnl -I$nftnl/include -I$pfx/include -include $pfx/obj/nftnl/config.h"
  objs "$pfx/obj/nftnl" nftnl "$nftnl"/src/*.c "$nftnl"/src/expr/*.c "$nftnl"/src/obj/*.c
  cp -r "$nftnl/include/libnftnl" "$pfx/include/"
  pc libnftnl "$(sed -n 's/^AC_INIT(\[libnftnl\], *\[\([0-9.]*\)\].*/\1/p' "$nftnl/configure.ac")" nftnl
fi

# yajl: its CMake step only writes the version header
if [ ! -f "$pfx/lib/libyajl.a" ]; then
  mkdir -p "$pfx/obj/yajl/yajl" "$pfx/include/yajl"
  v=$(sed -n 's/^SET (YAJL_MAJOR \([0-9]*\))/\1/p; s/^SET (YAJL_MINOR \([0-9]*\))/\1/p; s/^SET (YAJL_MICRO \([0-9]*\))/\1/p' \
    "$yajl/CMakeLists.txt" | tr '\n' ' ')
  set -- $v
  sed "s/\${YAJL_MAJOR}/$1/; s/\${YAJL_MINOR}/$2/; s/\${YAJL_MICRO}/$3/" "$yajl/src/api/yajl_version.h.cmake" \
    >"$pfx/include/yajl/yajl_version.h"
  cp "$yajl"/src/api/*.h "$pfx/include/yajl/"
  ccextra="-I$pfx/include"
  objs "$pfx/obj/yajl" yajl "$yajl"/src/*.c
  pc yajl "$1.$2.$3" yajl
fi

# libcap: its own Makefile, libcap.a alone (the host's gcc builds its name generator)
if [ ! -f "$pfx/lib/libcap.a" ]; then
  make -s -C "$cap/libcap" clean >/dev/null
  make -s -C "$cap/libcap" -j"$jobs" CC="$CC" BUILD_CC=gcc COPTS="$CFLAGS" SHARED=no PTHREADS=no libcap.a
  cp "$cap/libcap/libcap.a" "$pfx/lib/"
  cp -r "$cap/libcap/include/sys" "$pfx/include/"
  pc libcap "$(sed -n 's/^VERSION=\(.*\)/\1/p' "$cap/Make.Rules").$(sed -n 's/^MINOR=\(.*\)/\1/p' "$cap/Make.Rules")" cap
fi

# libseccomp: autotools, static only
if [ ! -f "$pfx/lib/pkgconfig/libseccomp.pc" ]; then
  mkdir -p "$pfx/obj/seccomp"
  (cd "$pfx/obj/seccomp" && "$seccomp/configure" -q --prefix="$pfx" --enable-static --disable-shared \
    --disable-python >/dev/null && make -s -j"$jobs" -C src >/dev/null && make -s -C src install >/dev/null &&
    make -s -C include install >/dev/null)
  cp "$pfx/obj/seccomp/libseccomp.pc" "$pfx/lib/pkgconfig/"
fi

cd "$out"
[ -f Makefile ] || "$top/configure" -q --enable-static-pie CC="$CC" CFLAGS="-O2 -g" LDFLAGS="-L$pfx/lib"
make -s -j"$jobs" agentbox
# a static PIE: type DYN, no program interpreter
if readelf -l agentbox | grep -q INTERP || ! readelf -h agentbox | grep -q 'DYN'; then
  echo "$0: $out/agentbox is not a static PIE" >&2
  exit 1
fi
echo "$out/agentbox"

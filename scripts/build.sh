#!/bin/sh
# Configure and build agentbox in _build/ (or $AB_BUILD), out of tree.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${AB_BUILD:-$top/_build}
cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] || ./autogen.sh >/dev/null 2>&1
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" -q ${AB_CONFIGURE_FLAGS:-}
make -s -j"$(nproc)" >/dev/null
echo "$build/agentbox"

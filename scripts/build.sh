#!/usr/bin/env bash
# Configures and builds tracerig out of tree: scripts/build.sh DIR [configure args...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1; shift
cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ ! -e build-aux/tap-driver.sh ]; then
	autoreconf -fi >/dev/null
fi
mkdir -p "$dir"
cd "$dir"
if [ ! -e config.status ] || [ "$top/configure" -nt config.status ]; then
	"$top/configure" -q "$@"
fi
make -s -j"$(nproc)" >/dev/null
make -s -j"$(nproc)" check TESTS= >/dev/null

#!/usr/bin/env bash
# Prints the version configure.ac's AC_INIT gives: the one place it is
# written; the packages' versions are made from it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^AC_INIT(\[tracerig\], *\[\([^]]*\)\].*/\1/p' "$top/configure.ac")
[ -n "$version" ] || { echo "no version in $top/configure.ac's AC_INIT" >&2; exit 1; }
echo "$version"

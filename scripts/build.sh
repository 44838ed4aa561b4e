#!/usr/bin/env bash
# Configures and builds tracerig out of tree, with the test suite's programs:
#   scripts/build.sh [--no-check] DIR [configure args...]
# --no-check builds the program and its plugins only (scripts/quickstart.sh:
# the test programs need the test suite's packages, scripts/deps.sh --test).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
check=yes
if [ "${1:-}" = --no-check ]; then
	check=no
	shift
fi
dir=$1; shift
cd "$top"

# Known noise, dropped from what a command prints on stderr (warnings and
# errors still show): configure's exit trap (and each of its checks) runs
# `rm -f core ...`, and in a build tree core/ is the core's object
# directory, so rm says "cannot remove 'core': Is a directory"; autoreconf
# -fi says which auxiliary file it installs in build-aux/.
without_noise() {
	local err st=0
	err=$(mktemp "${TMPDIR:-/tmp}/tracerig-build.XXXXXX")
	"$@" 2>"$err" || st=$?
	grep -v -e "^rm: cannot remove 'core': Is a directory\$" \
		-e "^[^ ]*: installing 'build-aux/[^']*'\$" "$err" >&2 || true
	rm -f "$err"
	return "$st"
}

if [ ! -x configure ] || [ configure.ac -nt configure ] || [ ! -e build-aux/tap-driver.sh ]; then
	without_noise autoreconf -fi >/dev/null
fi
mkdir -p "$dir"
cd "$dir"
if [ ! -e config.status ] || [ "$top/configure" -nt config.status ]; then
	without_noise "$top/configure" -q "$@"
fi
# The compile commands, for clang-tidy (scripts/check-tidy.py), recorded
# by bear where it is installed (scripts/deps.sh --test).
mk=(make)
command -v bear >/dev/null && mk=(bear --append --output compile_commands.json -- make)
# (make re-runs configure itself when configure.ac changed since.)
without_noise "${mk[@]}" -s -j"$(nproc)" >/dev/null
if [ "$check" = yes ]; then
	without_noise "${mk[@]}" -s -j"$(nproc)" check TESTS= >/dev/null
fi

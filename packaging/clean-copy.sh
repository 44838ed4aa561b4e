#!/usr/bin/env bash
# Copies the tree a package is built from: packaging/clean-copy.sh DEST
#
# In a git checkout: what git tracks plus new files git does not ignore, as
# they are in the working tree (so uncommitted changes are built, build
# directories and generated files never are).  Outside one: the tree without
# its build directories.  Prints one line describing what was copied, for
# the package's changelog.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DEST" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"

if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
	[ "$(git -C "$top" rev-parse --show-toplevel)" = "$top" ]; then
	# Deleted but still tracked files are left out (-e).
	git -C "$top" ls-files -z --cached --others --exclude-standard |
		(cd "$top" && while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done) |
		tar -C "$top" --null -T - -cf - | tar -C "$1" -xf -
	commit=$(git -C "$top" rev-parse --short HEAD)
	[ -z "$(git -C "$top" status --porcelain --untracked-files=no)" ] || commit="$commit with local changes"
	echo "git $commit"
else
	tar -C "$top" --exclude='./_build*' --exclude=./build --exclude=./autom4te.cache \
		--exclude=./.git -cf - . | tar -C "$1" -xf -
	echo "an unversioned tree"
fi

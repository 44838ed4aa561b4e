#!/usr/bin/env bash
# The C lines changed since formatting was first checked (BASE, the commit
# before .clang-format came in), as clang-format 14 formats them under
# .clang-format: lines nobody touched since keep their layout.
#   scripts/check-format.sh [--fix] [BASE]
# Exit 0 when they are; 1 with the diff to apply (--fix applies it); 2
# without clang-format; 3 when BASE is not in the history.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
fix=no
if [ "${1:-}" = --fix ]; then
	fix=yes
	shift
fi
base=${1:-5d3de2fbab51dc81538bd8710673fb71872a8f95}
gcf=$(command -v git-clang-format-14 || command -v git-clang-format || true)
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$gcf" ] || [ -z "$cf" ]; then
	echo "check-format: needs clang-format 14 (apt-get install clang-format)" >&2
	exit 2
fi
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
	echo "check-format: commit $base is not in this clone's history (a shallow clone?)" >&2
	exit 3
fi
if [ "$fix" = yes ]; then
	"$gcf" --force --binary "$cf" --extensions c,h "$base" --
	exit 0
fi
out=$("$gcf" --binary "$cf" --extensions c,h --diff "$base" -- 2>&1) || true
case $out in
"" | "no modified files to format" | "clang-format did not modify any files") exit 0 ;;
esac
printf '%s\n' "$out"
exit 1

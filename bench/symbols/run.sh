#!/usr/bin/env bash
# Symbolizer benchmark: lookups per second on cold and warm caches (user
# space: random addresses over a process's program, libc, libelf, ld.so and
# vDSO; kernel: random addresses in the kernel's text), one and two threads,
# side by side with binutils' addr2line -f resolving the same libc addresses.
# Prints a Markdown section.
#
#   bash bench/symbols/run.sh [BUILDDIR]      (as root, for kernel addresses)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-${BUILD:-.}}" && pwd)
[ -f "$build/config.h" ] || { echo "bench/symbols: $build/config.h is missing (configure first)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracerig-bench-symbols.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

libs="-lelf -lpthread"
grep -q 'define HAVE_CPLUS_DEMANGLE 1' "$build/config.h" && libs="$libs -liberty"
# shellcheck disable=SC2086
${CC:-cc} -O2 -g -pthread -I"$build" -I"$top" -I"$top/include" -o "$tmp/symbench" \
	"$top/bench/symbols/symbench.c" "$top"/core/symbols/*.c "$top"/core/log.c \
	"$top"/lib/untrusted.c "$top"/lib/sanitize.c $libs
"$tmp/symbench" "$tmp/libc.addr" >"$tmp/out"
val() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/out"; }

libc=$(ldd "$tmp/symbench" | awk '/libc.so/ { print $3 }')
n=$(wc -l <"$tmp/libc.addr")
a2l_rate="n/a"
a2l_agree="n/a"
if command -v addr2line >/dev/null && [ "$n" -gt 0 ]; then
	start=$(date +%s.%N)
	awk '{ print $1 }' "$tmp/libc.addr" | addr2line -f -e "$libc" >"$tmp/a2l" 2>/dev/null || true
	end=$(date +%s.%N)
	a2l_rate=$(awk -v n="$n" -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", n / (e - s) }')
	# Function names addr2line gives (every other line) vs ours.
	a2l_agree=$(paste -d' ' <(awk '{ sub(/@.*/, "", $2); print $2 }' "$tmp/libc.addr") <(awk 'NR % 2 == 1' "$tmp/a2l") |
		awk '{ t++; if ($1 == $2) s++ } END { printf "%.1f%%", 100 * s / t }')
fi

cat <<MD
## Symbolizer (core/symbols)

\`bash bench/symbols/run.sh BUILDDIR\` — random addresses over one process's
executable mappings (its program, libc with its separate debug file where
installed, libelf, ld.so, vDSO) and over the kernel's text.

| measure | tracerig symbolizer | binutils addr2line -f |
|---|---|---|
| cold: first $(val cold_user_lookups) user lookups (reads every object) | $(val cold_user_seconds) s | |
| user addresses resolved to a function | $(val user_resolved_pct)% | |
| warm user lookups/s, 1 thread | $(val warm_user_per_sec) | |
| warm user lookups/s, 2 threads sharing it | $(val warm_user_2threads_per_sec) | |
| cold: reading /proc/kallsyms | $(val cold_kallsyms_seconds) s | |
| warm kernel lookups/s | $(val warm_kernel_per_sec) | |
| $n libc addresses: lookups/s | $(val warm_user_per_sec) | $a2l_rate |
| same function as addr2line (which names inlined code by the inlined function) | | $a2l_agree |
MD

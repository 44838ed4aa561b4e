#!/usr/bin/env bash
# The encoders of the archive's large entries ([zip] deflate), side by side
# with Info-ZIP's zip (what perfcollect packs with) on the same files:
# perf.data and perf.data.txt of a 10 s system-wide tracerig recording at
# 999 Hz with frame-pointer callchains while bench/perf_events/spin.c keeps
# both CPUs busy, and perf.data of one with callchain = dwarf (8 KiB of
# user stack per sample).  Each file deflated whole, as the packaging does
# a tail or an entry it did not follow and as the streaming thread does
# while collecting (lib/zpiece.c through bench/deflate/zp.c), by zlib and
# by ISA-L at tracerig's `compression` levels 1, 6, 8 and 9, and by
# `zip -1/-6/-9`: CPU time (median of REPS runs) and the compressed size.
#   bash bench/deflate/run.sh [BUILDDIR]      (as root)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=bench/deflate
REPS=${REPS:-5}
. "$top/bench/perf_events/lib.sh"
grep -q '^#define HAVE_ISAL 1' "$build/config.h" ||
	{ echo "$bench: $build was configured without ISA-L (apt-get install libisal-dev)" >&2; exit 1; }
${CC:-cc} -O2 -g -fno-omit-frame-pointer -pthread -o "$tmp/spin" "$top/bench/perf_events/spin.c"
${CC:-cc} -O2 -I"$top" -I"$build" -o "$tmp/zp" "$top/bench/deflate/zp.c" "$top/lib/zpiece.c" \
	$(pkg-config --cflags --libs zlib libisal)

record() {
	"$tmp/spin" 2 1000000000000 >/dev/null &
	local busy=$!
	"$tracerig" -q -c "$top/conf/profiles/cpu.ini" --set perf_events.frequency=999 -d 10 \
		--set perf_events.callchain="$1" -o "$tmp/$1.trace.zip" >/dev/null 2>&1
	kill "$busy"
	wait "$busy" 2>/dev/null || true
	mkdir -p "$tmp/$1"
	unzip -q -o "$tmp/$1.trace.zip" perf.data perf.data.txt -d "$tmp/$1"
}
record fp
record dwarf
files="fp/perf.data fp/perf.data.txt dwarf/perf.data"

# cpu_us CMD...: the command's CPU time in microseconds, as perf stat's
# task-clock counts it from the exec (finer than time(1)'s 10 ms).
cpu_us() {
	perf stat -x, -e task-clock -o "$tmp/stat" -- "$@" &&
		awk -F, '$3 == "task-clock" { printf "%d", $1 * 1000 }' "$tmp/stat"
}

# One file, one encoder: "cpu_us bytes" per run into $tmp/r-ENC-LEVEL-FILE.
for _ in $(seq "$REPS"); do
	for f in $files; do
		key=${f//\//-}
		for level in 1 6 8 9; do
			"$tmp/zp" "$tmp/$f" "$level" >>"$tmp/r-zlib-$level-$key"
			"$tmp/zp" "$tmp/$f" "$level" fast >>"$tmp/r-isal-$level-$key"
			rm -f "$tmp/z.zip"
			echo "$(cpu_us zip -q -j -"$level" "$tmp/z.zip" "$tmp/$f") \
$(unzip -Zv "$tmp/z.zip" | awk '/compressed size:/ { print $3; exit }')" >>"$tmp/r-zip-$level-$key"
		done
	done
done

echo "## Deflating the archive's large entries: ISA-L, zlib and zip"
echo
echo "Reproduce: \`bash bench/run.sh deflate\` (or \`bash bench/deflate/run.sh BUILDDIR\`), as root."
echo "The files of two 10 s system-wide recordings at 999 Hz while both CPUs spin"
echo "(bench/perf_events/spin.c): \`callchain = fp\` (perf.data, perf.data.txt) and"
echo "\`callchain = dwarf\` (perf.data with 8 KiB of user stack per sample).  Each deflated"
echo "whole by lib/zpiece.c (bench/deflate/zp.c), as tracerig's streaming thread and packaging"
echo "do, with \`[zip] deflate = zlib\` and \`= isal\` (ISA-L's level 1 for \`compression\` 1 to 6, 2 for 7 and 8, 3 for 9),"
echo "and by Info-ZIP's \`zip -1/-6/-9\` (what perfcollect packs with); CPU time, median of $REPS runs."
echo
echo "| file | size (KiB) | level | zip: ms, % of size | tracerig zlib: ms, % | tracerig ISA-L: ms, % | ISA-L faster than zlib |"
echo "|---|---|---|---|---|---|---|"
for f in $files; do
	key=${f//\//-}
	size=$(stat -c %s "$tmp/$f")
	for level in 1 6 8 9; do
		cell() { awk -v us="$(med "r-$1-$level-$key" 1)" -v b="$(med "r-$1-$level-$key" 2)" -v s="$size" \
			'BEGIN { printf "%.1f ms, %.1f%%", us / 1000, 100 * b / s }'; }
		echo "| $f | $((size / 1024)) | $level | $(cell zip) | $(cell zlib) | $(cell isal) | $(awk \
			-v a="$(med "r-zlib-$level-$key" 1)" -v b="$(med "r-isal-$level-$key" 1)" \
			'BEGIN { printf "%.1fx", a / (b > 0 ? b : 1) }') |"
	done
done
echo
echo "The 1-minute load average on the $(nproc) CPUs was $load_start when the run started"
echo "and $(cut -d' ' -f1 /proc/loadavg) when it ended."

#!/usr/bin/env bash
# ebpf_oncpu benchmark: on-CPU samples with whole user stacks of code built
# without frame pointers, three ways, system-wide at 999 Hz, on the same
# fixed work (tests/ebpf/oncpu/burn.c built -O2 -fomit-frame-pointer: a
# qsort comparator and a spinning thread, through Debian's libc):
#   - perf record --call-graph dwarf -F 999 -a (8 KiB of stack copied per
#     sample into perf.data, unwound later by perf script);
#   - tracerig -c cpu-cfi (a BPF program on cpu-clock walks each sample's
#     user stack in the kernel by tables compiled from .eh_frame; samples
#     aggregated there);
#   - perf record -g -F 999 -a (frame pointers: what most code gives);
#   - nothing attached.
# Prints a Markdown section: bytes written (perf.data, the archive), the
# share of the workload's samples whose user stack reaches its start
# (_start or the thread start), and the work's wall-clock time (median of
# REPS runs, configurations in mirrored order).
#
#   bash bench/ebpf_oncpu/run.sh [BUILDDIR]      (as root; needs perf)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-${BUILD:-.}}" && pwd)
ROUNDS=${ROUNDS:-60}
REPS=${REPS:-3}
bench=bench/ebpf_oncpu
load=$(cut -d' ' -f1 /proc/loadavg)
. "$top/bench/ebpf/lib.sh"
command -v perf >/dev/null || { echo "$bench: needs perf" >&2; exit 1; }
${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o "$tmp/burn" "$top/tests/ebpf/oncpu/burn.c"
# Warm-up: a system-wide tracer loads the new process's tables meanwhile.
work() { "$tmp/burn" -n "$ROUNDS" -w 500 -t | sed -n 's/^work_ns //p' >>"$tmp/$1.ns"; }
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# whole_perf DATA: of burn's samples, "whole all" (user stack reaching
# _start or clone3, perf script's outermost frame).
whole_perf() {
	perf script -i "$1" --no-inline -F comm,ip,sym 2>/dev/null | awk '
	BEGIN { RS = "" }
	$1 == "burn" {
		n = split($0, l, "\n"); sym = l[n]; sub(/^[ \t]*[^ ]+ /, "", sym)
		all++
		if (sym ~ /^(_start|clone3)$/) whole++
	}
	END { print whole + 0, all + 0 }'
}
# whole_tracerig ARCHIVE: the same of oncpu.folded's burn lines.
whole_tracerig() {
	unzip -p "$1" oncpu.folded | awk '/^burn-/ {
		split($0, f, ";"); all += $NF
		if (f[3] ~ /^(_start|clone3)$/) whole += $NF
	} END { print whole + 0, all + 0 }'
}

n=0
run_config() {
	n=$((n + 1))
	case $1 in
	base) work base; return ;;
	dwarf | fp)
		local cg="--call-graph dwarf"
		[ "$1" = fp ] && cg=-g
		# shellcheck disable=SC2086 # the arguments are words
		perf record -q -a -F 999 $cg -o "$tmp/$1.$n.data" -- \
			"$tmp/burn" -n "$ROUNDS" -w 500 -t 2>/dev/null | sed -n 's/^work_ns //p' >>"$tmp/$1.ns"
		stat -c %s "$tmp/$1.$n.data" >>"$tmp/$1.bytes"
		whole_perf "$tmp/$1.$n.data" >>"$tmp/$1.whole"
		rm -f "$tmp/$1.$n.data" ;;
	cfi)
		"$tracerig" -c "$top/conf/profiles/cpu-cfi.ini" -d 600 -o "$tmp/cfi.$n.zip" >"$tmp/t.out" 2>&1 &
		tracer=$!
		wait_prog oncpu_sample
		# System-wide, the tables of every running process load first.
		sleep 2
		work cfi
		kill -INT "$tracer"
		wait "$tracer" || true
		tracer=""
		stat -c %s "$tmp/cfi.$n.zip" >>"$tmp/cfi.bytes"
		whole_tracerig "$tmp/cfi.$n.zip" >>"$tmp/cfi.whole" ;;
	esac
	sleep 1 # let the CPU settle before the next configuration
}

for c in base dwarf cfi fp fp cfi dwarf base; do
	for _ in $(seq "$REPS"); do run_config "$c"; done
done

base=$(median "$tmp/base.ns")
row() {
	local ns bytes share
	ns=$(median "$tmp/$1.ns")
	bytes=$(median "$tmp/$1.bytes")
	share=$(awk '{ w += $1; a += $2 } END { if (a) printf "%.1f %% of %d", 100 * w / a, a; else printf "?" }' \
		"$tmp/$1.whole")
	awk -v n="$2" -v ns="$ns" -v b="$base" -v by="$bytes" -v s="$share" 'BEGIN {
		printf "| %s | %.0f KiB | %s | %.3f s | %+.1f %% |\n", n, by / 1024, s, ns / 1e9,
			100 * (ns - b) / b }'
}
echo "## ebpf: on-CPU samples with whole stacks (oncpu = yes, callchain = cfi)"
echo
echo "A workload built \`-O2 -fomit-frame-pointer\` burns a fixed amount of CPU in a"
echo "qsort comparator (through Debian's libc, no frame pointers either), from main and"
echo "a thread, and in a thread's own chain ($ROUNDS rounds, about 1.5 s of CPU on"
echo "$(nproc) CPUs).  Every tool system-wide at 999 Hz; median of 2 x $REPS runs,"
echo "configurations in mirrored order."
echo
echo '    bash bench/ebpf_oncpu/run.sh'
echo
echo "| configuration | bytes written | workload samples reaching their start | work time | slowdown |"
echo "|---|---|---|---|---|"
echo "| no tracing | — | — | $(awk -v b="$base" 'BEGIN { printf "%.3f s", b / 1e9 }') | — |"
row dwarf "\`perf record --call-graph dwarf -F 999 -a\` (perf.data)"
row cfi "tracerig \`-c cpu-cfi\` (the archive, off-CPU and wall views included)"
row fp "\`perf record -g -F 999 -a\` (frame pointers; perf.data)"
echo
echo "perf.data holds every sample of the machine (with dwarf, 8 KiB of stack each);"
echo "the archive holds the samples aggregated by stack, named, as folded, SVG and"
echo "pprof.  The share counts the workload's samples whose outermost user frame is"
echo "\`_start\` or \`clone3\` (perf script's, oncpu.folded's).  The slowdown is the work's"
echo "wall-clock time against no tracing; the load average was $load when the run"
echo "started (other jobs on the machine make every row slower alike)."

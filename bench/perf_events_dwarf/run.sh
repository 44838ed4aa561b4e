#!/usr/bin/env bash
# perf_events callchain = dwarf, side by side in one run with `perf record
# --call-graph dwarf` + `perf script` on the same fixed-work workload
# (bench/perf_events_dwarf/work.c: qsort of libc calling back into a program
# built -O2 -fomit-frame-pointer), 999 Hz, 8192 bytes of stack per sample,
# the command launched by the tracer:
#   1. the workload's slowdown under each tracer (its own timing), its own
#      CPU time (the kernel's sampling, stack copies included, is charged
#      to it) and the tracer's CPU time while it ran (the workload reads
#      its parent's threads' schedstat before and after: what competes
#      with it for the CPUs; tracerig's at SCHED_IDLE apart);
#   2. bytes of perf.data written;
#   3. end of collection to a finished archive: tracerig's flush (every
#      sample's frames, unwound while collecting or else there, into
#      perf.data.txt, cpu.folded, cpu.svg) + packaging vs `perf script`
#      (which unwinds) + zip; at 4999 Hz also tracerig unwinding every
#      sample in its flush (unwind_queue_bytes = 0), as it did before;
#   4. the share of samples whose stack reaches main.
#
#   bash bench/perf_events_dwarf/run.sh [BUILDDIR]      (as root)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=bench/perf_events_dwarf
REPS=${REPS:-5}
BATCHES=${BATCHES:-3000}
. "$top/bench/perf_events/lib.sh"
${CC:-cc} -O2 -fomit-frame-pointer -o "$tmp/work" "$top/bench/perf_events_dwarf/work.c"
# perf's build-id cache of its own, not shared with other perf runs.
export PERF_BUILDID_DIR="$tmp/perf-buildids"
# perf record (run again when it aborts, see perf_record); -B skips its
# build-id pass, where perf 6.1 on this kernel aborts most.
record_perf() { # FREQ BATCHES
	perf_record perf record -q -B -F "$1" --call-graph dwarf,8192 -k 1 --sample-cpu -m 8M \
		-o "$tmp/p.data" -- "$tmp/work" "$2"
}
# perf script, timed: t0 and t1 around the attempt that succeeded.  It
# aborts on some recordings ("assertion failed at util/build-id.c"),
# every time: then perf records again (counted with perf record's aborts).
script_perf() {
	t0=$(now_ms)
	perf script -i "$tmp/p.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,dso \
		>"$tmp/perf.data.txt" 2>/dev/null && t1=$(now_ms)
}
record_and_script_perf() { # FREQ BATCHES
	local i
	for i in 1 2 3 4 5; do
		record_perf "$1" "$2" && script_perf && return 0
		perf_aborts=$((perf_aborts + 1))
	done
	return 1
}

# reach_main TXT: the percentage of the workload's samples (perf script
# text) with a frame named main.
reach_main() {
	python3 - "$1" <<'PY'
import sys
n = hit = 0
cur = None
for line in open(sys.argv[1], errors='replace'):
    if not line.strip():
        cur = None
    elif not line.startswith('\t'):
        cur = line.split()[0] == 'work'
        n += cur
    elif cur and line.split(' (')[0].split()[-1] == 'main':
        hit += 1
        cur = False
print(f"{hit * 100 / n:.1f}" if n else "0")
PY
}

# One run of each; appends "workload_ms post_ms bytes samples reach_main%
# workload_cpu_ms tracer_cpu_ms" (tracerig: then its CPU at SCHED_IDLE;
# perf: then perf script's ms).
run_base() { "$tmp/work" "$BATCHES" | cut -d' ' -f1,3 >>"$tmp/base"; }
run_tracerig() {
	local w end after bytes n cpu tcpu tidle
	WORK_THREADS=1 "$tracerig" -q -c "$top/conf/profiles/cpu-dwarf.ini" -o "$tmp/t.trace.zip" \
		-- "$tmp/work" "$BATCHES" >"$tmp/w" 2>"$tmp/t.err"
	after=$("$tmp/work" now)
	read -r w end cpu tcpu tidle <"$tmp/w"
	# Each of tracerig's threads (by name) while the workload ran: one
	# line per run, "name ms" pairs, summed over threads of one name.
	awk '/^thread [0-9]+ / { sub(/:$/, "", $3); ms[$3] += $(NF - 1) }
	     END { for (n in ms) printf "%s %.1f ", n, ms[n]; print "" }' "$tmp/t.err" >>"$tmp/threads"
	rm -rf "$tmp/t" && mkdir "$tmp/t" && unzip -q "$tmp/t.trace.zip" -d "$tmp/t"
	bytes=$(stat -c %s "$tmp/t/perf.data")
	n=$(grep -c ' cpu-clock: ' "$tmp/t/perf.data.txt" || true)
	echo "$w $(awk -v a="$after" -v e="$end" 'BEGIN { printf "%d", a - e }') $bytes $n" \
		"$(reach_main "$tmp/t/perf.data.txt") $cpu $tcpu $tidle" >>"$tmp/tracerig"
}
run_perf() {
	local w t0 t1 t2 bytes n cpu pcpu
	record_and_script_perf 999 "$BATCHES"
	read -r w _ cpu pcpu _ <"$tmp/w"
	bytes=$(stat -c %s "$tmp/p.data")
	(cd "$tmp" && zip -q -j "$tmp/p.zip" "$tmp/perf.data.txt" "$tmp/p.data")
	t2=$(now_ms)
	rm -f "$tmp/p.zip"
	n=$(grep -c ' cpu-clock:' "$tmp/perf.data.txt" || true)
	echo "$w $((t2 - t0)) $bytes $n $(reach_main "$tmp/perf.data.txt") $cpu $pcpu" \
		"$((t1 - t0))" >>"$tmp/perf"
}
for _ in $(seq "$REPS"); do
	run_base; run_tracerig; run_perf; run_perf; run_tracerig; run_base
done
# At scale: 4999 Hz on twice the work (several thousand samples, tens of
# MiB of stack copies), where unwinding is what the conversion spends.
big_tracerig() { # FILE [OPTIONS...]: appends "post conv samples while_collecting its_cpu_ms"
	local end after file=$1
	shift
	"$tracerig" -q -c "$top/conf/profiles/cpu-dwarf.ini" --set perf_events.frequency=4999 \
		--set perf_events.ring_pages=2048 "$@" -o "$tmp/b.trace.zip" -- "$tmp/work" \
		$((BATCHES * 2)) >"$tmp/w" 2>/dev/null
	after=$("$tmp/work" now)
	read -r _ end _ <"$tmp/w"
	echo "$(flush_times "$tmp/b.trace.zip" "$after" "$end")" \
		"$(unzip -p "$tmp/b.trace.zip" tracerig.log |
			awk '/ samples unwound while collecting/ { print $4, $(NF - 3) }')" >>"$tmp/$file"
}
big_perf() {
	local t0 t1
	record_and_script_perf 4999 $((BATCHES * 2))
	zip_perf "$t0" "$t1" big-perf
}
for _ in 1 2 3; do
	big_tracerig big-tracerig
	big_perf
	big_tracerig big-flush --set perf_events.unwind_queue_bytes=0
done
base=$(med base 1) base_cpu=$(med base 2)
tr_w=$(med tracerig 1) tr_post=$(med tracerig 2) tr_bytes=$(med tracerig 3) tr_n=$(med tracerig 4) tr_main=$(med tracerig 5)
tr_cpu=$(med tracerig 6) tr_tcpu=$(med tracerig 7) tr_tidle=$(med tracerig 8)
pf_w=$(med perf 1) pf_post=$(med perf 2) pf_bytes=$(med perf 3) pf_n=$(med perf 4) pf_main=$(med perf 5)
pf_cpu=$(med perf 6) pf_pcpu=$(med perf 7) pf_script=$(med perf 8)

bt_post=$(med big-tracerig 1) bt_conv=$(med big-tracerig 2) bt_n=$(med big-tracerig 3)
bt_bg=$(med big-tracerig 4) bt_bg_cpu=$(med big-tracerig 5)
bf_post=$(med big-flush 1) bf_conv=$(med big-flush 2) bf_n=$(med big-flush 3)
bp_post=$(med big-perf 1) bp_conv=$(med big-perf 2) bp_n=$(med big-perf 3)

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

echo "## perf_events callchain = dwarf: sampling cost, bytes, time to archive, whole stacks"
echo
echo "A fixed amount of CPU work through libc's qsort calling back into a program"
echo "built \`-O2 -fomit-frame-pointer\` (bench/perf_events_dwarf/work.c), launched"
echo "by the tracer, sampled with cpu-clock at 999 Hz with DWARF callchains (user"
echo "registers + 8192 bytes of user stack per sample, kernel frames from the"
echo "kernel); tracerig with \`-c cpu-dwarf\`, perf with \`--call-graph dwarf,8192\`;"
echo "median of 2 x $REPS runs of each, configurations interleaved."
echo
echo '    bash bench/perf_events_dwarf/run.sh'
echo
echo "| | no tracing | tracerig \`-c cpu-dwarf\` | \`perf record --call-graph dwarf\` + \`perf script\` |"
echo "|---|---|---|---|"
echo "| workload time (ms) | $base | $tr_w ($(pct "$tr_w")) | $pf_w ($(pct "$pf_w")) |"
echo "| workload CPU time (ms) | $base_cpu | $tr_cpu | $pf_cpu |"
echo "| the tracer's CPU time while the workload ran (ms) | | $tr_tcpu ($tr_tidle of it at SCHED_IDLE) | $pf_pcpu |"
echo "| samples | | $tr_n | $pf_n |"
echo "| perf.data written | | $(mib "$tr_bytes") | $(mib "$pf_bytes") |"
echo "| end of collection to archive (ms) | | $tr_post | $pf_post (\`perf script\` alone: $pf_script) |"
echo "| samples whose stack reaches main | | $tr_main% | $pf_main% |"
echo
echo "tracerig's CPU time while the workload ran, by thread (median over its runs):"
echo
echo "| thread | ms | what it does |"
echo "|---|---|---|"
python3 - "$tmp/threads" <<'PY'
import statistics, sys
runs = [dict(zip(l.split()[::2], map(float, l.split()[1::2]))) for l in open(sys.argv[1]) if l.strip()]
what = {
    'tr-perf-rings': 'drains the perf rings into perf.data and the unwinding queue',
    'tr-perf-unwind': 'unwinds the queued samples (SCHED_IDLE while collecting)',
    'tr-deflate': 'deflates perf.data as it grows (nice 19 while collecting)',
    'tr-remember': 'reads new processes\' mappings and objects while they live',
    'tr-mapharvest': 'looks for JIT maps of the traced processes',
}
for name in sorted({n for r in runs for n in r}, key=lambda n: -statistics.median(r.get(n, 0) for r in runs)):
    med = statistics.median(r.get(name, 0) for r in runs)
    if med >= 0.05:
        print(f"| {name} | {med:.1f} | {what.get(name, '')} |")
PY
echo
echo "The workload's CPU time includes what the kernel spends sampling it (the"
echo "stack copies); the tracer's CPU time while it ran is what competes with it"
echo "for the CPUs once the machine is busy.  tracerig's unwinding thread runs at"
echo "SCHED_IDLE while collecting (only CPU time nobody else wants; what it did not"
echo "get to, it unwinds at normal priority once the workload is done)."
echo
echo "At 4999 Hz on twice the work (median of 3 runs each; the conversion is timed from"
echo "perf_events' \"flushing\" log line to its summary, cpu.folded and cpu.svg are"
echo "written after):"
echo
echo "| | tracerig | tracerig, \`unwind_queue_bytes = 0\` | perf script + zip |"
echo "|---|---|---|---|"
echo "| samples | $bt_n ($bt_bg unwound while collecting) | $bf_n (all unwound in the flush) | $bp_n |"
echo "| samples unwound into perf.data.txt (ms) | $bt_conv (perf_events' conversion in its flush) | $bf_conv | $bp_conv (\`perf script\`) |"
echo "| end of collection to archive (ms) | $bt_post | $bf_post | $bp_post |"
echo "| CPU of the unwinding thread while collecting (ms) | $bt_bg_cpu | | |"
echo
echo "\"End of collection to archive\" is, for tracerig, the time from the workload's"
echo "exit to tracerig's: perf.data finished, every sample's user stack unwound"
echo "(libdwfl, one Dwfl per process kept across its samples; by default while"
echo "collecting, in a thread of its own fed by a bounded queue, the conversion"
echo "adopting those frames after checking each object they depended on) and"
echo "written as perf.data.txt, cpu.folded and cpu.svg, the .trace.zip compressed; for perf,"
echo "\`perf script -F comm,pid,tid,cpu,time,period,event,ip,sym,dso\` (which unwinds"
echo "every sample) followed by \`zip\` of perf.data and its text.  tracerig deflates"
echo "perf.data while it grows (\`[tracerig] stream\`): packaging has only its tail left."
say_load

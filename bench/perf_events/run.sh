#!/usr/bin/env bash
# perf_events benchmark, side by side in one run with `perf record` on the
# same fixed-work workload (bench/perf_events/spin.c, 2 threads), same
# frequency (999 Hz) and callchains (frame pointers), the command launched
# by the tracer:
#   1. the workload's slowdown under each tracer (its own timing);
#   2. time from the end of collection to a finished archive: tracerig's
#      flush + packaging vs `perf script` (perfcollect's fields) + zip;
#   3. lost samples and peak RSS of each tracer.
#
#   bash bench/perf_events/run.sh [BUILDDIR]      (as root)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=bench/perf_events
REPS=${REPS:-5}
ITER=${ITER:-2000000000}
. "$top/bench/perf_events/lib.sh"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -pthread -o "$tmp/spin" "$top/bench/perf_events/spin.c"

# One run of each configuration; appends "workload_ms rss_kb post_ms lost samples".
run_base() { "$tmp/spin" 2 "$ITER" >>"$tmp/base"; }
run_tracerig() {
	local w end cpu after
	/usr/bin/time -f '%M %U %S' -o "$tmp/rss" "$tracerig" -q -c "$top/conf/profiles/cpu.ini" \
		--set perf_events.frequency=999 -o "$tmp/t.trace.zip" -- "$tmp/spin" 2 "$ITER" >"$tmp/w" 2>"$tmp/t.err"
	after=$("$tmp/spin" now)
	read -r w end cpu <"$tmp/w"
	unzip -p "$tmp/t.trace.zip" manifest.json >"$tmp/m.json"
	python3 - "$tmp/m.json" "$w" "$(cat "$tmp/rss")" "$end" "$after" "$cpu" >>"$tmp/tracerig" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
w, end, after, cpu = float(sys.argv[2]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
rss, utime, stime = sys.argv[3].split()
c = [p for p in m["plugins"] if p["name"] == "perf_events"][0]["counters"]
# Collection ends when the command exits; the rest is flush + packaging.
# The tracer's own CPU: all of it and its children's, less the workload's.
own = (float(utime) + float(stime)) * 1000 - cpu
print(w, rss, round(after - end), c["lost_samples"], c["samples"], round(own))
PY
}
run_perf() {
	local w t0 t1 lost n cpu own
	perf_record /usr/bin/time -f '%M %U %S' -o "$tmp/rss" perf record -q -F 999 -g -k 1 --sample-cpu \
		-o "$tmp/p.data" -- "$tmp/spin" 2 "$ITER"
	read -r w _ cpu <"$tmp/w"
	own=$(awk -v c="$cpu" '{ printf "%d", ($2 + $3) * 1000 - c }' "$tmp/rss")
	t0=$(now_ms)
	perf script -i "$tmp/p.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,dso >"$tmp/perf.data.txt" 2>/dev/null
	(cd "$tmp" && zip -q -j "$tmp/p.zip" "$tmp/perf.data.txt" "$tmp/p.data")
	t1=$(now_ms)
	rm -f "$tmp/p.zip"
	lost=$(perf report -i "$tmp/p.data" --stats 2>/dev/null | awk '/LOST_SAMPLES|LOST events/ { s += $NF } END { print s + 0 }')
	n=$(grep -c ' cpu-clock' "$tmp/perf.data.txt" || true)
	echo "$w $(cut -d' ' -f1 "$tmp/rss") $((t1 - t0)) $lost $n $own" >>"$tmp/perf"
}
for _ in $(seq "$REPS"); do
	run_base; run_tracerig; run_perf; run_perf; run_tracerig; run_base
done
base=$(med base 1)
tr_w=$(med tracerig 1) tr_rss=$(med tracerig 2) tr_post=$(med tracerig 3) tr_lost=$(med tracerig 4) tr_n=$(med tracerig 5) tr_cpu=$(med tracerig 6)
pf_w=$(med perf 1) pf_rss=$(med perf 2) pf_post=$(med perf 3) pf_lost=$(med perf 4) pf_n=$(med perf 5) pf_cpu=$(med perf 6)
# At scale: 19999 Hz on the same work (a few hundred thousand samples),
# where converting and compressing the samples is what takes the time.
big_tracerig() {
	local end after
	"$tracerig" -q -c "$top/conf/profiles/cpu.ini" --set perf_events.frequency=19999 \
		-o "$tmp/b.trace.zip" -- "$tmp/spin" 2 "$ITER" >"$tmp/w" 2>/dev/null
	after=$("$tmp/spin" now)
	read -r _ end _ <"$tmp/w"
	flush_times "$tmp/b.trace.zip" "$after" "$end" >>"$tmp/big-tracerig"
}
big_perf() {
	local t0 t1
	perf_record perf record -q -F 19999 -g -k 1 --sample-cpu -o "$tmp/p.data" -- "$tmp/spin" 2 "$ITER"
	t0=$(now_ms)
	perf script -i "$tmp/p.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,dso >"$tmp/perf.data.txt" 2>/dev/null
	t1=$(now_ms)
	zip_perf "$t0" "$t1" big-perf
}
for _ in 1 2 3; do big_tracerig; big_perf; done
bt_post=$(med big-tracerig 1) bt_conv=$(med big-tracerig 2) bt_n=$(med big-tracerig 3)
bp_post=$(med big-perf 1) bp_conv=$(med big-perf 2) bp_n=$(med big-perf 3)


echo "## perf_events: sampling cost, time to a finished archive, memory"
echo
echo "A fixed amount of CPU work in 2 threads (bench/perf_events/spin.c), launched"
echo "by the tracer, sampled with cpu-clock at 999 Hz with frame-pointer callchains"
echo "(kernel + user); median of 2 x $REPS runs of each, configurations interleaved."
echo
echo '    bash bench/perf_events/run.sh'
echo
echo "| | no tracing | tracerig \`-c cpu\` | \`perf record -F 999 -g\` |"
echo "|---|---|---|---|"
echo "| workload time (ms) | $base | $tr_w ($(pct "$tr_w")) | $pf_w ($(pct "$pf_w")) |"
echo "| CPU time of the tracer while collecting and packaging (ms) | | $tr_cpu | $pf_cpu (record only) |"
echo "| samples | | $tr_n | $pf_n |"
echo "| lost samples | | $tr_lost | $pf_lost |"
echo "| peak RSS of the tracer (KiB) | | $tr_rss | $pf_rss |"
echo "| end of collection to archive (ms) | | $tr_post | $pf_post |"
echo
echo "At 19999 Hz on the same work (median of 3 runs each):"
echo
echo "| | tracerig | perf script + zip |"
echo "|---|---|---|"
echo "| samples | $bt_n | $bp_n |"
echo "| samples to perf.data.txt (ms) | $bt_conv (and the folded stacks) | $bp_conv (\`perf script\`) |"
echo "| end of collection to archive (ms) | $bt_post | $bp_post |"
echo
echo "\"Samples to perf.data.txt\" is, for tracerig, perf_events' conversion in its flush"
echo "(from its \"flushing\" log line to its summary; cpu.folded and cpu.svg are written"
echo "after), for perf the whole \`perf script\` run; each on its own recording."
echo "\"End of collection to archive\" is, for tracerig, the time from the workload's"
echo "exit to tracerig's (perf.data finished; perf.data.txt, cpu.folded and cpu.svg"
echo "symbolized and written; the .trace.zip compressed);"
echo "for perf, \`perf script -F comm,pid,tid,cpu,time,period,event,ip,sym,dso\`"
echo "(perfcollect's conversion) followed by \`zip\` of perf.data and its text."
say_load

#!/usr/bin/env bash
# Memory of a long system-wide record session (issue 27), side by side in
# one run with `perf record -a -g` on the same load: a compile loop
# (bench/memory/load.sh: gcc -O2 of a small file and a run of what it
# built, JOBS at a time), new short-lived processes every second, the
# worst case for what a recorder keeps per process.  Both record the whole
# machine at 999 Hz with frame-pointer callchains (cpu.ini's settings) from
# the same moment; the resident memory of each (VmRSS, and VmHWM, its peak
# so far, from /proc/PID/status) is read every 10 s and reported at each
# checkpoint, then both are stopped (SIGTERM, SIGINT) and the peak up to
# their exit is read too.
#
#   bash bench/memory/run.sh [BUILDDIR]                 (as root)
#   MEM_MINUTES=1,2,3 bash bench/memory/run.sh           (a quick run)
#   MEM_OUT=DIR keeps the 10-second samples (DIR/rss.tsv) and the logs.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=bench/memory
MINUTES=${MEM_MINUTES:-1,10,30}
JOBS=${JOBS:-2}
. "$top/bench/perf_events/lib.sh"
out=${MEM_OUT:-$tmp}
mkdir -p "$out"
IFS=, read -r -a marks <<<"$MINUTES"
last=${marks[-1]}

# status PID: "VmRSS VmHWM" in KiB, or "- -" once it is gone.
status() {
	awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { if (r == "") print "- -"; else print r, h }' \
		"/proc/$1/status" 2>/dev/null || echo "- -"
}

setsid bash "$top/bench/memory/load.sh" "$JOBS" >/dev/null 2>&1 &
load=$!
sleep 5 # the loop at its pace before both start
"$tracerig" -c "$top/conf/profiles/cpu.ini" -d $((last * 60 + 600)) -o "$out/t.trace.zip" \
	>"$out/tracerig.out" 2>&1 </dev/null &
tr=$!
(cd "$tmp" && exec perf record -q -a -g -F 999 -B -o "$tmp/p.data") >"$out/perf.out" 2>&1 </dev/null &
pf=$!
cleanup() {
	kill -- -"$load" 2>/dev/null || true
	kill "$tr" "$pf" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
t0=$(date +%s)
printf 'seconds\ttracerig_rss_kb\ttracerig_hwm_kb\tperf_rss_kb\tperf_hwm_kb\n' >"$out/rss.tsv"
: >"$out/marks"
next=0
while [ "$next" -lt "${#marks[@]}" ]; do
	sleep 10
	s=$(($(date +%s) - t0))
	read -r trr trh <<<"$(status "$tr")"
	read -r pfr pfh <<<"$(status "$pf")"
	printf '%s\t%s\t%s\t%s\t%s\n' "$s" "$trr" "$trh" "$pfr" "$pfh" >>"$out/rss.tsv"
	while [ "$next" -lt "${#marks[@]}" ] && [ "$s" -ge $((marks[next] * 60)) ]; do
		echo "${marks[next]} $trr $trh $pfr $pfh" >>"$out/marks"
		next=$((next + 1))
	done
done
kill -- -"$load" 2>/dev/null || true
# Both stop together; each one's peak up to its exit (flush, packaging,
# perf's build-id pass) is the last VmHWM read before it went.
kill -TERM "$tr" 2>/dev/null || true
kill -INT "$pf" 2>/dev/null || true
end_tr=- end_pf=-
while kill -0 "$tr" 2>/dev/null || kill -0 "$pf" 2>/dev/null; do
	read -r _ h <<<"$(status "$tr")"
	[ "$h" = - ] || end_tr=$h
	read -r _ h <<<"$(status "$pf")"
	[ "$h" = - ] || end_pf=$h
	sleep 0.5
done
wait "$tr" 2>/dev/null || true
wait "$pf" 2>/dev/null || true
samples=$(unzip -p "$out/t.trace.zip" manifest.json 2>/dev/null | python3 -c '
import json, sys
m = json.load(sys.stdin)
c = [p for p in m["plugins"] if p["name"] == "perf_events"][0]["counters"]
print(c["samples"], c["lost_samples"])' 2>/dev/null || echo "? ?")
read -r tr_n tr_lost <<<"$samples"
pf_n=$(perf report -i "$tmp/p.data" --stats 2>/dev/null | awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }')
mib() { [ "$1" = - ] && echo - || awk -v k="$1" 'BEGIN { printf "%.0f MiB", k / 1024 }'; }
# What the views hold at the end: cpu.folded's lines and bytes, cpu.pb.gz's
# samples, and the processes the conversion saw end.
views=$(unzip -p "$out/t.trace.zip" manifest.json 2>/dev/null | python3 -c '
import json, sys
e = {x["name"]: x for x in json.load(sys.stdin).get("files", [])}
print(e.get("cpu.folded", {}).get("size", 0), e.get("cpu.pb.gz", {}).get("pprof", {}).get("samples", "?"))
' 2>/dev/null || echo "0 ?")
ended=$(unzip -p "$out/t.trace.zip" tracerig.log 2>/dev/null |
	sed -n 's/.*conversion: \([0-9]*\) processes ended.*/\1/p' | tail -1)
read -r folded_bytes pb_samples <<<"$views"
folded_lines=$(unzip -p "$out/t.trace.zip" cpu.folded 2>/dev/null | wc -l)

echo "## memory: a long system-wide record session beside a compile loop"
echo
echo "\`tracerig -c profiles/cpu.ini\` (whole machine, 999 Hz, frame pointers) and"
echo "\`perf record -a -g -F 999 -B\` (-B: its build-id pass at the end aborts on this machine),"
echo "started together beside \`bench/memory/load.sh $JOBS\`"
echo "(gcc -O2 of a small file and a run of it, $JOBS at a time, in a loop: new"
echo "PIDs every second, about 20 processes per compile).  Resident memory of"
echo "each recorder's process from /proc/PID/status: VmRSS at the checkpoint and"
echo "VmHWM, its peak so far."
echo
echo "| after | tracerig VmRSS | tracerig VmHWM | perf record VmRSS | perf record VmHWM |"
echo "|---|---|---|---|---|"
while read -r m a b c d; do
	echo "| $m min | $(mib "$a") | $(mib "$b") | $(mib "$c") | $(mib "$d") |"
done <"$out/marks"
echo "| stop to exit (peak) | | $(mib "$end_tr") | | $(mib "$end_pf") |"
echo
echo "Samples: tracerig ${tr_n:-?} (${tr_lost:-?} lost), perf record ${pf_n:-?}."
echo "tracerig's views at the end: cpu.folded $folded_lines lines ($(mib $((folded_bytes / 1024)))),"
echo "cpu.pb.gz ${pb_samples:-?} samples; ${ended:-?} processes ended during the session."
echo
echo "What tracerig keeps per process (the symbolizer's mappings, JIT symbols and"
echo "frame names, perf_events' frame texts) goes 1 s (of the recording's time)"
echo "after the process's last thread exited.  cpu.folded's distinct"
echo "\`comm-PID;tcomm-TID;stack\` lines and cpu.pb.gz's samples (labelled pid"
echo "and tid), which grow with every process (every compile is new PIDs), each"
echo "stay in memory up to [perf_events] view_memory (64 MiB), then go to the"
echo "staging directory (the lines as sorted runs merged at the flush, the"
echo "samples encoded and appended to the profile).  The profile's mappings"
echo "and locations are kept once per object's bytes, whatever address each"
echo "process maps them at, and a frame in nothing mapped is one location per"
echo "name; what is still per process in them is JIT code and anonymous"
echo "memory.  perf record writes its samples to perf.data as they come and"
echo "keeps only its thread table."
echo
echo "Every 10 s: \`rss.tsv\` under \`MEM_OUT\`."
echo
echo "Rerun: \`MEM_MINUTES=$MINUTES bash bench/run.sh memory\` (a quick one: \`MEM_MINUTES=1,2,3\`)."
say_load

#!/usr/bin/env bash
# Flight mode and end of collection, side by side in one run with perf on
# the same fixed CPU workload (bench/perf_events/spin.c, 2 threads),
# system-wide at 999 Hz with frame-pointer callchains, configurations
# interleaved, medians:
#   1. flight recorders: tracerig `mode = flight, window = 10s` vs
#      `perf record --overwrite --switch-output=signal` (perf's flight
#      recorder: overwritable ring buffers, dumped on SIGUSR2), running
#      while the workload runs: the workload's slowdown vs untraced, the
#      tracer's CPU, its peak disk (staging / perf's output directory,
#      sampled every 0.5 s) and RSS, then the time from the trigger
#      (SIGUSR1, SIGUSR2) to a finished file (tracerig: the snapshot
#      archive; perf: the switched perf.data, then `perf script` of it,
#      then zip of both);
#   2. end of collection to a finished archive of a recording (`-c cpu`,
#      system-wide, `-d D`) vs `perf record -a` + `perf script` + zip, for
#      sessions of DURATIONS seconds while the workload keeps both CPUs busy
#      (during the tracers' packaging too, as on a production machine).
#
#   bash bench/flight/run.sh [BUILDDIR]      (as root)
#
# Environment (defaults fit in ~20 minutes on 2 CPUs):
#   FLIGHT_REPS=3       runs of each flight configuration (and of untraced)
#   FLIGHT_ITER=10e9    spin.c iterations per thread (~16 s untraced when
#                       idle, 30 s and more when the machine is shared)
#   WINDOW=10           tracerig's window (s)
#   PERF_MMAP=4M        perf's ring buffer per CPU (-m): enough for WINDOW
#                       seconds of samples at 999 Hz (reported: the span
#                       the dump covers)
#   DURATIONS="10 60"   recording sessions (s); "10 60 300" takes ~45 min
#   RECORD_REPS=3       runs of each tool per duration
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=bench/flight
FLIGHT_REPS=${FLIGHT_REPS:-3}
FLIGHT_ITER=${FLIGHT_ITER:-10000000000}
FLIGHT_ITER=$(python3 -c "print(int(float('$FLIGHT_ITER')))")
WINDOW=${WINDOW:-10}
PERF_MMAP=${PERF_MMAP:-4M}
DURATIONS=${DURATIONS:-10 60}
RECORD_REPS=${RECORD_REPS:-3}
. "$top/bench/perf_events/lib.sh"
command -v zip >/dev/null || { echo "$bench: needs zip" >&2; exit 1; }
${CC:-cc} -O2 -g -fno-omit-frame-pointer -pthread -o "$tmp/spin" "$top/bench/perf_events/spin.c"
py() { python3 "$top/bench/flight/trigger.py" "$@"; }
profile=$top/conf/profiles/cpu.ini
fields=comm,pid,tid,cpu,time,period,event,ip,sym,dso
# Stock perf sometimes aborts on this machine (util/build-id.c:1010):
# counted separately for record and script, said with the figures.
record_aborts=0 script_aborts=0

# perf_script IN OUT: perf script with perfcollect's fields, run again when
# it aborts; twice at most: it tends to abort again on the same file, whose
# recording is then made again.
perf_script() {
	local i
	for i in 1 2; do
		if perf script -i "$1" -F "$fields" >"$2" 2>"$tmp/ps.err"; then return 0; fi
		script_aborts=$((script_aborts + 1))
		echo "$bench: perf script failed: $(tail -n 2 "$tmp/ps.err" | tr '\n' ' ')" >&2
	done
	return 1
}
# span TEXT: samples in a perf script output and the seconds they span.
span() {
	awk '/ cpu-clock/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i + 0; break }
		if (!n++) a = t; b = t } END { printf "%d %.1f\n", n, n ? b - a : 0 }' "$1"
}
# ready LOG_GLOB: waits (10 s at most) for tracerig's "collecting" line.
ready_tracerig() {
	local i
	for i in $(seq 100); do
		grep -qs ' collecting' "$1"/*/tracerig.log && return 0
		sleep 0.1
	done
	return 1
}
# peak FILE COLUMN [BEFORE_MS]: the highest value of COLUMN among the
# sampler's lines taken before BEFORE_MS.
peak() { awk -v c="$2" -v b="${3:-0}" '(!b || $1 < b) && $c > m { m = $c } END { print m + 0 }' "$1"; }

# 1. Flight recorders.  Each appends "workload_ms tracer_cpu_ms
# peak_disk_kib peak_rss_kib trigger_to_file_ms to_script_ms to_zip_ms
# samples span_s archive_kib workload_cpu_ms"; untraced, "workload_ms
# workload_cpu_ms".
flight_base() { "$tmp/spin" 2 "$FLIGHT_ITER" | cut -d' ' -f1,3 >>"$tmp/f-base"; }
flight_tracerig() {
	local d=$tmp/ft pid sp c0 c1 w wc t ms file
	rm -rf "$d" && mkdir -p "$d/stage" "$d/out"
	TMPDIR=$d/stage "$tracerig" -q -c "$profile" --set tracerig.mode=flight \
		--set "tracerig.window=${WINDOW}s" --set perf_events.frequency=999 -o "$d/out" 2>"$d/err" &
	pid=$!
	ready_tracerig "$d/stage" || { echo "$bench: tracerig did not start: $(cat "$d/err")" >&2; return 1; }
	python3 "$top/bench/flight/trigger.py" sample "$d/du" "$pid" "$d/stage" &
	sp=$!
	c0=$(py cpu "$pid")
	read -r w _ wc <<<"$("$tmp/spin" 2 "$FLIGHT_ITER")"
	c1=$(py cpu "$pid")
	t=$("$tmp/spin" now)
	read -r ms file _ <<<"$(py fire "$pid" SIGUSR1 "$d/out" cpu-)"
	kill "$sp"; wait "$sp" || true
	kill -INT "$pid"; wait "$pid" || echo "$bench: tracerig exited with $?" >&2
	unzip -p "$file" manifest.json >"$d/m.json"
	python3 - "$d/m.json" "$w" "$((c1 - c0))" "$(peak "$d/du" 2 "${t%.*}")" "$(peak "$d/du" 3)" \
		"$ms" "$(($(stat -c %s "$file") / 1024))" "$wc" >>"$tmp/f-tracerig" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
w, cpu, disk, rss, ms, size, wc = sys.argv[2:]
c = [p for p in m["plugins"] if p["name"] == "perf_events"][0]["counters"]
# An archive is as viewable as it gets: trigger to file = to script = to zip.
n = c.get("snapshot_samples", c.get("samples", "?"))
print(w, cpu, int(disk) // 1024, rss, ms, ms, ms, n, m["flight"]["duration_ms"] / 1000, size, wc)
PY
}
flight_perf() {
	local d=$tmp/fp pid sp c0 c1 w wc t ms file ts t1 t2 n s rc
	rm -rf "$d" && mkdir -p "$d/out"
	(cd "$d/out" && exec perf record -q -F 999 -g -a --overwrite --switch-output=signal \
		-m "$PERF_MMAP" -o "$d/out/perf.data" 2>"$d/err") &
	pid=$!
	sleep 1
	python3 "$top/bench/flight/trigger.py" sample "$d/du" "$pid" "$d/out" &
	sp=$!
	c0=$(py cpu "$pid")
	read -r w _ wc <<<"$("$tmp/spin" 2 "$FLIGHT_ITER")"
	c1=$(py cpu "$pid")
	t=$("$tmp/spin" now)
	if ! kill -0 "$pid" 2>/dev/null || ! read -r ms file ts <<<"$(py fire "$pid" SIGUSR2 "$d/out" perf.data.)"; then
		kill "$sp"; wait "$sp" || true
		wait "$pid" || true
		record_aborts=$((record_aborts + 1))
		echo "$bench: perf record (flight) failed: $(tail -n 2 "$d/err" | tr '\n' ' ')" >&2
		return 2
	fi
	kill "$sp"; wait "$sp" || true
	# What a user does next: read the dump (perf script), zip it to send.
	if ! perf_script "$file" "$d/perf.data.txt"; then
		kill -INT "$pid"; wait "$pid" || true
		return 2
	fi
	t1=$("$tmp/spin" now)
	zip -q -j "$d/p.zip" "$d/perf.data.txt" "$file"
	t2=$("$tmp/spin" now)
	kill -INT "$pid"
	rc=0; wait "$pid" || rc=$?
	# 130: perf re-raises the SIGINT it stopped on; 134 (SIGABRT), 139...
	if [ "$rc" -gt 128 ] && [ "$rc" != 130 ]; then
		record_aborts=$((record_aborts + 1))
		echo "$bench: perf record (flight) died at its stop ($rc): $(tail -n 2 "$d/err" | tr '\n' ' ')" >&2
	fi
	read -r n s <<<"$(span "$d/perf.data.txt")"
	# The sampler's clock is CLOCK_MONOTONIC ms, as spin's.
	echo "$w $((c1 - c0)) $(($(peak "$d/du" 2 "${t%.*}") / 1024)) $(peak "$d/du" 3) $ms" \
		"$(awk -v a="$t1" -v b="$ts" 'BEGIN { printf "%d", a - b }')" \
		"$(awk -v a="$t2" -v b="$ts" 'BEGIN { printf "%d", a - b }')" \
		"$n $s $(($(stat -c %s "$d/p.zip") / 1024)) $wc" >>"$tmp/f-perf"
}
flight_perf_retry() {
	local i
	for i in 1 2 3 4 5; do
		flight_perf && return 0
		[ $? = 2 ] || return 1
	done
	return 1
}

# 2. End of collection to a finished archive.  The workload keeps both CPUs
# busy from before the session to after the tool is done.  Each appends
# "end_to_archive_ms record_exit_ms script_ms zip_ms samples archive_kib".
record_tracerig() { # D
	local d=$tmp/rt after end
	rm -rf "$d" && mkdir -p "$d/stage"
	busy_start
	TMPDIR=$d/stage "$tracerig" -q -c "$profile" --set perf_events.frequency=999 -d "$1" \
		-o "$d/r.trace.zip" 2>"$d/err"
	after=$("$tmp/spin" now)
	busy_stop
	# Collection ends at the "session ended" line (CLOCK_MONOTONIC s).
	end=$(unzip -p "$d/r.trace.zip" tracerig.log | awk '/ session ended / { printf "%d", $1 * 1000; exit }')
	unzip -p "$d/r.trace.zip" manifest.json >"$d/m.json"
	python3 - "$d/m.json" "$after" "$end" "$(($(stat -c %s "$d/r.trace.zip") / 1024))" >>"$tmp/r-tracerig-$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
after, end, size = float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
c = [p for p in m["plugins"] if p["name"] == "perf_events"][0]["counters"]
print(round(after - end), round(after - end), 0, 0, c["samples"], size)
PY
}
record_perf() { # D
	local d=$tmp/rp t1 t2 t3 i
	rm -rf "$d" && mkdir -p "$d"
	for i in 1 2 3 4 5 6; do
		[ "$i" -lt 6 ] || return 1
		busy_start
		if ! (cd "$d" && perf record -q -F 999 -g -a -o "$d/p.data" \
			-- sh -c "sleep $1; '$tmp/spin' now >'$d/end'" 2>"$d/err"); then
			busy_stop
			record_aborts=$((record_aborts + 1))
			echo "$bench: perf record failed: $(tail -n 2 "$d/err" | tr '\n' ' ')" >&2
			continue
		fi
		t1=$("$tmp/spin" now)
		perf_script "$d/p.data" "$d/perf.data.txt" && break
		busy_stop
	done
	t2=$("$tmp/spin" now)
	zip_perf_side "$d"
	t3=$zipped
	awk -v e="$end" -v a="$t1" -v b="$t2" -v c="$t3" -v n="$n" -v s="$(($(stat -c %s "$d/p.zip") / 1024))" \
		'BEGIN { printf "%d %d %d %d %d %d\n", c - e, a - e, b - a, c - b, n, s }' >>"$tmp/r-perf-$1"
}

failed() { echo "$bench: a $1 run failed (left out)" >&2; }
echo "$bench: load $(cut -d' ' -f1-3 /proc/loadavg) at start" >&2
for i in $(seq "$FLIGHT_REPS"); do
	echo "$bench: flight run $i of $FLIGHT_REPS" >&2
	if [ $((i % 2)) = 1 ]; then
		flight_base; flight_tracerig || failed tracerig; flight_perf_retry || failed perf
	else
		flight_perf_retry || failed perf; flight_tracerig || failed tracerig; flight_base
	fi
done
for dur in $DURATIONS; do
	for i in $(seq "$RECORD_REPS"); do
		echo "$bench: ${dur} s recording, run $i of $RECORD_REPS" >&2
		if [ $((i % 2)) = 1 ]; then
			record_tracerig "$dur" || failed tracerig; record_perf "$dur" || failed perf
		else
			record_perf "$dur" || failed perf; record_tracerig "$dur" || failed tracerig
		fi
	done
done

base=$(med f-base 1)
col() { med "$1" "$2"; }
echo "## Flight mode and end of collection vs perf"
echo
echo "Reproduce: \`bash bench/run.sh flight\` (or \`bash bench/flight/run.sh BUILDDIR\`), as"
echo "root; this run: \`FLIGHT_REPS=$FLIGHT_REPS FLIGHT_ITER=$FLIGHT_ITER WINDOW=$WINDOW PERF_MMAP=$PERF_MMAP"
echo "DURATIONS=\"$DURATIONS\" RECORD_REPS=$RECORD_REPS bash bench/flight/run.sh\`.  Both tools sample"
echo "the whole machine with cpu-clock at 999 Hz and frame-pointer callchains"
echo "(kernel + user), while bench/perf_events/spin.c keeps both CPUs busy"
echo "(2 threads); configurations interleaved, medians."
echo
echo "### Flight recorders"
echo
echo "tracerig \`-c cpu --set tracerig.mode=flight --set tracerig.window=${WINDOW}s\` vs"
echo "\`perf record -F 999 -g -a --overwrite --switch-output=signal -m $PERF_MMAP\`, each started"
echo "before a fixed amount of work (spin.c, $FLIGHT_ITER iterations in each of 2 threads)"
echo "and triggered right after it (SIGUSR1, SIGUSR2); median of $FLIGHT_REPS runs each."
echo
echo "| | no tracing | tracerig flight | perf --overwrite |"
echo "|---|---|---|---|"
echo "| workload time (ms) | $base | $(col f-tracerig 1) ($(pct "$(col f-tracerig 1)")) | $(col f-perf 1) ($(pct "$(col f-perf 1)")) |"
echo "| workload CPU time (ms) | $(med f-base 2) | $(col f-tracerig 11) ($(base=$(med f-base 2) pct "$(col f-tracerig 11)")) | $(col f-perf 11) ($(base=$(med f-base 2) pct "$(col f-perf 11)")) |"
echo "| CPU time of the tracer during the workload (ms) | | $(col f-tracerig 2) | $(col f-perf 2) |"
echo "| peak disk while collecting (KiB; sampled every 0.5 s) | | $(col f-tracerig 3) (staging) | $(col f-perf 3) (output directory) |"
echo "| peak RSS of the tracer (KiB) | | $(col f-tracerig 4) | $(col f-perf 4) (its ring buffers: $PERF_MMAP per CPU, locked) |"
echo "| trigger to a finished file (ms) | | $(col f-tracerig 5) (the archive) | $(col f-perf 5) (perf.data.<time>) |"
echo "| trigger to samples as text (ms) | | $(col f-tracerig 6) (in the archive) | $(col f-perf 6) (+ \`perf script\`) |"
echo "| trigger to one zip of data and text (ms) | | $(col f-tracerig 7) | $(col f-perf 7) (+ \`zip\`) |"
echo "| samples in the snapshot | | $(col f-tracerig 8) | $(col f-perf 8) |"
echo "| time the snapshot covers (s) | | $(col f-tracerig 9) (the window) | $(col f-perf 9) (first to last sample: what the rings held) |"
echo "| size of the zip (KiB) | | $(col f-tracerig 10) | $(col f-perf 10) |"
echo
echo "perf's flight recorder keeps its samples in memory (overwritable rings, \`-m\`"
echo "per CPU): what a dump holds is what fit in them, not a time window, and nothing"
echo "reaches the disk before the signal.  tracerig keeps its window on disk, in"
echo "perf.data chunks of a quarter window (docs/flight.md), and a snapshot converts"
echo "its window (perf.data.txt, cpu.folded, cpu.svg, cpu.pb.gz) into an archive."
echo "perf's times after its file: \`perf script -F $fields\` (perfcollect's"
echo "conversion), then \`zip\` of the perf.data and its text, measured from the signal."
echo
echo "### End of collection to a finished archive"
echo
echo "A recording of D seconds: tracerig \`-c cpu -d D\` (system-wide), from its"
echo "\"session ended\" log line to its exit; perf, \`perf record -F 999 -g -a -- sh -c"
echo "'sleep D; ...'\` from the command's end to perf record's exit (it writes the"
echo "build ids of the DSOs its samples hit), then \`perf script\` and \`zip\`, as above."
echo "The workload keeps both CPUs busy during the packaging too.  Median of $RECORD_REPS runs each."
echo
echo "| session | tracerig samples | tracerig end of collection to archive (ms) | perf samples | perf record's exit (ms) | + perf script (ms) | + zip (ms) | perf end of collection to archive (ms) | perf / tracerig |"
echo "|---|---|---|---|---|---|---|---|---|"
for dur in $DURATIONS; do
	a=$(col "r-tracerig-$dur" 1) b=$(col "r-perf-$dur" 1)
	echo "| $dur s | $(col "r-tracerig-$dur" 5) | $a | $(col "r-perf-$dur" 5) | $(col "r-perf-$dur" 2) | $(col "r-perf-$dur" 3) | $(col "r-perf-$dur" 4) | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1fx", a ? b / a : 0 }') |"
done
echo
echo "Both grow with the session: tracerig converts the whole recording after"
echo "collection ends (perf.data.txt, the folded stacks); entries are deflated"
echo "while they grow (\`[tracerig] stream\`, the bench:stream section), so what"
echo "still grows is the conversion."
case " $DURATIONS " in
*" 300 "*) ;;
*) echo "Sessions of 300 s were not run this time, to keep the run short"
   echo "(\`DURATIONS=\"10 60 300\"\` adds them: about 15 minutes more)." ;;
esac
echo
if [ "$record_aborts" -gt 0 ] || [ "$script_aborts" -gt 0 ]; then
	echo "Stock perf (perf $(perf --version | awk '{print $3}')) aborted during this run:"
	echo "\`perf record\` $record_aborts time(s), \`perf script\` $script_aborts time(s) (run again each time)."
else
	echo "Stock perf (perf $(perf --version | awk '{print $3}')) did not abort during this run."
fi
say_load

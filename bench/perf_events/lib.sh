# What the perf_events benchmarks share (sourced with top and the bench's
# name set; the build directory is the bench's argument, else $BUILD, else
# .): the tools, a scratch directory, the median of a column of runs and a
# time relative to the untraced one ($base).
build=$(cd "${1:-${BUILD:-.}}" && pwd)
tracerig=${TRACERIG:-$build/tracerig}
export TRACERIG_PLUGIN_PATH=${TRACERIG_PLUGIN_PATH:-$build/plugins}
[ -x "$tracerig" ] || { echo "$bench: $tracerig is missing (build first)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$bench: run as root" >&2; exit 1; }
command -v perf >/dev/null || { echo "$bench: needs perf (apt-get install linux-perf)" >&2; exit 1; }

# Said with the figures: this machine may be shared.
load_start=$(cut -d' ' -f1 /proc/loadavg)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracerig-${bench//\//-}.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
now_ms() { date +%s%3N; }
# med FILE COLUMN: the median of COLUMN over the runs in $tmp/FILE.
med() { sort -n -k"$2" "$tmp/$1" | awk -v k="$2" '{ v[NR] = $k } END { print v[int((NR + 1) / 2)] }'; }
# flush_times ARCHIVE AFTER END: of a tracerig run whose workload ended at
# END and tracerig at AFTER (CLOCK_MONOTONIC ms), "end of collection to
# archive (ms), perf_events' conversion alone (ms: from its flush to its
# summary line in tracerig.log), samples".
flush_times() {
	unzip -p "$1" tracerig.log | awk -v after="$2" -v end="$3" '
		/perf_events: flushing/ { t0 = $1 } / perf_events: [0-9]+ samples,/ { t1 = $1; n = $4 }
		END { printf "%d %d %d\n", after - end, (t1 - t0) * 1000, n }'
}
# zip_perf T0 T1 FILE: perf's side finished as perfcollect finishes it, a
# zip of perf.data ($tmp/p.data) and its text ($tmp/perf.data.txt, written
# from T0 to T1 ms); appends "T0 to zipped (ms), T1 - T0, samples" to
# $tmp/FILE.
zip_perf() {
	local t2 n
	zip -q -j "$tmp/p.zip" "$tmp/perf.data.txt" "$tmp/p.data"
	t2=$(now_ms)
	rm -f "$tmp/p.zip"
	n=$(grep -c ' cpu-clock' "$tmp/perf.data.txt" || true)
	echo "$((t2 - $1)) $(($2 - $1)) $n" >>"$tmp/$3"
}
# perf record itself sometimes aborts on this machine (SIGABRT, loaded):
# such a run is counted, said with the figures, and run again.
perf_aborts=0
perf_record() { # COMMAND...: run in $tmp, output to $tmp/w, errors to $tmp/p.err
	until (cd "$tmp" && "$@" >"$tmp/w" 2>"$tmp/p.err"); do
		perf_aborts=$((perf_aborts + 1))
		echo "$bench: perf record failed: $(tail -n 2 "$tmp/p.err" | tr '\n' ' ')" >&2
		[ "$perf_aborts" -lt 5 ] || return 1
	done
}
# say_load: the conditions of the run, for the figures' reader: perf
# record's aborted runs, the machine's load.
say_load() {
	if [ "$perf_aborts" -gt 0 ]; then
		echo "\`perf record\` failed $perf_aborts time(s) during this run and was run again."
	fi
	echo
	echo "The 1-minute load average on the $(nproc) CPUs was $load_start when the run started"
	echo "and $(cut -d' ' -f1 /proc/loadavg) when it ended (above 0: other work shared the CPUs, and"
	echo "both tools' times are longer than on an idle machine)."
}
pct() { awk -v v="$1" -v b="$base" 'BEGIN { printf "%+.1f%%", (v - b) * 100 / b }'; }
# busy_start, busy_stop: both CPUs kept busy by $tmp/spin (bench/
# perf_events/spin.c, which the bench builds) from before a session to
# after the tool is done.
busy_start() { "$tmp/spin" 2 1000000000000 >/dev/null & busy=$!; sleep 0.5; }
busy_stop() { kill "$busy"; wait "$busy" 2>/dev/null || true; }
# zip_perf_side DIR: perf's text and perf.data zipped, as perfcollect
# does, then the load stopped; sets zipped (ms, CLOCK_MONOTONIC), end (the
# workload's end, from DIR/end) and n (the samples in the text).
zip_perf_side() {
	zip -q -j "$1/p.zip" "$1/perf.data.txt" "$1/p.data"
	zipped=$("$tmp/spin" now)
	busy_stop
	end=$(cat "$1/end")
	n=$(grep -c ' cpu-clock' "$1/perf.data.txt" || true)
}

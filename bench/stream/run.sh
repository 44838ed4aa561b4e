#!/usr/bin/env bash
# Streaming (issue 13): end of collection to a finished archive when
# perf.data is converted (convert_while_collecting) and deflated
# (`[tracerig] stream`) while collecting, and without, beside `perf record`
# + `perf script` + zip on the same workload.  System-wide recordings of D
# seconds with frame-pointer callchains while bench/perf_events/spin.c
# keeps both CPUs busy (during the packaging too); configurations
# interleaved, medians.  Also each tracer's CPU time while collecting.
#   bash bench/stream/run.sh [BUILDDIR]      (as root)
# Environment: DURATIONS="10 60 300" (s), REPS=1, FREQ=999 (Hz), VARIANTS:
# tracerig's configurations, each "stream/convert_while_collecting"
# ("yes/yes yes/no": both streamed, only the deflate; "no/no" adds
# nothing streamed); a third field sets [zip] compression, the deflate
# level of the streamed pieces too, and a fourth [zip] deflate, their
# encoder ("yes/yes/6/zlib": zlib instead of ISA-L, "yes/yes/1/zlib":
# zlib's fastest).
# CALLCHAIN=dwarf records user stacks by copy (tracerig's callchain =
# dwarf, perf's --call-graph dwarf) instead of frame pointers.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=bench/stream
. "$top/bench/perf_events/lib.sh"
DURATIONS=${DURATIONS:-"10 60 300"}
REPS=${REPS:-1}
FREQ=${FREQ:-999}
VARIANTS=${VARIANTS:-"yes/yes yes/yes/6/zlib yes/no"}
CALLCHAIN=${CALLCHAIN:-fp}
case $CALLCHAIN in
fp) perf_cg=-g ;;
dwarf) perf_cg="--call-graph dwarf" ;;
*) echo "$bench: CALLCHAIN is fp or dwarf" >&2; exit 2 ;;
esac
${CC:-cc} -O2 -g -fno-omit-frame-pointer -pthread -o "$tmp/spin" "$top/bench/perf_events/spin.c"
profile=$top/conf/profiles/cpu.ini
fields=comm,pid,tid,cpu,time,period,event,ip,sym,dso
hz=$(getconf CLK_TCK)


# tracerig D STREAM CONVERT LEVEL DEFLATE: appends "end_to_archive_ms packaging_ms cpu_collect_ms
# cpu_total_ms samples perf_data_kib streamed_kib archive_kib lost_samples" to
# $tmp/t-STREAM-CONVERT-LEVEL-DEFLATE-D.  Packaging: from the last line tracerig.log has (the
# sources' summary, or the stream's) to the exit: the manifest and the zip.
run_tracerig() {
	local d=$tmp/rt after end cpu0
	rm -rf "$d" && mkdir -p "$d/stage"
	busy_start
	/usr/bin/time -f '%U %S' -o "$d/time" env TMPDIR="$d/stage" "$tracerig" -q -c "$profile" \
		--set perf_events.frequency=$FREQ -d "$1" --set tracerig.stream="$2" \
		--set perf_events.convert_while_collecting="$3" --set zip.compression="$4" \
		--set zip.deflate="$5" \
		--set perf_events.callchain="$CALLCHAIN" \
		-o "$d/r.trace.zip" 2>"$d/err" &
	tpid=$!
	wait "$tpid" || { busy_stop; return 1; }
	after=$("$tmp/spin" now)
	busy_stop
	unzip -p "$d/r.trace.zip" tracerig.log >"$d/log"
	unzip -p "$d/r.trace.zip" manifest.json >"$d/m.json"
	end=$(awk '/ session ended / { printf "%d", $1 * 1000; exit }' "$d/log")
	# Its CPU when collection ended, as it logs it.
	cpu0=$(awk '/ ms of CPU time used while collecting/ { print $4; exit }' "$d/log")
	python3 - "$d" "$after" "$end" "${cpu0:-0}" >>"$tmp/t-$2-$3-$4-$5-$1" <<'PY'
import json, os, re, sys, zipfile
d, after, end, cpu0 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
u, s = open(f'{d}/time').read().split()[-2:]
cpu = (float(u) + float(s)) * 1000
last = float(open(f'{d}/log').read().strip().splitlines()[-1].split()[0]) * 1000
m = json.load(open(f'{d}/m.json'))
c = [p for p in m["plugins"] if p["name"] == "perf_events"][0]["counters"]
size = zipfile.ZipFile(f'{d}/r.trace.zip').getinfo('perf.data').file_size
streamed = 0
for line in open(f'{d}/log'):
    g = re.search(r'deflated before packaging \((\d+) bytes', line)
    if g:
        streamed += int(g.group(1))
print(round(after - end), round(after - last), cpu0, round(cpu), c["samples"], size // 1024,
      streamed // 1024, os.path.getsize(f'{d}/r.trace.zip') // 1024, c["lost_samples"])
PY
}

# perf D: appends "end_to_archive_ms record_exit_ms script_ms zip_ms samples
# cpu_collect_ms lost_chunks" (perf record's CPU when the command ends, read
# by it; the PERF_RECORD_LOST records perf script warns of).
perf_aborts=0
run_perf() {
	local d=$tmp/rp t1 t2 t3 i cpu chunks
	for i in 1 2 3 4 5 6; do
		[ "$i" -lt 6 ] || return 1
		rm -rf "$d" && mkdir -p "$d"
		busy_start
		if (cd "$d" && perf record -q -F $FREQ $perf_cg -a -o "$d/p.data" \
			-- sh -c "sleep $1; '$tmp/spin' now >'$d/end'; cat /proc/\$PPID/stat >'$d/stat'" \
			2>"$d/err") &&
			t1=$("$tmp/spin" now) &&
			perf script -i "$d/p.data" -F "$fields" >"$d/perf.data.txt" 2>"$d/ps.err"; then
			break
		fi
		busy_stop
		perf_aborts=$((perf_aborts + 1))
		echo "$bench: perf failed: $(tail -n 2 "$d/err" "$d/ps.err" 2>/dev/null | tr '\n' ' ')" >&2
	done
	t2=$("$tmp/spin" now)
	zip_perf_side "$d"
	t3=$zipped
	cpu=$(awk -v hz="$hz" '{ sub(/.*\) /, ""); printf "%d", ($12 + $13) * 1000 / hz }' "$d/stat")
	chunks=$(sed -n 's/.*events and lost \([0-9]*\) chunks.*/\1/p' "$d/ps.err" | head -n 1)
	awk -v e="$end" -v a="$t1" -v b="$t2" -v c="$t3" -v n="$n" -v cpu="$cpu" -v l="${chunks:-0}" \
		'BEGIN { printf "%d %d %d %d %d %d %d\n", c - e, a - e, b - a, c - b, n, cpu, l }' >>"$tmp/p-$1"
}

# perf's own streaming, perf record piped into perf script as it records
# (kept as perf.data too, by tee), then zip: perf_pipe D appends
# "end_to_archive_ms pipeline_exit_ms zip_ms samples cpu_ms" where cpu_ms
# is perf record's, perf script's and tee's CPU in all (all of it spent
# while collecting but the tail perf script reads after the end).
run_perf_pipe() {
	local d=$tmp/rq t1 t2
	rm -rf "$d" && mkdir -p "$d"
	busy_start
	if ! (cd "$d" && /usr/bin/time -f '%U %S' -o "$d/time" sh -c "perf record -q -F $FREQ $perf_cg -a -o - \
		-- sh -c \"sleep $1; '$tmp/spin' now >'$d/end'\" 2>'$d/err' | tee '$d/p.data' |
		perf script -i - -F $fields >'$d/perf.data.txt' 2>'$d/ps.err'"); then
		busy_stop
		echo "$bench: perf pipe failed: $(tail -n 2 "$d/err" "$d/ps.err" 2>/dev/null | tr '\n' ' ')" >&2
		return 1
	fi
	t1=$("$tmp/spin" now)
	zip_perf_side "$d"
	t2=$zipped
	awk -v e="$end" -v a="$t1" -v b="$t2" -v n="$n" -v t="$(cat "$d/time" | tail -n 1)" \
		'BEGIN { split(t, c, " "); printf "%d %d %d %d %d\n", b - e, a - e, b - a, n, (c[1] + c[2]) * 1000 }' >>"$tmp/q-$1"
}

failed() { echo "$bench: a $1 run failed (left out)" >&2; }
for dur in $DURATIONS; do
	for i in $(seq "$REPS"); do
		echo "$bench: ${dur} s, run $i of $REPS" >&2
		order=$VARIANTS
		[ $((i % 2)) = 1 ] || order=$(echo "$VARIANTS" | tr ' ' '\n' | tac | tr '\n' ' ')
		[ $((i % 2)) = 1 ] || { run_perf "$dur" || failed perf; run_perf_pipe "$dur" || failed "perf pipe"; }
		for v in $order; do
			IFS=/ read -r vs vc vl vd <<<"$v"
			run_tracerig "$dur" "$vs" "$vc" "${vl:-6}" "${vd:-auto}" || failed tracerig
		done
		[ $((i % 2)) = 0 ] || { run_perf_pipe "$dur" || failed "perf pipe"; run_perf "$dur" || failed perf; }
	done
done

echo "## Streaming: perf.data converted and deflated while collecting$([ "$CALLCHAIN" = fp ] || echo ", callchain = $CALLCHAIN")"
echo
name=stream
[ "$CALLCHAIN" = fp ] || name=stream_$CALLCHAIN
echo "Reproduce: \`bash bench/run.sh $name\` (or \`bash bench/$name/run.sh BUILDDIR\`), as"
echo "root; this run: \`DURATIONS=\"$DURATIONS\" REPS=$REPS FREQ=$FREQ VARIANTS=\"$VARIANTS\" CALLCHAIN=$CALLCHAIN bash bench/stream/run.sh\`."
echo "System-wide recordings of D seconds, cpu-clock at $FREQ Hz with callchains"
echo "(kernel + user; user stacks $([ "$CALLCHAIN" = dwarf ] && echo "copied and unwound by DWARF CFI" || echo "by frame pointers")), while bench/perf_events/spin.c keeps both CPUs busy"
echo "(during the packaging too); tracerig \`-c cpu --set perf_events.frequency=$FREQ -d D\`"
echo "with \`[tracerig] stream\` (perf.data deflated while collecting) and"
echo "\`[perf_events] convert_while_collecting\` (perf.data.txt, cpu.folded, cpu.pb.gz made"
echo "while collecting), both \`yes\` by default, \`[zip] deflate = auto\` (ISA-L in this build:"
echo "$(grep -q '^#define HAVE_ISAL 1' "$build/config.h" 2>/dev/null && echo yes || echo no)), \`callchain = $CALLCHAIN\`; perf \`perf record -F $FREQ $perf_cg -a"
echo "-- sh -c 'sleep D; ...'\`, \`perf script -F $fields\`, \`zip\` of both; and perf's"
echo "own streaming: the same \`perf record -o -\` piped through \`tee\` (kept as perf.data) into"
echo "\`perf script -i -\` while recording, then \`zip\`;"
echo "configurations interleaved, median of $REPS run(s) each."
echo
echo "| session | | end of collection to archive (ms) | of which manifest + zip (ms) | CPU while collecting (ms) | tracerig CPU in all (ms) | samples (lost: the rings were full) | perf.data (KiB) | deflated before packaging (KiB) | archive (KiB) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for dur in $DURATIONS; do
	for v in $VARIANTS; do
		IFS=/ read -r vs vc vl vd <<<"$v"
		f=t-$vs-$vc-${vl:-6}-${vd:-auto}-$dur
		[ -s "$tmp/$f" ] || continue
		echo "| $dur s | tracerig, stream = $vs, convert_while_collecting = $vc${vl:+, zip.compression = $vl}${vd:+, zip.deflate = $vd} | $(med $f 1) | $(med $f 2) | $(med $f 3) | $(med $f 4) | $(med $f 5) ($(med $f 9)) | $(med $f 6) | $(med $f 7) | $(med $f 8) |"
	done
	[ -s "$tmp/p-$dur" ] &&
		echo "| $dur s | perf record + perf script + zip | $(med p-$dur 1) (record's exit $(med p-$dur 2), script $(med p-$dur 3), zip $(med p-$dur 4)) | | $(med p-$dur 6) (perf record) | | $(med p-$dur 5) ($(med p-$dur 7) PERF_RECORD_LOST) | | | |"
	[ -s "$tmp/q-$dur" ] &&
		echo "| $dur s | perf record -o - \\| perf script -i - (perf's streaming) + zip | $(med q-$dur 1) (pipeline's exit $(med q-$dur 2), zip $(med q-$dur 3)) | | $(med q-$dur 5) (record + script, nearly all while collecting) | | $(med q-$dur 4) | | | |"
done
echo
[ "$perf_aborts" = 0 ] || echo "Stock perf failed $perf_aborts time(s) during this run (run again each time)."
echo "The 1-minute load average on the $(nproc) CPUs was $load_start when the run started"
echo "and $(cut -d' ' -f1 /proc/loadavg) when it ended."

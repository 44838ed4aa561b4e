#!/usr/bin/env bash
# What writing pprof costs the end of collection: the same fixed CPU work
# (bench/perf_events/spin.c, 2 threads) sampled by tracerig -c cpu at 999 Hz
# and at 19999 Hz with frame-pointer callchains, with `--set
# tracerig.pprof=no` and `=yes`, the two interleaved (yes first in every
# other pair, so neither always runs on the warmer cache); per run:
#   - end of collection to archive: the workload's exit to tracerig's;
#   - perf_events' flush: perf.data.txt, cpu.folded, cpu.svg (and cpu.pb.gz,
#     built in the same pass as perf.data.txt and written after cpu.svg);
#   - cpu.pb.gz's encoding and writing alone (its debug log line);
#   - tracerig's own CPU time (its and its children's, less the workload's);
# and the sizes of the same samples as cpu.pb.gz (the archive's, and
# `tracerig convert`'s), perf.data.txt and `perf script`'s text.
#
#   bash bench/pprof/run.sh [BUILDDIR]      (as root)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=bench/pprof
REPS=${REPS:-9}
ITER=${ITER:-500000000}
. "$top/bench/perf_events/lib.sh"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -pthread -o "$tmp/spin" "$top/bench/perf_events/spin.c"

# one FREQ yes|no: appends "post_ms flush_ms pb_ms cpu_ms samples" to $tmp/FREQ-PPROF
one() {
	local freq=$1 pp=$2 end after cpu
	/usr/bin/time -f '%U %S' -o "$tmp/cpu" "$tracerig" -q -c "$top/conf/profiles/cpu.ini" \
		--set perf_events.frequency="$freq" --set tracerig.pprof="$pp" \
		-o "$tmp/$freq-$pp.trace.zip" -- "$tmp/spin" 2 "$ITER" >"$tmp/w" 2>"$tmp/t.err"
	after=$("$tmp/spin" now)
	read -r _ end cpu <"$tmp/w"
	unzip -p "$tmp/$freq-$pp.trace.zip" tracerig.log | awk -v after="$after" -v end="$end" \
		-v cpu="$cpu" -v own="$(cat "$tmp/cpu")" '
		/ perf_events: flushing/ { t0 = $1; next }
		/ perf_events: [0-9]+ samples,/ { n = $4 }
		/ perf_events: cpu\.pb\.gz: / { pb = $(NF - 1) }
		t0 && !t1 && $3 !~ /^perf_events:/ { t1 = $1 }
		END { split(own, o, " ")
			printf "%.0f %.0f %.1f %.0f %d\n", after - end, (t1 - t0) * 1000, pb + 0,
				(o[1] + o[2]) * 1000 - cpu, n }' >>"$tmp/$freq-$pp"
}
for i in $(seq "$REPS"); do
	for freq in 999 19999; do
		if [ $((i % 2)) = 1 ]; then one "$freq" no; one "$freq" yes; else one "$freq" yes; one "$freq" no; fi
	done
done

# Sizes, from the last 19999 Hz archive with pprof.
mkdir -p "$tmp/a" "$tmp/out"
unzip -q -o "$tmp/19999-yes.trace.zip" -d "$tmp/a"
"$tracerig" convert -o "$tmp/out" "$tmp/19999-yes.trace.zip" >/dev/null
samples=$(grep -c '^[^ 	]' "$tmp/a/perf.data.txt")
pb=$(stat -c %s "$tmp/a/cpu.pb.gz")
cpb=$(stat -c %s "$tmp/out/19999-yes.cpu.pb.gz")
txt=$(stat -c %s "$tmp/a/perf.data.txt")
gz=$(gzip -6 -c "$tmp/a/perf.data.txt" | wc -c)
data=$(stat -c %s "$tmp/a/perf.data")
# perf script aborts on some recordings on this machine: said in the table.
pst=0
perf script -i "$tmp/a/perf.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,dso \
	>"$tmp/perf.txt" 2>"$tmp/perf.err" || pst=$?
if [ "$pst" = 0 ] && [ -s "$tmp/perf.txt" ]; then
	ptxt=$(stat -c %s "$tmp/perf.txt") pgz=$(gzip -6 -c "$tmp/perf.txt" | wc -c)
else
	ptxt="perf script failed (status $pst: $(grep -m1 -o 'assertion.*' "$tmp/perf.err" || true))" pgz=
fi

# row FREQ COLUMN: "no | yes | paired difference" of COLUMN's medians; the
# paired difference is the median of yes - no over the runs taken together.
row() {
	local no yes d
	no=$(med "$1-no" "$2") yes=$(med "$1-yes" "$2")
	paste -d' ' "$tmp/$1-no" "$tmp/$1-yes" | awk -v k="$2" '{ print $(k + 5) - $k }' | sort -n >"$tmp/d"
	d=$(awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' "$tmp/d")
	range() { sort -n -k"$2" "$tmp/$1" | awk -v k="$2" 'NR == 1 { lo = $k } { hi = $k } END { print lo "–" hi }'; }
	echo "| $no ($(range "$1-no" "$2")) | $yes ($(range "$1-yes" "$2")) | $d |"
}
echo "## pprof: what writing cpu.pb.gz costs the end of collection"
echo
echo "A fixed amount of CPU work in 2 threads (bench/perf_events/spin.c, $ITER"
echo "iterations each) run by \`tracerig -c cpu\` (cpu-clock, frame-pointer callchains)"
echo "with \`--set tracerig.pprof=no\` and \`=yes\`, $REPS runs of each, the two"
echo "interleaved; medians (range), and the median of the paired differences (yes - no)."
echo
echo "    bash bench/pprof/run.sh BUILDDIR"
echo
for freq in 999 19999; do
	echo "At $freq Hz ($(med "$freq-yes" 5) samples):"
	echo
	echo "| | pprof = no | pprof = yes | yes - no (paired) |"
	echo "|---|---|---|---|"
	echo "| end of collection to archive (ms) $(row "$freq" 1)"
	echo "| perf_events' flush (ms) $(row "$freq" 2)"
	echo "| cpu.pb.gz encoded and written (ms) | | $(med "$freq-yes" 3) | |"
	echo "| tracerig's CPU time (ms) $(row "$freq" 4)"
	echo
done
echo "The same $samples samples (19999 Hz) in each form (bytes):"
echo
echo "| cpu.pb.gz (the archive's) | cpu.pb.gz (\`tracerig convert\`) | perf.data.txt | the same, gzip -6 | \`perf script\` text | the same, gzip -6 | perf.data |"
echo "|---|---|---|---|---|---|---|"
echo "| $pb | $cpb | $txt | $gz | $ptxt | $pgz | $data |"
say_load

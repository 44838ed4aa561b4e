#!/usr/bin/env bash
# tracerig convert vs perf script, side by side on the same recording: a
# fixed amount of CPU work (bench/perf_events/spin.c, 2 threads) sampled by
# tracerig at 19999 Hz with frame-pointer callchains, then
#   - `tracerig convert --to pprof` of the archive (perf.data.txt -> cpu.pb.gz),
#   - `perf script` of the same perf.data (perfcollect's fields),
# in samples per second (median of REPS runs each, interleaved), and the size
# of each form of the same samples.
#
#   bash bench/convert/run.sh [BUILDDIR]      (as root)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=bench/convert
REPS=${REPS:-5}
ITER=${ITER:-2000000000}
. "$top/bench/perf_events/lib.sh"
${CC:-cc} -O2 -g -fno-omit-frame-pointer -pthread -o "$tmp/spin" "$top/bench/perf_events/spin.c"

"$tracerig" -q -c "$top/conf/profiles/cpu.ini" --set perf_events.frequency=19999 \
	-o "$tmp/b.trace.zip" -- "$tmp/spin" 2 "$ITER" >/dev/null 2>&1
mkdir -p "$tmp/a" "$tmp/out"
unzip -q -o "$tmp/b.trace.zip" -d "$tmp/a"
samples=$(grep -c '^[^ 	]' "$tmp/a/perf.data.txt")

for _ in $(seq "$REPS"); do
	t0=$(now_ms)
	"$tracerig" convert -o "$tmp/out" "$tmp/b.trace.zip" >/dev/null
	t1=$(now_ms)
	perf script -i "$tmp/a/perf.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,dso \
		>"$tmp/perf.data.txt" 2>/dev/null
	t2=$(now_ms)
	echo "$((t1 - t0)) $((t2 - t1))" >>"$tmp/times"
done
conv=$(med times 1) script=$(med times 2)
pb=$(stat -c %s "$tmp/out/b.cpu.pb.gz")
txt=$(stat -c %s "$tmp/a/perf.data.txt")
gz=$(gzip -6 -c "$tmp/a/perf.data.txt" | wc -c)
ptxt=$(stat -c %s "$tmp/perf.data.txt")
pgz=$(gzip -6 -c "$tmp/perf.data.txt" | wc -c)
data=$(stat -c %s "$tmp/a/perf.data")
rate() { awk -v n="$samples" -v ms="$1" 'BEGIN { printf "%.0f", ms ? n * 1000 / ms : 0 }'; }

echo "## convert: archives as pprof, vs perf script"
echo
echo "$samples samples of a fixed amount of CPU work in 2 threads"
echo "(bench/perf_events/spin.c) recorded by tracerig at 19999 Hz with"
echo "frame-pointer callchains; median of $REPS runs each, interleaved."
echo
echo '    bash bench/convert/run.sh'
echo
echo "| | tracerig convert --to pprof | perf script (perfcollect's fields) |"
echo "|---|---|---|"
echo "| time (ms) | $conv | $script |"
echo "| samples per second | $(rate "$conv") | $(rate "$script") |"
echo
echo "The same samples in each form (bytes):"
echo
echo "| cpu.pb.gz | perf.data.txt (tracerig's) | the same, gzip -6 | perf script's text | the same, gzip -6 | perf.data |"
echo "|---|---|---|---|---|---|"
echo "| $pb | $txt | $gz | $ptxt | $pgz | $data |"
echo
echo "convert reads perf.data.txt out of the archive (inflating it), merges equal"
echo "stacks with their labels (pid, tid, comm) and writes profile.proto, gzipped."
echo "perf script reads perf.data and resolves every address itself."
say_load

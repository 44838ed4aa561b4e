#!/usr/bin/env bash
# What a new perf.data chunk costs tracerig's collector in flight mode:
# tracerig's own CPU time (all its threads, /proc/PID/stat) over SECONDS of
# a system-wide session, in record mode and in flight mode with a 2 s
# window (a chunk every 0.5 s), while one spin.c thread keeps a CPU busy.
# The difference, divided by the chunks begun, is the cost of a chunk:
# closing one file, creating the next and writing its side-band (issue 13).
# The counter is read once the session collects and again SECONDS later,
# so start-up and the final snapshot are not in it.  Modes interleaved,
# median of REPS runs.
#
#   bash bench/flight/chunkcost.sh BUILDDIR [BUILDDIR...]    (as root)
#
# Environment: SECONDS_=20, REPS=3.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
D=${SECONDS_:-20}
REPS=${REPS:-3}
[ "$(id -u)" = 0 ] || { echo "chunkcost: run as root" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracerig-chunkcost.XXXXXX")
trap 'kill $spin 2>/dev/null; rm -rf "$tmp"' EXIT
cc -O2 -fno-omit-frame-pointer -pthread -o "$tmp/spin" "$top/bench/perf_events/spin.c"
hz=$(getconf CLK_TCK)
load_start=$(cut -d' ' -f1 /proc/loadavg)
procs=$(ls /proc | grep -c '^[0-9]*$')
"$tmp/spin" 1 100000000000000 >/dev/null &
spin=$!

# cpu_ms PID: utime + stime of the process, all threads, in ms.
cpu_ms() { awk -v hz="$hz" '{ sub(/^.*\) /, ""); print ($12 + $13) * 1000 / hz }' "/proc/$1/stat"; }
# run BUILD MODE KEY: appends "cpu_ms chunks" of one session to $tmp/KEY-MODE.
run() {
	local build=$1 mode=$2 key=$3 out="$tmp/run" pid a b first last
	local -a set=()
	[ "$mode" = flight ] && set=(--set tracerig.mode=flight --set tracerig.window=2s)
	rm -rf "$out" && mkdir -p "$out"
	TMPDIR="$out" TRACERIG_PLUGIN_PATH="$build/plugins" "$build/tracerig" -v \
		-c "$top/conf/profiles/cpu.ini" "${set[@]}" -d $((D + 6)) -o "$out" \
		>"$out/log" 2>&1 </dev/null &
	pid=$!
	for _ in $(seq 100); do grep -q 'collecting' "$out/log" && break; sleep 0.1; done
	sleep 1
	a=$(cpu_ms "$pid")
	first=$(ls "$out"/tracerig-*.staging-*/ 2>/dev/null | sed -n 's/^flight-perf\.data\.0*//p' | sort -n | tail -1)
	sleep "$D"
	b=$(cpu_ms "$pid")
	last=$(ls "$out"/tracerig-*.staging-*/ 2>/dev/null | sed -n 's/^flight-perf\.data\.0*//p' | sort -n | tail -1)
	wait "$pid" || true
	echo "$((b - a)) $(( ${last:-0} - ${first:-0} ))" >>"$tmp/$key-$mode"
}
med() { sort -n -k"$2" "$1" | awk -v k="$2" '{ v[NR] = $k } END { print v[int((NR + 1) / 2)] }'; }

for i in $(seq "$REPS"); do
	k=0
	for build in "$@"; do
		k=$((k + 1))
		for mode in record flight; do
			echo "chunkcost: $build $mode, run $i of $REPS" >&2
			run "$(cd "$build" && pwd)" "$mode" "$k"
		done
	done
done

echo "Reproduce: \`SECONDS_=$D REPS=$REPS bash bench/flight/chunkcost.sh BUILDDIR...\`;"
echo "system-wide, $procs processes on the machine, 1-minute load $load_start at the start,"
echo "$(cut -d' ' -f1 /proc/loadavg) at the end; tracerig's CPU over $D s, median of $REPS runs."
echo
echo "| build | record mode (ms) | flight mode (ms) | chunks begun | per chunk (ms) |"
echo "|---|---|---|---|---|"
n=0
for build in "$@"; do
	n=$((n + 1))
	r=$(med "$tmp/$n-record" 1)
	f=$(med "$tmp/$n-flight" 1)
	c=$(med "$tmp/$n-flight" 2)
	echo "| $build | $r | $f | $c | $(python3 -c "print('%.1f' % (($f - $r) / max($c, 1)))") |"
done

#!/bin/sh
# LTTng backend benchmark: how fast the test app can emit events with no
# discards at tracerig's default channel settings, and what tracing costs
# the app per event, for a session made by tracerig (liblttng-ctl) and the
# same session made with the lttng command line, side by side.
#
#   bench/lttng/run.sh [BUILDDIR]      (as root; prints a Markdown section)
#
# BUILDDIR defaults to the current directory; it must hold a built tracerig,
# its plugins and tests/lttng/lttng-app (make check builds the app).
set -eu
build=$(cd "${1:-${BUILD:-.}}" && pwd)
app="$build/tests/lttng/lttng-app"
tracerig="$build/tracerig"
export TRACERIG_PLUGIN_PATH="$build/plugins"
for f in "$app" "$tracerig"; do
	[ -x "$f" ] || { echo "bench/lttng: $f is missing (build with make && make check first)" >&2; exit 1; }
done
command -v lttng >/dev/null || { echo "bench/lttng: the lttng CLI is missing (apt-get install lttng-tools)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench/lttng: run as root" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracerig-bench-lttng.XXXXXX")
own_sd=
cleanup() {
	lttng destroy bench-cli >/dev/null 2>&1 || true
	[ -n "$own_sd" ] && kill "$own_sd" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
pidf=/var/run/lttng/lttng-sessiond.pid
if ! lttng list >/dev/null 2>&1; then
	lttng-sessiond --daemonize --no-kernel
	own_sd=$(cat "$pidf")
fi

# tracerig's defaults, spelled out for the CLI session.
subbuf=1M; nsubbuf=4
cat >"$tmp/bench.ini" <<INI
[tracerig]
name = bench
required = lttng
[lttng]
events = tracerig_test:tick
INI

# run_tracerig N RATE [WORK] -> "elapsed_ns discarded"
run_tracerig() {
	rm -f "$tmp/t.trace.zip" "$tmp/app.out"
	"$tracerig" -q -c "$tmp/bench.ini" -d 120 -o "$tmp/t.trace.zip" -- \
		sh -c 'exec "$0" -m tick -n "$1" -r "$2" -w "$3" >"$4"' "$app" "$1" "$2" "${3:-0}" "$tmp/app.out" \
		>/dev/null 2>&1
	el=$(sed -n 's/.*elapsed_ns=\([0-9]*\).*/\1/p' "$tmp/app.out")
	disc=$(unzip -p "$tmp/t.trace.zip" manifest.json | tr -d ' \n' | sed -n 's/.*"discarded_events":\([0-9]*\).*/\1/p')
	echo "${el:-?} ${disc:-?}"
}

# run_cli N RATE [WORK] -> "elapsed_ns discarded"
run_cli() {
	rm -rf "$tmp/cli"
	{
		lttng create bench-cli --output="$tmp/cli"
		lttng enable-channel -u -s bench-cli --subbuf-size=$subbuf --num-subbuf=$nsubbuf --discard --buffers-uid channel0
		lttng add-context -u -s bench-cli -c channel0 -t vpid -t vtid -t procname
		lttng enable-event -u -s bench-cli -c channel0 tracerig_test:tick
		lttng start bench-cli
	} >/dev/null
	"$app" -m tick -n "$1" -r "$2" -w "${3:-0}" >"$tmp/app.out"
	lttng stop bench-cli >/dev/null
	disc=$(lttng list bench-cli | sed -n 's/.*Discarded events: *\([0-9]*\).*/\1/p' | awk '{s+=$1} END {print s+0}')
	lttng destroy bench-cli >/dev/null
	el=$(sed -n 's/.*elapsed_ns=\([0-9]*\).*/\1/p' "$tmp/app.out")
	echo "${el:-?} ${disc:-?}"
}

untraced() {
	"$app" -m tick -n "$1" -r 0 -w "${2:-0}" | sed -n 's/.*elapsed_ns=\([0-9]*\).*/\1/p'
}

# Each step: half a second worth of events at the target rate.  A rate the
# app cannot reach while traced just runs flat out: the achieved rate says so.
rates="1000000 2000000 4000000 8000000 16000000"
rows=""
best_t=0; best_c=0
achieved() { awk -v n="$1" -v e="$2" 'BEGIN { if (e > 0) printf "%.0f", n / (e / 1e9); else print 0 }'; }
for r in $rates; do
	n=$((r / 2))
	set -- $(run_tracerig "$n" "$r"); t_rate=$(achieved "$n" "$1"); t_disc=$2
	set -- $(run_cli "$n" "$r"); c_rate=$(achieved "$n" "$1"); c_disc=$2
	[ "$t_disc" = 0 ] && [ "$t_rate" -gt "$best_t" ] && best_t=$t_rate
	[ "$c_disc" = 0 ] && [ "$c_rate" -gt "$best_c" ] && best_c=$c_rate
	rows="$rows| $r | $t_rate | $t_disc | $c_rate | $c_disc |
"
done

# Unpaced: the app emits as fast as it can, with no work between events
# (the tracepoint's own cost) and with ~1 us of work per event (the
# slowdown an application emitting a million events per second would see).
n=2000000
unpaced_rows=""
for work in 0 600; do
	base_ns=$(untraced $n $work)
	set -- $(run_tracerig $n 0 $work); t_el=$1; t_disc=$2
	set -- $(run_cli $n 0 $work); c_el=$1; c_disc=$2
	label="no work"; [ "$work" = 0 ] || label="$work rounds of work (~$(awk -v e="$base_ns" -v n="$n" 'BEGIN { printf "%.2f", e / n / 1000 }') us)"
	for row in "untraced:$base_ns:-" "tracerig session:$t_el:$t_disc" "lttng CLI session:$c_el:$c_disc"; do
		who=${row%%:*}; rest=${row#*:}; el=${rest%%:*}; disc=${rest#*:}
		unpaced_rows="$unpaced_rows| $label | $who | $(awk -v e="$el" -v n="$n" 'BEGIN { printf "%.1f", e / n }') | $(awk -v e="$el" -v n="$n" 'BEGIN { printf "%.2f M", n / (e / 1e9) / 1e6 }') | $(awk -v e="$el" -v b="$base_ns" 'BEGIN { printf "%.2fx", e / b }') | $disc |
"
	done
done

cat <<MD
## LTTng backend: tracerig (liblttng-ctl) vs the lttng CLI

Reproduce (as root, in a build tree after \`make check\`): \`bench/lttng/run.sh BUILDDIR\`

Workload: \`tests/lttng/lttng-app -m tick\` emits \`tracerig_test:tick\` (one
64-bit field) paced at each target rate for half a second.  Both sessions use
tracerig's default channel: ${nsubbuf} x ${subbuf} sub-buffers per CPU, discard
mode, per-UID buffers, vpid/vtid/procname contexts.  tracerig launches the
app (\`-- app\`, VPID tracker on it); the CLI session is \`lttng create;
enable-channel; add-context; enable-event; start\` around the same app.
Machine: $(nproc) CPUs, $(uname -r), lttng-tools $(lttng --version | sed -n 's/.* \([0-9][0-9.]*\).*/\1/p' | head -1).

| target rate (events/s) | tracerig: achieved | tracerig: discarded | lttng CLI: achieved | lttng CLI: discarded |
|---:|---:|---:|---:|---:|
${rows}| **highest achieved rate without discards** | **${best_t}** | | **${best_c}** | |

Unpaced, ${n} events, as fast as the app can:

| app work per event | session | ns/event | events/s | slowdown vs untraced | discarded |
|---|---|---:|---:|---:|---:|
${unpaced_rows}
MD

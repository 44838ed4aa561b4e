#!/usr/bin/env bash
# The eventpipe backend (.NET runtime events over the diagnostics IPC into
# COMM.PID.nettrace) against dotnet-trace, and tracerig's whole .NET job
# against the user's alternative: an ASP.NET Core service
# (tests/dotnet/apps/web, built here from source into the scratch directory)
# under the same load from wrk, side by side in one run:
#   a   untraced;
#   b   tracerig -c PROFILE -p PID, PROFILE being `[tracerig] name = ep` and
#       `[eventpipe]` alone (providers = default: perfcollect's set),
#       stopped by SIGTERM;
#   c   dotnet-trace collect -p PID --providers P -o FILE, P the providers
#       tracerig enabled (its log's `eventpipe: providers ...` line, in
#       dotnet-trace's syntax), stopped by SIGINT;
#   d1  tracerig -c conf/profiles/dotnet.ini -p PID (CPU samples, eventpipe,
#       mapharvest, LTTng where it can), the server started with no DOTNET_
#       variable, stopped by SIGTERM;
#   d1n d1 with dotnet.ini less its [lttng] section (where the runtime's LTTng
#       provider cannot load, as on Debian 12, LTTng records nothing: what
#       its start and stop cost);
#   d2  what a user runs instead: the server started with
#       DOTNET_PerfMapEnabled=1, dotnet-trace collect (providers P) and
#       perf record -k 1 -g -F FREQ -p PID at the same time, both stopped by
#       SIGINT at once, then perfcollect's post-processing as bench/dotnet's
#       c does it (perf inject --jit, perf script) and one zip of the text,
#       the injected perf.data, the perf map and the .nettrace.
# Each run: a fresh server, WARMUP s of load (tiering), the tool attached and
# ready, SETTLE s, D s of measured load (wrk: 1 thread, CONNS connections, a
# mix of 4 endpoints), the tool stopped; "stop to archive" is from the stop
# signal to the archive complete (tracerig's exit, its archive written;
# dotnet-trace's exit, its .nettrace complete, rundown included; d2's zip).
# The configurations are interleaved (a b c d1 d1n d2, a b c ...) REPS
# times; the figures are medians.  The .nettrace files of b and c are read
# back by TraceEvent (PerfViewCheck, which the test suite builds into
# BUILDDIR/tests/dotnet/apps/perfview/out) for their event counts.
#   bash bench/eventpipe/run.sh [BUILDDIR]      (as root)
# Environment: D=10 (s), WARMUP=3 (s), SETTLE=1 (s), REPS=5, CONNS=16,
# FREQ=999 (Hz), FULL=yes (run d1 and d2), NOLTTNG=yes (and d1n),
# PERFVIEWCHECK (the PerfViewCheck.dll to count events with; none: not
# counted), DOTNET_TRACE (a dotnet-trace to use; default: installed from
# NuGet into the scratch directory, version DOTNET_TRACE_VERSION=10.0.750501).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=bench/eventpipe
BUILD=${BUILD:-$top/_build/plain}
. "$top/bench/perf_events/lib.sh"
D=${D:-10}
WARMUP=${WARMUP:-3}
SETTLE=${SETTLE:-1}
REPS=${REPS:-5}
CONNS=${CONNS:-16}
FREQ=${FREQ:-999}
FULL=${FULL:-yes}
NOLTTNG=${NOLTTNG:-yes}
DOTNET_TRACE_VERSION=${DOTNET_TRACE_VERSION:-10.0.750501}
PERFVIEWCHECK=${PERFVIEWCHECK:-$build/tests/dotnet/apps/perfview/out/PerfViewCheck.dll}
full_profile=$top/conf/profiles/dotnet.ini
# The workload, wrk, the server, the tools, the scratch directory.
. "$top/bench/dotnet/lib.sh"
[ -n "$dotnet_trace" ] || { echo "$bench: needs dotnet-trace (c and d2 are its)" >&2; exit 1; }
[ -f "$PERFVIEWCHECK" ] || echo "$bench: no $PERFVIEWCHECK (make check builds it): events not counted" >&2
# b's profile: the eventpipe backend alone, its providers the default
# (perfcollect's set).
profile=$tmp/ep.ini
printf '[tracerig]\nname = ep\n\n[eventpipe]\n' >"$profile"
# d1n's: dotnet.ini without its [lttng] section.
nolttng_profile=$tmp/dotnet-nolttng.ini
awk '/^\[/ { skip = $0 == "[lttng]" } !skip' "$full_profile" >"$nolttng_profile"

# providers: what b's tracerig enabled, from its log's `eventpipe: providers`
# line (dotnet-trace's syntax), for c and d2: the last b run's, or before
# one ran, what `tracerig -v --check` of the same profile says.
providers_of() { sed -n 's/.*eventpipe: providers //p' "$1" | head -n 1; }
"$tracerig" -v --check -c "$profile" >/dev/null 2>"$tmp/check.err" || true
providers=$(providers_of "$tmp/check.err")
[ -n "$providers" ] || { echo "$bench: tracerig --check named no providers: $(tail -n 3 "$tmp/check.err" | tr '\n' ' ')" >&2; exit 1; }

# events FILE: "events lost" as TraceEvent's EventPipeEventSource reads the
# .nettrace ("- -" without PerfViewCheck, or if it cannot read it).
events() {
	local out
	if [ -f "$PERFVIEWCHECK" ] && out=$(env $clean_env TMPDIR="$tmp/sdktmp" dotnet "$PERFVIEWCHECK" nettrace "$1" 2>"$1.pv.err"); then
		awk '$1 == "events" { e = $2 } $1 == "lost" { l = $2 } END { print (e == "" ? "-" : e), (l == "" ? "-" : l) }' <<<"$out"
	else
		[ ! -f "$PERFVIEWCHECK" ] || echo "$bench: PerfViewCheck could not read $1: $(tail -n 2 "$1.pv.err" | tr '\n' ' ')" >&2
		echo "- -"
	fi
}
# nettrace_of ARCHIVE DIR: the one .nettrace of tracerig's archive, unzipped
# into DIR; its path.
nettrace_of() {
	local name
	name=$(unzip -Z1 "$1" | grep '\.nettrace$' | head -n 1) || return 1
	unzip -q -o -j "$1" "$name" -d "$2" && echo "$2/$(basename "$name")"
}
kib() { echo $(($(stat -c %s "$1") / 1024)); }
# phases ARCHIVE STOP_MS: where tracerig's stop to archive went, from its
# log: "runtime flushed packaging" (ms): how long the runtime took to
# answer StopTracing (its rundown written: the slowest runtime's, from the
# command; the other backends flush meanwhile), from the signal to the
# log's last line (every backend stopped and flushed: perf_events'
# conversion finished, the maps switched off, the .nettrace ended), and
# the rest (the zip written, tracerig's exit).
phases() {
	unzip -p "$1" tracerig.log | awk -v total="$2" '
		/terminated: stopping/ && !t { t = $1 } { l = $1 }
		/answered StopTracing after [0-9]+ ms/ {
			v = $0; sub(/.*answered StopTracing after /, "", v); sub(/ ms.*/, "", v)
			if (v + 0 > r) r = v + 0 }
		END { if (!t) { print "- - -"; exit }
			printf "%s %d %d\n", r ? r : "-", (l - t) * 1000, total - (l - t) * 1000 }'
}

# b: appends "... stop_to_archive_ms nettrace_kib events lost archive_kib
# stop_ms flush_ms packaging_ms"
run_b() {
	local d=$tmp/b nt p
	rm -rf "$d" && mkdir -p "$d"
	server_start || return 1
	tracerig_attach "$d" "$profile" "$d/b.trace.zip" || { server_stop; return 1; }
	measure || { stop_all; return 1; }
	tracerig_stop
	server_stop
	if [ "$trc" != 0 ] || [ ! -s "$d/b.trace.zip" ]; then
		echo "$bench: tracerig failed ($trc): $(tail -n 3 "$d/err" | tr '\n' ' ')" >&2
		return 1
	fi
	p=$(providers_of "$d/err")
	[ -z "$p" ] || providers=$p
	# A runtime that did not end its stream in time, or any other word of
	# the backend's above the ordinary.
	grep -E 'eventpipe: .*(stop_timeout|rundown|cut|gave up|given up|failed)' "$d/err" >>"$tmp/b-warn" || true
	nt=$(nettrace_of "$d/b.trace.zip" "$d/x") || { echo "$bench: no .nettrace in tracerig's archive" >&2; return 1; }
	echo "$meas $stop_ms $(kib "$nt") $(events "$nt") $(kib "$d/b.trace.zip") $(phases "$d/b.trace.zip" "$stop_ms")" >>"$tmp/r-b"
	rm -rf "$d"
}

# c: appends "... stop_to_file_ms nettrace_kib events lost"
run_c() {
	local d=$tmp/c t0 t1
	rm -rf "$d" && mkdir -p "$d"
	server_start || return 1
	echo "$providers" >"$tmp/c-providers"
	dotnet_trace_start "$d/c.nettrace" "$providers" || { server_stop; return 1; }
	measure || { stop_all; return 1; }
	t0=$(now)
	kill -INT "$tool"
	dotnet_trace_wait "$d/c.nettrace" || { server_stop; return 1; }
	t1=$(now)
	server_stop
	echo "$meas $((t1 - t0)) $(kib "$d/c.nettrace") $(events "$d/c.nettrace")" >>"$tmp/r-c"
	rm -rf "$d"
}

# d1, d1n: appends "... stop_to_archive_ms archive_kib nettrace_kib stop_ms
# flush_ms packaging_ms"
run_d1() { # NAME PROFILE
	local name=$1 d=$tmp/$1 nt
	rm -rf "$d" && mkdir -p "$d"
	server_start || return 1
	tracerig_attach "$d" "$2" "$d/$name.trace.zip" || { server_stop; return 1; }
	measure || { stop_all; return 1; }
	tracerig_stop
	server_stop
	if [ "$trc" != 0 ] || [ ! -s "$d/$name.trace.zip" ]; then
		echo "$bench: tracerig -c $(basename "$2") failed ($trc): $(tail -n 3 "$d/err" | tr '\n' ' ')" >&2
		return 1
	fi
	grep -o 'ust_providers_seen=[0-9]*, ust_providers_missing=[0-9]*' "$d/err" | head -n 1 >>"$tmp/$name-lttng" || true
	nt=$(nettrace_of "$d/$name.trace.zip" "$d/x") || { echo "$bench: no .nettrace in the archive of $name" >&2; return 1; }
	echo "$meas $stop_ms $(kib "$d/$name.trace.zip") $(kib "$nt") $(phases "$d/$name.trace.zip" "$stop_ms")" >>"$tmp/r-$name"
	rm -rf "$d"
}

# d2: appends "... stop_to_archive_ms dotnet_trace_exit_ms record_exit_ms
# inject_ms script_ms zip_ms jitted_files archive_kib nettrace_kib"
run_d2() {
	local d=$tmp/d2 t0 t_dt t_rec pid
	rm -rf "$d" && mkdir -p "$d"
	server_start DOTNET_PerfMapEnabled=1 || return 1
	pid=$server
	dotnet_trace_start "$d/d2.nettrace" "$providers" || { server_stop; return 1; }
	perf_record_start "$d" || { stop_all; return 1; }
	measure || { stop_all; return 1; }
	t0=$(now)
	kill -INT "$tool" "$perfrec"
	dotnet_trace_wait "$d/d2.nettrace" || { stop_all; return 1; }
	t_dt=$(now)
	perf_record_wait
	t_rec=$(now)
	perf_post "$d" "$pid" "$d/d2.nettrace" || { server_stop; return 1; }
	server_stop
	echo "$meas $((t_zip - t0)) $((t_dt - t0)) $((t_rec - t0)) $((t_inject - t_rec)) $((t_script - t_inject)) \
$((t_zip - t_script)) $jitted $(kib "$d/p.zip") $(kib "$d/d2.nettrace")" >>"$tmp/r-d2"
	rm -rf "$d"
}

configs="a b c"
if [ "$FULL" = yes ]; then
	configs="$configs d1"
	[ "$NOLTTNG" != yes ] || configs="$configs d1n"
	configs="$configs d2"
fi
failed() { echo "$bench: a $1 run failed (left out)" >&2; }
t_start=$(now)
for i in $(seq "$REPS"); do
	for c in $configs; do
		echo "$bench: run $i of $REPS: $c" >&2
		case $c in
		d1) run_d1 d1 "$full_profile" || failed d1 ;;
		d1n) run_d1 d1n "$nolttng_profile" || failed d1n ;;
		*) run_"$c" || failed "$c" ;;
		esac
	done
done
t_all=$((($(now) - t_start) / 1000))

# The figures.  m(FILE, COLUMN): median over the runs; n(FILE): runs.
m() { [ -s "$tmp/r-$1" ] && med "r-$1" "$2" || echo "-"; }
runs() { [ -s "$tmp/r-$1" ] && wc -l <"$tmp/r-$1" || echo 0; }
span() { [ -s "$tmp/r-$1" ] && sort -n -k1 "$tmp/r-$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }' || echo "-"; }
base=$(m a 1)
lost() { [ -s "$tmp/r-$1" ] && [ "$base" != - ] && pct "$(m "$1" 1)" || echo "-"; }
errs() { [ -s "$tmp/r-$1" ] && awk '{ s += $4 } END { print s + 0 }' "$tmp/r-$1" || echo "-"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.1fx", b / a; else print "-" }'; }
label_a="a. untraced"
label_b="b. tracerig \`-c ep.ini -p PID\` (\`[eventpipe]\` alone)"
label_c="c. dotnet-trace collect -p PID --providers (the same)"
label_d1="d1. tracerig \`-c conf/profiles/dotnet.ini -p PID\`"
label_d1n="d1n. as d1, dotnet.ini without its \`[lttng]\` section"
label_d2="d2. dotnet-trace collect + perf record, then perf inject --jit + perf script + zip"

echo "## .NET runtime events: tracerig's eventpipe backend and dotnet-trace, and tracerig's whole .NET job against dotnet-trace plus perf"
echo
echo "Reproduce: \`bash bench/run.sh eventpipe\` (or \`bash bench/eventpipe/run.sh BUILDDIR\`), as root,"
echo "with the .NET SDK; this run: \`D=$D WARMUP=$WARMUP SETTLE=$SETTLE REPS=$REPS CONNS=$CONNS FREQ=$FREQ FULL=$FULL NOLTTNG=$NOLTTNG bash bench/eventpipe/run.sh\`"
echo "($(versions))."
echo "The workload is bench/dotnet's: tests/dotnet/apps/web, an ASP.NET Core minimal API, loaded by"
echo "\`wrk -t1 -c$CONNS -d${D}s\` cycling through its four endpoints over loopback (the server and wrk"
echo "share the $(nproc) CPUs; nothing pinned).  Each run starts a fresh server, loads it ${WARMUP} s"
echo "(tiering), attaches the tool, waits until it collects and ${SETTLE} s more, measures ${D} s of load,"
echo "then stops the tool.  b: \`tracerig -c ep.ini -p PID -d 0\`, ep.ini being \`[tracerig] name = ep\`"
echo "and \`[eventpipe]\` (providers = default, perfcollect's set), stopped by SIGTERM; c: \`dotnet-trace"
echo "collect -p PID --providers $(cat "$tmp/c-providers" 2>/dev/null || echo "$providers") -o FILE\`,"
echo "the providers b's log named, stopped by SIGINT."
if [ "$FULL" = yes ]; then
	echo "d1: \`tracerig -c conf/profiles/dotnet.ini -p PID -d 0\` (CPU samples, EventPipe, perf maps"
	echo "switched on at attach, LTTng where the runtime's provider loads), the server started with no"
	echo "\`DOTNET_\` variable, stopped by SIGTERM; d2: what a user runs for the same data, the server"
	echo "started with \`DOTNET_PerfMapEnabled=1\`, c's dotnet-trace and \`perf record -k 1 -g -F $FREQ -p PID\`"
	echo "together, both stopped by one SIGINT, then \`perf inject --jit\`, \`perf script -F $fields\`"
	echo "and one \`zip\` of the text, the injected perf.data, /tmp/perf-PID.map and the .nettrace"
	echo "(as bench:dotnet's c: without \`DOTNET_PerfMapStubGranularity=2\` .NET 10 cuts its jitdump short, so"
	echo "perf inject has little to do; with it, inject took 40 s there)$([ "$NOLTTNG" != yes ] || echo "; d1n: d1 with dotnet.ini less its")"
	[ "$NOLTTNG" != yes ] || echo "\`[lttng]\` section (where the runtime's LTTng provider cannot load, LTTng records nothing)."
fi
echo "Configurations interleaved ($configs, $REPS times); medians (requests/s: the range too)."
echo "\"Stop to archive\": from the stop signal to the archive complete (tracerig's exit, its archive"
echo "written; dotnet-trace's exit, its .nettrace complete, rundown included; d2: the zip written);"
echo "tracerig's, from its log: \"runtime\" how long the runtime took to answer StopTracing (its"
echo "rundown written; the other backends flush meanwhile), \"flushed\" from the signal to the log's last"
echo "line (every backend stopped and its files written: perf_events' conversion finished, the perf maps"
echo "switched off, the .nettrace ended), \"packaging\" the rest (the zip written, tracerig's exit)."
echo "Events: the .nettrace read back by TraceEvent's EventPipeEventSource (what PerfView reads it with;"
echo "tests/dotnet/apps/perfview)$([ -f "$PERFVIEWCHECK" ] || echo ", not counted in this run: PerfViewCheck was not built")."
echo
echo "| configuration | runs | requests/s (range) | vs untraced | p50 (ms) | p99 (ms) | server CPU per request (µs) | tool CPU while collecting (ms) | stop to archive (ms) | .nettrace (KiB) | events (lost) | archive (KiB) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for c in $configs; do
	eval "label=\$label_$c"
	[ -s "$tmp/r-$c" ] || { echo "| $label | 0 | failed | | | | | | | | | |"; continue; }
	row="| $label | $(runs $c) | $(m $c 1) ($(span $c)) | $([ $c = a ] || lost $c) | $(m $c 2) | $(m $c 3) | $(m $c 5)"
	case $c in
	a) row="$row | | | | | |" ;;
	b) row="$row | $(m b 6) | $(m b 7): runtime $(m b 12), flushed $(m b 13), packaging $(m b 14) | $(m b 8) | $(m b 9) ($(m b 10)) | $(m b 11) |" ;;
	c) row="$row | $(m c 6) | $(m c 7) | $(m c 8) | $(m c 9) ($(m c 10)) | |" ;;
	d1 | d1n) row="$row | $(m $c 6) | $(m $c 7): runtime $(m $c 10), flushed $(m $c 11), packaging $(m $c 12) | $(m $c 9) | | $(m $c 8) |" ;;
	d2) row="$row | $(m d2 6) (dotnet-trace + perf record) | $(m d2 7): dotnet-trace's exit $(m d2 8), perf record's $(m d2 9), inject $(m d2 10) ($(m d2 13) jitted .so), script $(m d2 11), zip $(m d2 12) | $(m d2 15) | | $(m d2 14) |" ;;
	esac
	echo "$row"
done
echo
e=0
for c in $configs; do [ "$(errs $c)" = 0 ] || [ "$(errs $c)" = - ] || e=1; done
[ "$e" = 0 ] || echo "Some requests failed (wrk's errors: $(for c in $configs; do printf '%s %s; ' "$c" "$(errs $c)"; done))."
# What the figures show, from the figures.
rb=$(m b 1) rcc=$(m c 1)
echo "Throughput against untraced (a): tracerig's eventpipe (b) $(lost b), dotnet-trace (c) $(lost c)$([ "$FULL" != yes ] || echo "; tracerig -c dotnet.ini (d1) $(lost d1), dotnet-trace + perf record (d2) $(lost d2)")."
echo "Goal, tracerig's eventpipe loses no more throughput than dotnet-trace: $(awk -v b="$rb" -v c="$rcc" 'BEGIN {
	if (b == "-" || c == "-") print "not measured";
	else if (b + 0 >= c + 0) print "met";
	else printf "NOT met (%.1f%% fewer requests/s than c)", (c - b) * 100 / c }')$(
	[ -s "$tmp/r-b" ] && [ -s "$tmp/r-c" ] && awk -v lb="$(span b)" -v lc="$(span c)" 'BEGIN {
	split(lb, x, "-"); split(lc, y, "-"); if (x[2] + 0 >= y[1] + 0 && y[2] + 0 >= x[1] + 0) printf "; the ranges of b and c overlap" }')."
echo "The .nettrace was complete $(m b 7) ms after tracerig's SIGTERM (archive written) and $(m c 7) ms after"
echo "dotnet-trace's SIGINT$(awk -v b="$(m b 9)" -v c="$(m c 9)" 'BEGIN { if (b != "-" && c != "-" && c > 0) printf "; TraceEvent read %s events from tracerig'"'"'s, %s from dotnet-trace'"'"'s (%+.1f%%)", b, c, (b - c) * 100 / c }')."
if [ "$FULL" = yes ]; then
	r1=$(m d1 7) r2=$(m d2 7)
	echo "tracerig's whole .NET archive (d1) was ready $(ratio "$r1" "$r2") sooner after the stop than dotnet-trace's .nettrace"
	echo "plus perf record + perf inject + perf script + zip (d2): $r1 ms against $r2 ms (goal: 10x sooner: $(awk -v a="$r1" -v b="$r2" 'BEGIN {
		if (a == "-" || b == "-") print "not measured"; else if (b / a >= 10) print "met"; else print "NOT met" }'))."
	rt=$(m d1 10)
	[ "$rt" = - ] || [ "$r2" = - ] || echo "Of d1's $r1 ms, the runtime took $rt ms to answer StopTracing (its streaming thread sleeps 100 ms between writes, then the rundown is written: src/native/eventpipe/ep-session.c); an archive with the rundown cannot be ready sooner, and 10x sooner than d2 is $((r2 / 10)) ms$(awk -v a="$rt" -v b="$r2" 'BEGIN { if (a + 0 > b / 10) printf ", less than that" }'). tracerig's own share (d1 less the runtime's answer): $((r1 - rt)) ms."
	[ ! -s "$tmp/r-d1n" ] || echo "Without LTTng (d1n) tracerig's archive was ready in $(m d1n 7) ms, $(ratio "$(m d1n 7)" "$r2") sooner than d2's."
	if [ -s "$tmp/d1-lttng" ] && grep -q 'ust_providers_seen=0' "$tmp/d1-lttng"; then
		echo "tracerig's LTTng session recorded no runtime event in d1 ($(grep -c 'ust_providers_seen=0' "$tmp/d1-lttng") of"
		echo "$(wc -l <"$tmp/d1-lttng") runs: ust_providers_seen=0; this .NET's LTTng provider needs liblttng-ust.so.0):"
		echo "its runtime events are those of EventPipe."
	fi
fi
[ ! -s "$tmp/b-warn" ] || echo "tracerig's eventpipe said, in b: $(sort "$tmp/b-warn" | uniq -c | head -n 3 | sed 's/^ *//' | tr '\n' ';' | sed 's/;$//')."
[ "$perf_failures" = 0 ] || echo "perf failed $perf_failures time(s) during this run (those runs are left out)."
echo "One run of this benchmark took $t_all s (the build and tool install aside)."
say_load

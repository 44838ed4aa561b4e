#!/usr/bin/env bash
# .NET (issue 25): an ASP.NET Core service (tests/dotnet/apps/web, built
# here from source into the scratch directory) under the same load from wrk,
# untraced and traced five ways, side by side in one run:
#   a   untraced;
#   b   tracerig -c conf/profiles/dotnet.ini -p PID, the server started with
#       no DOTNET_ variable (tracerig switches its perf map and jitdump on
#       through the diagnostics socket), stopped by SIGTERM;
#   c   perfcollect's pipeline, the server started with DOTNET_PerfMapEnabled=1:
#       perf record -k 1 -g -F FREQ -p PID during the load, stopped by SIGINT,
#       then perf inject --jit, perf script and zip;
#   c2  the same with DOTNET_PerfMapStubGranularity=2 as well: .NET 10 writes
#       its jitdump whole only with it (what tracerig gives the commands it
#       launches), so that perf inject has the JIT code to turn into ELF files;
#   d   dotnet-trace collect -p PID --providers P, P the providers b's
#       tracerig enables (perfcollect's default set, as dotnet.ini's
#       [eventpipe] names it; from `tracerig -v --check`), stopped by SIGINT;
#   e   tracerig -c dotnet.ini -- dotnet Web.dll: the server launched by
#       tracerig (which gives it the profile's DOTNET_ variables), stopped by
#       SIGTERM.
# Each run: a fresh server, WARMUP s of load (tiering), the tool attached and
# ready, SETTLE s, D s of measured load (wrk: 1 thread, CONNS connections, a
# mix of 4 endpoints), the tool stopped.  The configurations are interleaved
# (a b c c2 d e, a b c c2 d e, ...) REPS times; the figures are medians.
#   bash bench/dotnet/run.sh [BUILDDIR]      (as root)
# Environment: D=10 (s), WARMUP=3 (s), SETTLE=1 (s), REPS=5, CONNS=16,
# FREQ=999 (Hz), C2=yes (run c2), LAUNCHED=yes (run e), DOTNET_TRACE (a dotnet-trace to use;
# default: installed from NuGet into the scratch directory, version
# DOTNET_TRACE_VERSION=10.0.750501).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=bench/dotnet
BUILD=${BUILD:-$top/_build/plain}
. "$top/bench/perf_events/lib.sh"
D=${D:-10}
WARMUP=${WARMUP:-3}
SETTLE=${SETTLE:-1}
REPS=${REPS:-5}
CONNS=${CONNS:-16}
FREQ=${FREQ:-999}
C2=${C2:-yes}
LAUNCHED=${LAUNCHED:-yes}
DOTNET_TRACE_VERSION=${DOTNET_TRACE_VERSION:-10.0.750501}
profile=$top/conf/profiles/dotnet.ini
# The workload, wrk, the server, the tools, the scratch directory.
. "$top/bench/dotnet/lib.sh"
[ -n "$dotnet_trace" ] || echo "$bench: d left out" >&2
# d's providers: exactly what b's tracerig enables (its `eventpipe:
# providers` line, in dotnet-trace's syntax), so that d and b ask the
# runtime for the same events.
"$tracerig" -v --check -c "$profile" >/dev/null 2>"$tmp/check.err" || true
providers=$(sed -n 's/.*eventpipe: providers //p' "$tmp/check.err" | head -n 1)
[ -n "$providers" ] || { echo "$bench: tracerig --check named no providers: $(tail -n 3 "$tmp/check.err" | tr '\n' ' ')" >&2; exit 1; }

# The server's samples in a perf script text (PID), and how many of them
# have an unnamed managed frame: one in JIT code (the object perf names
# after the perf map, perf inject's jitted-PID-N.so, or the W^X double
# mapping) or in a ReadyToRun image (a .dll mapping) left [unknown]:
# "samples unnamed percent unnamed_in_ReadyToRun unnamed_in_doublemapper"
# (the samples whose first unnamed managed frame is in a .dll, and in the W^X
# double mapping of JIT code).  The comm may hold
# blanks (".NET TP Worker"): the PID is found by its shape.
cat >"$tmp/managed.awk" <<'AWK'
/^[^\t]/ {
	mine = 0
	if (match($0, / [0-9]+\/[0-9]+ /)) { split(substr($0, RSTART + 1), ids, "/"); mine = ids[1] == pid }
	if (mine) n++
	bad = 0
	next
}
/^\t/ && mine && !bad && / \[unknown\] \((\/tmp\/perf-[0-9]+\.map|\/tmp\/jitted-[0-9]+-[0-9]+\.so|\/memfd:doublemapper.*|.*\.dll)\)$/ {
	bad = 1; unnamed++
	if (/\.dll\)$/) r2r++
	if (/doublemapper/) dm++
}
END { printf "%d %d %.1f %d %d\n", n, unnamed, n ? unnamed * 100 / n : 0, r2r, dm }
AWK

# b: appends "... end_to_archive_ms samples unnamed unnamed_pct unnamed_r2r
# unnamed_doublemapper archive_kib"
run_b() {
	local d=$tmp/b pid
	rm -rf "$d" && mkdir -p "$d"
	server_start || return 1
	pid=$server
	tracerig_attach "$d" "$profile" "$d/b.trace.zip" || { server_stop; return 1; }
	measure || { stop_all; return 1; }
	tracerig_stop
	server_stop
	if [ "$trc" != 0 ] || [ ! -s "$d/b.trace.zip" ]; then
		echo "$bench: tracerig failed ($trc): $(tail -n 3 "$d/err" | tr '\n' ' ')" >&2
		return 1
	fi
	grep -q 'dotnet_maps_enabled=1' "$d/err" || echo "$bench: tracerig did not switch the perf maps on" >&2
	# What LTTng got from the runtime (nothing where its provider cannot load).
	grep -o 'ust_providers_seen=[0-9]*, ust_providers_missing=[0-9]*' "$d/err" | head -n 1 >>"$tmp/b-lttng" || true
	echo "$meas $stop_ms $(unzip -p "$d/b.trace.zip" perf.data.txt | awk -v pid="$pid" -f "$tmp/managed.awk") \
$(($(stat -c %s "$d/b.trace.zip") / 1024))" >>"$tmp/r-b"
	rm -rf "$d"
}

# c, c2: appends "... end_to_archive_ms samples unnamed unnamed_pct
# unnamed_r2r unnamed_doublemapper archive_kib record_exit_ms inject_ms
# script_ms zip_ms jitted_files"
run_c() { # NAME [VAR=VALUE...]
	local name=$1 d=$tmp/c t0 t1 pid
	shift
	rm -rf "$d" && mkdir -p "$d"
	server_start DOTNET_PerfMapEnabled=1 "$@" || return 1
	pid=$server
	perf_record_start "$d" || { server_stop; return 1; }
	measure || { stop_all; return 1; }
	t0=$(now)
	kill -INT "$perfrec"
	perf_record_wait
	t1=$(now)
	perf_post "$d" "$pid" || { server_stop; return 1; }
	server_stop
	echo "$meas $((t_zip - t0)) $(awk -v pid="$pid" -f "$tmp/managed.awk" "$d/perf.data.txt") \
$(($(stat -c %s "$d/p.zip") / 1024)) $((t1 - t0)) $((t_inject - t1)) $((t_script - t_inject)) $((t_zip - t_script)) $jitted" >>"$tmp/r-$name"
	rm -rf "$d"
}

# d: appends "... end_to_file_ms nettrace_kib"
run_d() {
	local d=$tmp/d t0 t1
	rm -rf "$d" && mkdir -p "$d"
	server_start || return 1
	dotnet_trace_start "$d/d.nettrace" "$providers" || { server_stop; return 1; }
	measure || { stop_all; return 1; }
	t0=$(now)
	kill -INT "$tool"
	dotnet_trace_wait "$d/d.nettrace" || { server_stop; return 1; }
	t1=$(now)
	server_stop
	echo "$meas $((t1 - t0)) $(($(stat -c %s "$d/d.nettrace") / 1024))" >>"$tmp/r-d"
	rm -rf "$d"
}

# e: tracerig launching the server (tracerig -c dotnet.ini -- dotnet
# Web.dll ...: the maps on from the start, and whatever the profile gives a
# launched command), warmed up and measured as the others; appends what b
# does, and the share (percent) of the server's samples in the runtime's
# XplatEventLogger (EventSource events serialized for LTTng).
run_e() {
	local d=$tmp/e t0 t1 rc=0 pid
	rm -rf "$d" && mkdir -p "$d"
	port=$(free_port)
	# shellcheck disable=SC2086
	env $clean_env "$tracerig" -v -c "$profile" -d 0 -o "$d/e.trace.zip" \
		-- dotnet "$app" --urls "http://127.0.0.1:$port" >"$tmp/server.out" 2>"$d/err" &
	tool=$!
	if ! until_ready "grep -qs '^ready' '$tmp/server.out'" "$tool" 60; then
		echo "$bench: tracerig did not launch the server: $(tail -n 3 "$d/err" "$tmp/server.out" | tr '\n' ' ')" >&2
		stop_pid "$tool" TERM 30; tool=""; return 1
	fi
	pid=$(sed -n 's/^ready //p' "$tmp/server.out")
	server=$pid
	servers+=("$pid")
	sessiond=$(sed -n 's/.*started lttng-sessiond (pid \([0-9]*\)).*/\1/p' "$d/err" | head -n 1)
	tr '\0' '\n' <"/proc/$pid/environ" | grep -E '^(DOTNET_|COMPlus_)' | sort | tr '\n' ' ' >"$tmp/e-env" || true
	load "$WARMUP" && measure || { stop_all; return 1; }
	t0=$(now)
	kill -TERM "$tool"
	wait "$tool" || rc=$?
	t1=$(now)
	tool=""
	stop_pid "$sessiond" TERM 5
	sessiond=""
	# tracerig's SIGTERM leaves the command it launched running: stopped here.
	if kill -0 "$pid" 2>/dev/null; then echo 1 >>"$tmp/e-orphans"; fi
	server_stop
	if [ "$rc" != 0 ] && [ "$rc" != 3 ] || [ ! -s "$d/e.trace.zip" ]; then
		echo "$bench: tracerig (launching) failed ($rc): $(tail -n 3 "$d/err" | tr '\n' ' ')" >&2
		return 1
	fi
	unzip -p "$d/e.trace.zip" perf.data.txt >"$d/perf.data.txt"
	echo "$meas $((t1 - t0)) $(awk -v pid="$pid" -f "$tmp/managed.awk" "$d/perf.data.txt") \
$(($(stat -c %s "$d/e.trace.zip") / 1024)) $(awk -v pid="$pid" '
	/^[^\t]/ { if (mine && x) nx++; mine = 0; x = 0
		if (match($0, / [0-9]+\/[0-9]+ /)) { split(substr($0, RSTART + 1), ids, "/"); mine = ids[1] == pid }
		if (mine) n++; next }
	mine && /XplatEventLogger/ { x = 1 }
	END { if (mine && x) nx++; printf "%.1f", n ? nx * 100 / n : 0 }' "$d/perf.data.txt")" >>"$tmp/r-e"
	rm -rf "$d"
}

configs="a b c"
[ "$C2" != yes ] || configs="$configs c2"
[ -z "$dotnet_trace" ] || configs="$configs d"
[ "$LAUNCHED" != yes ] || configs="$configs e"
failed() { echo "$bench: a $1 run failed (left out)" >&2; }
t_start=$(now)
for i in $(seq "$REPS"); do
	for c in $configs; do
		echo "$bench: run $i of $REPS: $c" >&2
		case $c in
		a) run_a || failed a ;;
		b) run_b || failed b ;;
		c) run_c c || failed c ;;
		c2) run_c c2 DOTNET_PerfMapStubGranularity=2 || failed c2 ;;
		d) run_d || failed d ;;
		e) run_e || failed e ;;
		esac
	done
done
t_all=$((($(now) - t_start) / 1000))

# The figures.  m(FILE, COLUMN): median over the runs; n(FILE): runs.
m() { [ -s "$tmp/r-$1" ] && med "r-$1" "$2" || echo "-"; }
runs() { [ -s "$tmp/r-$1" ] && wc -l <"$tmp/r-$1" || echo 0; }
base=$(m a 1)
lost() { [ -s "$tmp/r-$1" ] && [ "$base" != - ] && pct "$(m "$1" 1)" || echo "-"; }
errs() { [ -s "$tmp/r-$1" ] && awk '{ s += $4 } END { print s + 0 }' "$tmp/r-$1" || echo "-"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.1fx", b / a; else print "-" }'; }
label_a="a. untraced"
label_b="b. tracerig \`-c dotnet -p PID\` (maps switched on at attach)"
label_c="c. perf record + perf inject --jit + perf script + zip (\`DOTNET_PerfMapEnabled=1\`)"
label_c2="c2. as c, with \`DOTNET_PerfMapStubGranularity=2\` too"
label_d="d. dotnet-trace collect --providers (runtime events, no CPU samples)"
label_e="e. tracerig \`-c dotnet -- dotnet Web.dll ...\` (launched by tracerig)"

echo "## .NET: an ASP.NET Core service under tracerig, perfcollect's pipeline and dotnet-trace"
echo
echo "Reproduce: \`bash bench/run.sh dotnet\` (or \`bash bench/dotnet/run.sh BUILDDIR\`), as root,"
echo "with the .NET SDK; this run: \`D=$D WARMUP=$WARMUP SETTLE=$SETTLE REPS=$REPS CONNS=$CONNS FREQ=$FREQ C2=$C2 LAUNCHED=$LAUNCHED bash bench/dotnet/run.sh\`"
echo "($(versions))."
echo "The workload is tests/dotnet/apps/web, an ASP.NET Core minimal API (JSON, LINQ, a"
echo "compiled Regex, async/await), loaded by \`wrk -t1 -c$CONNS -d${D}s\` cycling through its"
echo "four endpoints over loopback (the server and wrk share the $(nproc) CPUs; nothing pinned)."
echo "Each run starts a fresh server, loads it ${WARMUP} s (tiering), attaches the tool, waits"
echo "until it collects and ${SETTLE} s more, measures ${D} s of load, then stops the tool: b by"
echo "SIGTERM, \`tracerig -c conf/profiles/dotnet.ini -p PID -d 0\` (server started with no"
echo "\`DOTNET_\` variable); c \`perf record -k 1 -g -F $FREQ -p PID\` stopped by SIGINT, then"
echo "\`perf inject --jit\`, \`perf script -F $fields\` and \`zip\` of the text,"
echo "the injected perf.data and /tmp/perf-PID.map (the jitted-PID-N.so files perf inject"
echo "writes are left out); c2 the same on a server started with"
echo "\`DOTNET_PerfMapStubGranularity=2\` as well (without it .NET 10 stops writing its"
echo "jitdump early, so perf inject has nearly nothing to do); d \`dotnet-trace collect -p PID"
echo "--providers $providers\` (what b's tracerig enables: dotnet.ini's [eventpipe],"
echo "perfcollect's default set: GC, loader, JIT, NGen, contention, exceptions,"
echo "threading, compilation, verbose) stopped by SIGINT; e"
echo "\`tracerig -c conf/profiles/dotnet.ini -d 0 -- dotnet Web.dll --urls ...\`, the server"
echo "launched by tracerig, which gave it$([ -s "$tmp/e-env" ] && echo " \`$(sed 's/ $//' "$tmp/e-env")\`" || echo " the profile's variables"),"
echo "warmed up and measured in the same way, stopped by SIGTERM.  Configurations"
echo "interleaved ($configs, $REPS times); medians."
echo "\"To archive\": from the stop signal to the archive written (tracerig's exit; perf's"
echo "zip; for d, the .nettrace complete, rundown included).  \"Unnamed\": the server's samples"
echo "with a managed frame (JIT code, or a ReadyToRun .dll mapping) that is \`[unknown]\`, in"
echo "tracerig's perf.data.txt and in perf script's text after inject."
echo
echo "| configuration | runs | requests/s | vs untraced | p50 (ms) | p99 (ms) | server CPU per request (µs) | tool CPU while collecting (ms) | end of collection to archive (ms) | server samples | unnamed managed frame | archive (KiB) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for c in $configs; do
	eval "label=\$label_$c"
	[ -s "$tmp/r-$c" ] || { echo "| $label | 0 | failed | | | | | | | | | |"; continue; }
	row="| $label | $(runs $c) | $(m $c 1) | $([ $c = a ] || lost $c) | $(m $c 2) | $(m $c 3) | $(m $c 5)"
	case $c in
	a) row="$row | | | | | |" ;;
	b | e) row="$row | $(m $c 6) | $(m $c 7) | $(m $c 8) | $(m $c 10)% ($(m $c 9): $(m $c 11) in ReadyToRun code) | $(m $c 13) |" ;;
	c | c2) row="$row | $(m $c 6) (perf record) | $(m $c 7): record's exit $(m $c 14), inject $(m $c 15) ($(m $c 18) jitted .so), script $(m $c 16), zip $(m $c 17) | $(m $c 8) | $(m $c 10)% ($(m $c 9): $(m $c 11) in ReadyToRun code, $(m $c 12) in the W^X double mapping) | $(m $c 13) |" ;;
	d) row="$row | $(m d 6) | $(m d 7) (.nettrace) | | | $(m d 8) |" ;;
	esac
	echo "$row"
done
echo
e=0
for c in $configs; do [ "$(errs $c)" = 0 ] || [ "$(errs $c)" = - ] || e=1; done
[ "$e" = 0 ] || echo "Some requests failed (wrk's errors: $(for c in $configs; do printf '%s %s; ' "$c" "$(errs $c)"; done))."
# What the figures show, from the figures.
rb=$(m b 7) rc=$(m c 7) rc2=$(m c2 7)
echo "Throughput against untraced (a): tracerig $(lost b), perf record $(lost c)$([ "$C2" != yes ] || echo " (c2: $(lost c2))")$([ -z "$dotnet_trace" ] || echo ", dotnet-trace $(lost d)")."
echo "tracerig's archive was ready $(ratio "$rb" "$rc") sooner than perf's pipeline's (c)$([ "$C2" != yes ] || echo ", $(ratio "$rb" "$rc2") sooner than c2's")"
echo "(goal: 10x sooner: $(awk -v a="$rb" -v b="$rc" -v b2="${rc2/-/0}" 'BEGIN {
	if (a > 0 && b / a >= 10 && (b2 == 0 || b2 / a >= 10)) print "met";
	else if (a > 0 && b2 / a >= 10) print "met against c2, NOT against c, where perf inject finds a jitdump cut short and has nearly nothing to do";
	else print "NOT met" }'))."
echo "Samples with an unnamed managed frame: $(m b 10)% in tracerig's text, $(m c 10)% in perf's"
echo "after inject$([ "$C2" != yes ] || echo " ($(m c2 10)% with a whole jitdump)"); perf $(perf --version | cut -d' ' -f3) does not look JIT code"
echo "in the W^X double mapping (/memfd:doublemapper) up in perf-PID.map (dotnet/runtime#97765):"
echo "only what perf inject turned into jitted-PID-N.so is named."
if [ "$C2" = yes ] && awk -v b="$(m b 10)" -v c="$(m c2 10)" 'BEGIN { exit !(b + 0 > c + 0) }'; then
	echo "Attached (b), tracerig left more unnamed than perf with a whole jitdump (c2): what the"
	echo "runtime set up before its maps were switched on (stubs; ReadyToRun methods, $(m b 11) of b's"
	echo "$(m b 9)) it does not report again$([ ! -s "$tmp/r-e" ] || echo "; launched (e), with the maps on from the start, $(m e 10)%")."
fi
if [ -s "$tmp/b-lttng" ] && grep -q 'ust_providers_seen=0' "$tmp/b-lttng"; then
	echo "tracerig's LTTng session recorded no runtime event ($(grep -c 'ust_providers_seen=0' "$tmp/b-lttng") of"
	echo "$(wc -l <"$tmp/b-lttng") runs: ust_providers_seen=0): this .NET's LTTng provider links liblttng-ust.so.0,"
	echo "which Debian 12 lacks, so b's figures are those of CPU sampling and perf maps; d got"
	echo "the runtime's events over EventPipe."
fi
if [ -s "$tmp/r-e" ]; then
	echo "Launched by tracerig (e), the server's throughput was $(lost e) against untraced;"
	echo "$(m e 14)% of its samples were under the runtime's XplatEventLogger, which"
	echo "\`DOTNET_EnableEventLog=1\` switches on to serialize every EventSource event (Kestrel's,"
	echo "ASP.NET's, per request) for LTTng.  tracerig gives a launched command that variable only"
	echo "where the installed runtime's LTTng provider can load (before ec4e888 it always did:"
	echo "-94.3% then, 47% of the samples in the event logger, with no event reaching LTTng)."
fi
[ ! -s "$tmp/e-orphans" ] || echo "In $(wc -l <"$tmp/e-orphans") of $(runs e) e runs the server was still running after tracerig exited on SIGTERM (the bench stopped it)."
[ "$perf_failures" = 0 ] || echo "perf failed $perf_failures time(s) during this run (those runs are left out)."
echo "One run of this benchmark took $t_all s (the build and tool install aside)."
say_load

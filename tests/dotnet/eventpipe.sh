#!/usr/bin/env bash
# The eventpipe backend on the real .NET 10 runtime: runtime events over the
# diagnostics IPC into COMM.PID.nettrace, read back by TraceEvent's
# EventPipeEventSource (what PerfView reads them with) and matched to what
# the workload did: so many collections, so many exceptions of its type,
# its methods named by JIT and rundown events, contention.  A launched
# command (through tracerig's diagnostic port, suspended until its session
# runs), running processes (-p, two at once, one that exits mid-session),
# and a process that is not .NET.  The manifest counts the events by kind
# as TraceEvent does (tests/dotnet/eventpipe_lost.sh: those the runtime
# dropped).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/dotnet/lib-dotnet.sh"
need_plugins perf_events eventpipe
dotnet_app perfview
PV=$DOTNET_APP
dotnet_app hot
HOT_DLL=$DOTNET_APP
printf '[tracerig]\nname = ep\n[perf_events]\n[eventpipe]\n' >"$TEST_TMP/p.ini"
printf '[tracerig]\nname = ep\n[eventpipe]\n' >"$TEST_TMP/ep-only.ini"

# field KEYWORD FILE: the first field after KEYWORD on its line.
field() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }
# count KEYWORD NAME FILE: the count on the "KEYWORD COUNT NAME" line (0 if none).
count() { awk -v k="$1" -v n="$2" '$1 == k && $3 == n { c = $2 } END { print c + 0 }' "$3"; }
# ep_counter NAME MANIFEST: the eventpipe backend's counter NAME ("none" if unset).
ep_counter() {
	python3 -c 'import json, sys
m = json.load(open(sys.argv[2]))
print([p for p in m["plugins"] if p["name"] == "eventpipe"][0]["counters"].get(sys.argv[1], "none"))' "$1" "$2"
}
# read_nettrace FILE OUT: TraceEvent's view of FILE into OUT; its exit status.
read_nettrace() {
	dotnet "$PV" nettrace "$1" --method '^Hot\.Work::' >"$2" 2>"$2.err"
}

# --- a launched command: every event from before Main to the rundown
rc=0
env -u DOTNET_DiagnosticPorts TMPDIR="$TEST_TMP" timeout 120 "$TRACERIG" -c "$TEST_TMP/p.ini" \
	-o "$TEST_TMP/a.trace.zip" -- dotnet "$HOT_DLL" 3 cpu exceptions gc contention \
	>"$TEST_TMP/a.out" 2>&1 </dev/null || rc=$?
check_eq "launched: tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
pid=$(awk '/^ready /{print $2}' "$TEST_TMP/a.out")
done_line=$(grep '^done ' "$TEST_TMP/a.out")
gen0=$(sed -n 's/.* gen0=\([0-9]*\).*/\1/p' <<<"$done_line")
thrown=$(sed -n 's/.* thrown=\([0-9]*\).*/\1/p' <<<"$done_line")
nt="$TEST_TMP/a/dotnet.$pid.nettrace"
check "launched: the archive holds dotnet.$pid.nettrace" test -s "$nt"
check_grep "launched: the runtime connected to tracerig's port and its session ran" \
	"pid $pid: EventPipe session [0-9]+ \\(CollectTracing2\\) into dotnet\\.$pid\\.nettrace" \
	"$TEST_TMP/a/tracerig.log"
prc=0
read_nettrace "$nt" "$TEST_TMP/a.pv" || prc=$?
check_eq "launched: EventPipeEventSource reads it" 0 "$prc"
[ "$prc" = 0 ] || sed 's/^/# /' "$TEST_TMP/a.pv.err" | head -5
gc_start=$(count event Microsoft-Windows-DotNETRuntime/GC/Start "$TEST_TMP/a.pv")
gc_stop=$(count event Microsoft-Windows-DotNETRuntime/GC/Stop "$TEST_TMP/a.pv")
check_eq "launched: a GC/Start for every collection the workload counted (gen0=$gen0)" "$gen0" "$gc_start"
check_eq "launched: a GC/Stop for every GC/Start" "$gc_start" "$gc_stop"
check_eq "launched: every InvalidOperationException thrown is an event (thrown=$thrown)" "$thrown" \
	"$(count exception System.InvalidOperationException "$TEST_TMP/a.pv")"
check "launched: the workload's methods are named (JIT and rundown events)" \
	test "$(awk '$1 == "method_match" { print $2; exit }' "$TEST_TMP/a.pv")" -ge 5
check "launched: lock contention is seen" \
	test "$(count event Microsoft-Windows-DotNETRuntime/Contention/Start "$TEST_TMP/a.pv")" -ge 1
check "launched: loader events from before Main (the runtime waited for its session)" \
	test "$(count event Microsoft-Windows-DotNETRuntime/Loader/AssemblyLoad "$TEST_TMP/a.pv")" -ge 3
check_eq "launched: no event lost" 0 "$(field lost "$TEST_TMP/a.pv")"
check_grep "launched: the same process's CPU samples beside it" "^dotnet +$pid/" "$TEST_TMP/a/perf.data.txt"
check_grep "launched: the manifest counts the process" '"processes": 1' "$TEST_TMP/a/manifest.json"
check_grep "launched: the .nettrace was deflated as it grew, not all at packaging" \
	"dotnet\\.$pid\\.nettrace: .* deflated before packaging" "$TEST_TMP/a/tracerig.log"
check_grep "launched: and the bytes of its file" "\"bytes\": $(stat -c %s "$nt")" "$TEST_TMP/a/manifest.json"
check_grep "launched: and its events, as many as TraceEvent reads ($(field events "$TEST_TMP/a.pv"))" \
	"\"events\": $(field events "$TEST_TMP/a.pv")," "$TEST_TMP/a/manifest.json"
# Its events by kind, counted as the stream came: the workload's own
# counts, TraceEvent's for the same file, and none lost.
m="$TEST_TMP/a/manifest.json"
check_eq "launched: events_gc_start, one for every collection the workload counted (gen0=$gen0)" \
	"$gen0" "$(ep_counter events_gc_start "$m")"
check "launched: events_exception_thrown, every exception the workload threw (thrown=$thrown) and no fewer" \
	test "$(ep_counter events_exception_thrown "$m")" -ge "${thrown:-1}"
for kind in gc_start:GC/Start gc_end:GC/Stop exception_thrown:Exception/Start \
	method_load:Method/LoadVerbose contention_start:Contention/Start \
	threadpool_adjustment:ThreadPoolWorkerThreadAdjustment/Adjustment; do
	check_eq "launched: events_${kind%%:*}, as many as TraceEvent's ${kind#*:}" \
		"$(count event "Microsoft-Windows-DotNETRuntime/${kind#*:}" "$TEST_TMP/a.pv")" \
		"$(ep_counter "events_${kind%%:*}" "$m")"
done
check "launched: the workload's methods are in events_method_load" \
	test "$(ep_counter events_method_load "$m")" -ge 5
check "launched: the kinds, events_other included, add up to the events" python3 -c '
import json, sys
c = [p for p in json.load(open(sys.argv[1]))["plugins"] if p["name"] == "eventpipe"][0]["counters"]
kinds = {k: v for k, v in c.items() if k.startswith("events_") and k != "events_lost"}
assert len(kinds) == 7 and kinds["events_other"] > 0 and sum(kinds.values()) == c["events"], c
' "$m"
check_eq "launched: events_lost 0, as TraceEvent's EventsLost" "0 0" \
	"$(ep_counter events_lost "$m") $(field lost "$TEST_TMP/a.pv")"
check_no_grep "launched: and no warning of dropped events" "the runtime dropped" "$TEST_TMP/a/tracerig.log"
port=$(sed -n 's/.*DOTNET_DiagnosticPorts=\([^,]*\),suspend$/\1/p' "$TEST_TMP/a/tracerig.log")
check "launched: the command was given a suspending port" test -n "$port"
check "launched: and it is gone from /tmp" test ! -e "${port:-/}" -a ! -e "$(dirname "${port:-/}")/."


# --- tracerig killed (SIGKILL) while a launched runtime is connected to
# its port: the watchdog removes the port from /tmp, and the runtime, long
# resumed, runs on.
env -u DOTNET_DiagnosticPorts TMPDIR="$TEST_TMP" "$TRACERIG" -c "$TEST_TMP/p.ini" \
	-o "$TEST_TMP/k.trace.zip" -- dotnet "$HOT_DLL" 20 >"$TEST_TMP/k.out" 2>&1 </dev/null &
tr=$!
on_exit "kill -9 $tr 2>/dev/null"
for _ in $(seq 300); do grep -q '^ready' "$TEST_TMP/k.out" && break; sleep 0.1; done
kpid=$(awk '/^ready /{print $2}' "$TEST_TMP/k.out")
on_exit "kill ${kpid:-$tr} 2>/dev/null"
# Its port's directory, as the runtime was told it (other tests may be
# making ports of their own in /tmp meanwhile).
kport=$(tr '\0' '\n' <"/proc/${kpid:-0}/environ" 2>/dev/null |
	sed -n 's|^DOTNET_DiagnosticPorts=\(/tmp/tracerig-eventpipe\.[^/]*\)/.*|\1|p')
check "killed: the launched runtime ran (resumed through the port)" test -n "$kpid"
check "killed: its port was there" test -n "$kport" -a -d "${kport:-/nonexistent}"
kill -9 "$tr"
wait "$tr" 2>/dev/null
for _ in $(seq 100); do [ -e "${kport:-/nonexistent}" ] || break; sleep 0.1; done
check "killed: the watchdog removed the port from /tmp" test -n "$kport" -a ! -e "${kport:-/}"
check "killed: the runtime runs on" kill -0 "${kpid:-0}"
[ -z "$kpid" ] || kill "$kpid" 2>/dev/null

# --- the same workload and providers recorded by dotnet-trace: the same
# event kinds, and the counts the workload fixes equal to what it counted.
# (Contention is left out: whether two threads meet on the lock depends on
# the machine.)
kinds="GC/Start GC/Stop Exception/Start Method/LoadVerbose Loader/AssemblyLoad Loader/ModuleLoad"
if dotnet_tool dotnet-trace 10.0.750501; then
	providers=$(sed -n 's/.*eventpipe: providers //p' "$TEST_TMP/a/tracerig.log" | head -1)
	check "the archive's log says which providers were enabled, in dotnet-trace's syntax" test -n "$providers"
	rc=0
	(cd "$TEST_TMP" && env -u DOTNET_DiagnosticPorts timeout 120 "$DOTNET_TOOL" collect --show-child-io \
		--providers "$providers" -o "$TEST_TMP/dt.nettrace" -- dotnet "$HOT_DLL" 3 cpu exceptions gc contention \
		</dev/null >"$TEST_TMP/dt.out" 2>&1) || rc=$?
	check_eq "dotnet-trace collect with those providers exits 0" 0 "$rc"
	read_nettrace "$TEST_TMP/dt.nettrace" "$TEST_TMP/dt.pv"
	dt_done=$(grep '^done ' "$TEST_TMP/dt.out")
	check_eq "dotnet-trace: a GC/Start for every collection its run counted" \
		"$(sed -n 's/.* gen0=\([0-9]*\).*/\1/p' <<<"$dt_done")" \
		"$(count event Microsoft-Windows-DotNETRuntime/GC/Start "$TEST_TMP/dt.pv")"
	check_eq "dotnet-trace: every exception its run threw" \
		"$(sed -n 's/.* thrown=\([0-9]*\).*/\1/p' <<<"$dt_done")" \
		"$(count exception System.InvalidOperationException "$TEST_TMP/dt.pv")"
	for k in $kinds; do
		ours=$(count event "Microsoft-Windows-DotNETRuntime/$k" "$TEST_TMP/a.pv")
		theirs=$(count event "Microsoft-Windows-DotNETRuntime/$k" "$TEST_TMP/dt.pv")
		check "$k: in both traces (tracerig $ours, dotnet-trace $theirs)" test "$ours" -gt 0 -a "$theirs" -gt 0
	done
	awk '$1 == "event" { print $3 }' "$TEST_TMP/dt.pv" | sort >"$TEST_TMP/dt.kinds"
	awk '$1 == "event" { print $3 }' "$TEST_TMP/a.pv" | sort >"$TEST_TMP/a.kinds"
	echo "# event kinds only dotnet-trace has: $(comm -23 "$TEST_TMP/dt.kinds" "$TEST_TMP/a.kinds" | tr '\n' ' ')"
	echo "# event kinds only tracerig has: $(comm -13 "$TEST_TMP/dt.kinds" "$TEST_TMP/a.kinds" | tr '\n' ' ')"
else
	skip "compared with dotnet-trace" "$DOTNET_TOOL_WHY"
fi

# --- two running processes at once, attached with -p; one of them exits
# during the session and keeps what it sent.
hot_start 60 exceptions gc
p1=$HOT_PID
out1=$HOT_OUT
hot_start 1.5 exceptions
p2=$HOT_PID
out2=$HOT_OUT
# --check says, per process, which way its runtime events take.
run_tracerig --check -c "$TEST_TMP/ep-only.ini" -p "$p1"
check_grep "--check -p: the runtime's version and the way its events take" \
	"note: pid $p1: \.NET [0-9]+\.[0-9]+\.[0-9]+: runtime events over EventPipe" "$TEST_TMP/out"
run_tracerig --check -c "$TEST_TMP/ep-only.ini"
check_grep "--check system-wide: the .NET processes found now, by PID and name" \
	"note: system-wide: [0-9]+ \.NET process\(es\) serve a diagnostic socket now \((.*, )?$p1 dotnet" \
	"$TEST_TMP/out"
run_tracerig -c "$TEST_TMP/ep-only.ini" -p "$p1" -p "$p2" -d 4 -o "$TEST_TMP/b.trace.zip"
check_eq "-p: tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/b.trace.zip" "$TEST_TMP/b"
for p in "$p1" "$p2"; do
	check "-p: dotnet.$p.nettrace is in the archive" test -s "$TEST_TMP/b/dotnet.$p.nettrace"
	prc=0
	read_nettrace "$TEST_TMP/b/dotnet.$p.nettrace" "$TEST_TMP/b.$p.pv" || prc=$?
	check_eq "-p: EventPipeEventSource reads pid $p's file" 0 "$prc"
	check "-p: pid $p's exceptions are there" \
		test "$(count exception System.InvalidOperationException "$TEST_TMP/b.$p.pv")" -ge 1
done
check "-p: the process that ran on has its methods named by the rundown" \
	test "$(count event Microsoft-Windows-DotNETRuntimeRundown/Method/DCStopVerbose "$TEST_TMP/b.$p1.pv")" -ge 100
check_grep "-p: the process that exited had ended by then" '^done ' "$out2"
check_grep "-p: the manifest counts both" '"processes": 2' "$TEST_TMP/b/manifest.json"
kill "$p1" 2>/dev/null
wait "$p1" 2>/dev/null
: "$out1"

# --- a process in its own mount and PID namespaces with a private /tmp,
# traced from the host: its socket is found in its root, its file is
# named by its host PID.
container_hot "$TEST_TMP/c.out" 60 exceptions gc
hostpid=$CONTAINED_PID
if [ -n "$hostpid" ]; then
	run_tracerig -c "$TEST_TMP/ep-only.ini" -p "$hostpid" -d 2 -o "$TEST_TMP/c.trace.zip"
	check_eq "container: tracerig exits 0" 0 "$rc"
	unzip_archive "$TEST_TMP/c.trace.zip" "$TEST_TMP/c"
	check "container: dotnet.$hostpid.nettrace, named by its host PID" test -s "$TEST_TMP/c/dotnet.$hostpid.nettrace"
	prc=0
	read_nettrace "$TEST_TMP/c/dotnet.$hostpid.nettrace" "$TEST_TMP/c.pv" || prc=$?
	check_eq "container: EventPipeEventSource reads it" 0 "$prc"
	check "container: its exceptions and collections are there" \
		test "$(count exception System.InvalidOperationException "$TEST_TMP/c.pv")" -ge 1 -a \
		"$(count event Microsoft-Windows-DotNETRuntime/GC/Start "$TEST_TMP/c.pv")" -ge 1
	check_grep "container: the events carry its own PID (1)" '^pid [0-9]+ 1( |$)' "$TEST_TMP/c.pv"
else
	not_ok "the containerised workload started" "$(cat "$TEST_TMP/c.out")"
fi
kill -KILL "$CONTAINER_PID" 2>/dev/null

# --- hostile sockets: a process that is not .NET listening where a
# runtime's diagnostic socket would be.  Each is given up on within its
# deadline and named; nothing crashes, nothing hangs.
if command -v python3 >/dev/null 2>&1; then
	printf '[tracerig]\nname = ep\n[eventpipe]\nconnect_timeout = 500ms\nstop_timeout = 1s\nmax_size = 1M\n' \
		>"$TEST_TMP/hostile.ini"
	for mode in mute garbage huge flood; do
		fake_runtime "$mode" "$mode" || continue
		rc=0
		TMPDIR="$TEST_TMP" timeout 60 "$TRACERIG" -c "$TEST_TMP/hostile.ini" -p "$FAKE_PID" -d 1 \
			-o "$TEST_TMP/$mode.trace.zip" >"$TEST_TMP/$mode.out" 2>&1 </dev/null || rc=$?
		check "hostile ($mode): tracerig ends by itself, without a crash (exit $rc)" \
			test "$rc" -ne 124 -a "$rc" -lt 128
		kill "$FAKE_PID" 2>/dev/null
	done
	check_grep "hostile (mute): given up at the deadline, and said" \
		"pid [0-9]+: no runtime events: CollectTracing2: no answer in time" "$TEST_TMP/mute.out"
	check_grep "hostile (garbage): refused as no reply" \
		"pid [0-9]+: no runtime events: CollectTracing2: the answer is not a diagnostics IPC reply" "$TEST_TMP/garbage.out"
	check_grep "hostile (huge): a declared length with nothing behind it is given up on" \
		"pid [0-9]+: no runtime events: CollectTracing2: " "$TEST_TMP/huge.out"
	unzip_archive "$TEST_TMP/flood.trace.zip" "$TEST_TMP/flood"
	f=$(ls "$TEST_TMP/flood/"*.nettrace 2>/dev/null | head -1)
	check_eq "hostile (flood): its file is cut at max_size (1M)" 1048576 "$(stat -c %s "$f" 2>/dev/null)"
	check_grep "hostile (flood): and the log says so" "the file reached max_size" "$TEST_TMP/flood.out"
else
	skip "hostile sockets" "needs python3 (the fake runtimes)"
fi

# --- flight mode: EventPipe cannot drop a stream's oldest events, so the
# session is a chain of sessions rotated every half window (and on each
# snapshot), each a whole .nettrace with its rundown.  A snapshot while the
# workload runs, and the final one: every file read by TraceEvent, the
# methods named in each, and no exception lost at a rotation.  The window
# (20 s, a rotation every 10 s) holds the whole run (16 s of work): the
# final snapshot has every session, the one after SIGUSR1 rotated again
# after half a window, seconds before the workload ends.
printf '[tracerig]\nname = epf\nmode = flight\nwindow = 20s\n[eventpipe]\nproviders = gc, exceptions\n' \
	>"$TEST_TMP/f.ini"
mkdir -p "$TEST_TMP/f"
env -u DOTNET_DiagnosticPorts TMPDIR="$TEST_TMP" "$TRACERIG" -c "$TEST_TMP/f.ini" -d 90 \
	-o "$TEST_TMP/f" -- dotnet "$HOT_DLL" 16 exceptions gc >"$TEST_TMP/f.out" 2>&1 </dev/null &
fpid=$!
on_exit "kill $fpid 2>/dev/null"
for _ in $(seq 600); do grep -q '^ready ' "$TEST_TMP/f.out" && break; sleep 0.1; done
kill -USR1 "$fpid"
for _ in $(seq 600); do grep -q 'snapshot .*\.trace\.zip' "$TEST_TMP/f.out" && break; sleep 0.1; done
frc=0
wait "$fpid" || frc=$?
check_eq "flight: tracerig exits 0" 0 "$frc"
pid=$(awk '/^ready /{print $2}' "$TEST_TMP/f.out")
thrown=$(sed -n 's/^done .* thrown=\([0-9]*\).*/\1/p' "$TEST_TMP/f.out")
mapfile -t snaps < <(ls "$TEST_TMP/f/"epf-*.trace.zip 2>/dev/null)
check_eq "flight: two snapshots (SIGUSR1 and the stop)" 2 "${#snaps[@]}"
# flight_files ARCHIVE DIR: unzips; prints the sequence numbers of its
# dotnet.PID.K.nettrace files, in order.
flight_files() {
	unzip_archive "$1" "$2"
	ls "$2" | sed -n "s/^dotnet\\.$pid\\.\\([0-9]*\\)\\.nettrace$/\\1/p" | sort -n
}
for i in 0 1; do
	[ -n "${snaps[$i]:-}" ] || continue
	name=$([ "$i" = 0 ] && echo "the SIGUSR1 snapshot" || echo "the final snapshot")
	mapfile -t seqs < <(flight_files "${snaps[$i]}" "$TEST_TMP/f$i")
	check "flight: $name holds dotnet.$pid.K.nettrace files (${seqs[*]:-none})" test "${#seqs[@]}" -ge 1
	total=0 unread=0 unnamed=0 lostev=0
	for k in "${seqs[@]}"; do
		f="$TEST_TMP/f$i/dotnet.$pid.$k.nettrace"
		if read_nettrace "$f" "$f.pv"; then
			total=$((total + $(count exception System.InvalidOperationException "$f.pv")))
			[ "$(awk '$1 == "method_match" { print $2; exit }' "$f.pv")" -ge 1 ] ||
				unnamed=$((unnamed + 1))
			[ "$(field lost "$f.pv")" = 0 ] || lostev=$((lostev + 1))
		else
			unread=$((unread + 1))
			sed 's/^/# /' "$f.pv.err" | head -5
		fi
	done
	check_eq "flight: $name: EventPipeEventSource reads every file" 0 "$unread"
	check_eq "flight: $name: each names the workload's methods (its own rundown)" 0 "$unnamed"
	check_eq "flight: $name: no file lost events" 0 "$lostev"
	check "flight: $name: consecutive sessions (${seqs[*]:-none})" \
		test "${#seqs[@]}" -ge 1 -a "${seqs[-1]:-0}" = "$(( ${seqs[0]:-0} + ${#seqs[@]} - 1 ))"
	if [ "$i" = 0 ]; then
		check "flight: the SIGUSR1 snapshot holds exceptions thrown so far ($total)" test "$total" -ge 1
	else
		# The whole run is inside the window: every session is here.
		check_eq "flight: the final snapshot starts at the first session" 1 "${seqs[0]:-}"
		check "flight: at least three sessions (the SIGUSR1 rotation, one after half a window, the last)" \
			test "${#seqs[@]}" -ge 3
		# A new session starts before the old one stops: what the
		# runtime emits in between is in both, never in neither.
		check "flight: no exception lost at a rotation ($total events for thrown=$thrown)" \
			test -n "$thrown" -a "$total" -ge "${thrown:-1}" -a "$total" -le "$(( ${thrown:-0} * 3 / 2 ))"
		check "flight: the manifest counts the rotations" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
ep = [p for p in m["plugins"] if p["name"] == "eventpipe"][0]
assert ep["counters"]["rotations"] >= 2, ep
' "$TEST_TMP/f$i/manifest.json"
	fi
done
check "flight: no session file is left in the staging directory" \
	sh -c "! ls -d '$TEST_TMP'/*staging* 2>/dev/null | grep -q ."

# --- not .NET: said plainly, nothing pretended
sleep 30 &
sp=$!
on_exit "kill $sp 2>/dev/null"
run_tracerig --check -c "$TEST_TMP/ep-only.ini" -p "$sp"
check_grep "--check -p of a process that is not .NET: eventpipe is not usable, and why" \
	"eventpipe .*NOT USABLE: pid $sp: no runtime events: no diagnostic socket" "$TEST_TMP/out"
run_tracerig -c "$TEST_TMP/ep-only.ini" -p "$sp" -d 1 -o "$TEST_TMP/c.trace.zip"
check_grep "-p of a process that is not .NET: the log says why there are no events" \
	"pid $sp: no runtime events: no diagnostic socket" "$TEST_TMP/out"
run_tracerig -c "$TEST_TMP/p.ini" -o "$TEST_TMP/d.trace.zip" -- sleep 0.5
check_eq "a launched command that is not .NET: tracerig exits 0 (the CPU samples are kept)" 0 "$rc"
check_grep "and says no runtime connected" \
	"no \\.NET runtime of the launched command connected to the diagnostic port: not a \\.NET program" \
	"$TEST_TMP/out"
unzip_archive "$TEST_TMP/d.trace.zip" "$TEST_TMP/d"
check "and the archive has no .nettrace" sh -c "! ls '$TEST_TMP/d/'*.nettrace 2>/dev/null | grep -q ."

# --- a bad provider string: named with what to write instead; a run that
# has nothing else to collect fails rather than record nothing.
printf '[tracerig]\nname = ep\n[eventpipe]\nproviders = gcc\n' >"$TEST_TMP/bad.ini"
run_tracerig --check -c "$TEST_TMP/bad.ini"
check_grep "a misspelt preset: --check says eventpipe is not usable, and why" \
	'eventpipe .*NOT USABLE: \[eventpipe\] providers: unknown preset "gcc" \(did you mean gc\?' "$TEST_TMP/out"
run_tracerig -c "$TEST_TMP/bad.ini" -d 1 -o "$TEST_TMP/bad.trace.zip"
check "and a run with nothing else to collect fails" test "$rc" -ne 0
# Nothing left once sample_profiler = no takes the only provider out: the
# profile's error, at its line, in --check and in the run alike.
printf '[tracerig]\nname = ep\n[eventpipe]\nproviders = Microsoft-DotNETCore-SampleProfiler\nsample_profiler = no\n' \
	>"$TEST_TMP/none.ini"
run_tracerig --check -c "$TEST_TMP/none.ini"
check_eq "no provider left: --check exit 2" 2 "$rc"
check_grep "no provider left: said at its line, with what to do" \
	"none\.ini:4: \[eventpipe\] providers: nothing is left to enable once sample_profiler = no .*set sample_profiler = yes" \
	"$TEST_TMP/out"
run_tracerig -c "$TEST_TMP/none.ini" -d 1 -o "$TEST_TMP/none.trace.zip"
check_eq "no provider left: the run is a profile error too (exit 2), said once" "2 1" \
	"$rc $(grep -c 'nothing is left to enable' "$TEST_TMP/out")"
# Said by the plugin's validate: before any backend starts, beside
# another backend's mistakes.
printf '[tracerig]\nname = ep\n[eventpipe]\nproviders = gcc, gc\n[testa]\njournal = %s\npayload = refused\n' \
	"$TEST_TMP/journal" >"$TEST_TMP/both.ini"
run_tracerig -c "$TEST_TMP/both.ini" -d 1 -o "$TEST_TMP/both.trace.zip"
check_eq "two backends' wrong values: exit 2" 2 "$rc"
check_grep "eventpipe's, at its line" \
	'both\.ini:4: \[eventpipe\] providers: unknown preset "gcc" \(did you mean gc\?' "$TEST_TMP/out"
check_grep "and the other backend's" "both\.ini:7: \[testa\] payload: 'refused' is refused" "$TEST_TMP/out"
check_grep "counted together" '^tracerig: 2 errors in the profile; nothing was collected$' "$TEST_TMP/out"
check_eq "no backend was initialised" "testa validate" "$(paste -sd, "$TEST_TMP/journal")"
run_tracerig --check -c "$TEST_TMP/both.ini"
check_eq "--check of it: exit 2, eventpipe's said once" "2 1" \
	"$rc $(grep -c 'both\.ini:4: \[eventpipe\] providers: unknown preset "gcc"' "$TEST_TMP/out")"
check_grep "--check: eventpipe NOT USABLE, naming it" \
	'eventpipe .*NOT USABLE: \[eventpipe\] providers: unknown preset "gcc"' "$TEST_TMP/out"

# --- `tracerig report` on the launched run's archive: its runtime section
# reads the .nettrace itself (lib/nettrace.c) and must count what TraceEvent
# and the workload count.  Then the same archive with a malformed .nettrace
# and one cut short beside the real one.  (Its own copies of the run's
# numbers: the sections above reuse the names.)
a_done=$(grep '^done ' "$TEST_TMP/a.out")
a_pid=$(awk '/^ready /{ print $2 }' "$TEST_TMP/a.out")
a_gen0=$(sed -n 's/.* gen0=\([0-9]*\).*/\1/p' <<<"$a_done")
a_gen2=$(sed -n 's/.* gen2=\([0-9]*\).*/\1/p' <<<"$a_done")
a_thrown=$(sed -n 's/.* thrown=\([0-9]*\).*/\1/p' <<<"$a_done")
rrc=0
"$TRACERIG" report --top 1000 "$TEST_TMP/a.trace.zip" >"$TEST_TMP/a.report" 2>&1 || rrc=$?
check_eq "report: exits 0 on the launched run's archive" 0 "$rrc"
check_grep "report: the runtime section names dotnet.$a_pid.nettrace and its pid" \
	"^  dotnet\\.$a_pid\\.nettrace  pid $a_pid, [0-9]+ events of [0-9]+ kinds" "$TEST_TMP/a.report"
r_gcs=$(awk '$1 == "GCs" { print $2; exit }' "$TEST_TMP/a.report")
check_eq "report: as many GCs as the workload counted (gen0=$a_gen0)" "$a_gen0" "$r_gcs"
check_eq "report: as many GCs as TraceEvent's GC/Start" \
	"$(count event Microsoft-Windows-DotNETRuntime/GC/Start "$TEST_TMP/a.pv")" "$r_gcs"
check_eq "report: the gen2 collections the workload counted (gen2=$a_gen2)" "$a_gen2" \
	"$(sed -n 's/^ *GCs .*gen2 \([0-9]*\).*/\1/p' "$TEST_TMP/a.report")"
check_grep "report: the GC pauses, suspension to restart" \
	'^    GC pauses    [1-9][0-9]*, [0-9.]+ ms in all, [0-9.]+ ms the longest$' "$TEST_TMP/a.report"
check_eq "report: every InvalidOperationException thrown (thrown=$a_thrown)" "$a_thrown" \
	"$(awk '$2 == "System.InvalidOperationException" { print $1; exit }' "$TEST_TMP/a.report")"
awk '$1 == "exception" { print $2, $3 }' "$TEST_TMP/a.pv" | sort >"$TEST_TMP/a.pv.exc"
awk '/^    exceptions /{ f = 1; next } /^    JIT /{ f = 0 } f && NF == 2 { print $1, $2 }' \
	"$TEST_TMP/a.report" | sort >"$TEST_TMP/a.report.exc"
check "report: the same exceptions by type as TraceEvent" diff "$TEST_TMP/a.pv.exc" "$TEST_TMP/a.report.exc"
check "report: the workload's methods compiled (MethodJittingStarted)" \
	test "$(awk '$1 == "JIT" { print $2; exit }' "$TEST_TMP/a.report")" -ge 5
check_eq "report: its contention events, as TraceEvent counts them" \
	"$(count event Microsoft-Windows-DotNETRuntime/Contention/Start "$TEST_TMP/a.pv")" \
	"$(awk '$1 == "contention" { print $2; exit }' "$TEST_TMP/a.report")"
check_no_grep "report: no events lost, none said" '^    lost ' "$TEST_TMP/a.report"

cp "$TEST_TMP/a.trace.zip" "$TEST_TMP/m.trace.zip"
mkdir -p "$TEST_TMP/m"
printf 'Nettrace\024\0\0\0!FastSerialization.1\005\005\001' >"$TEST_TMP/m/dotnet.1.nettrace"
printf 'this is no type of object at all' >>"$TEST_TMP/m/dotnet.1.nettrace"
head -c 100000 "$TEST_TMP/a/dotnet.$a_pid.nettrace" >"$TEST_TMP/m/dotnet.2.nettrace"
(cd "$TEST_TMP/m" && zip -q "$TEST_TMP/m.trace.zip" dotnet.1.nettrace dotnet.2.nettrace)
rrc=0
"$TRACERIG" report "$TEST_TMP/m.trace.zip" >"$TEST_TMP/m.report" 2>"$TEST_TMP/m.report.err" || rrc=$?
check_eq "report, a malformed .nettrace: exits 1" 1 "$rrc"
check_eq "report, a malformed .nettrace: one line, naming the file and what is wrong" \
	"1 1" "$(wc -l <"$TEST_TMP/m.report.err") $(grep -cE \
	'^tracerig: report: cannot read dotnet\.1\.nettrace in .*: byte [0-9]+: ' "$TEST_TMP/m.report.err")"
check_eq "report, a malformed .nettrace: the real one is still summarized" "$a_gen0" \
	"$(awk '$1 == "GCs" { print $2; exit }' "$TEST_TMP/m.report")"
check_grep "report, a .nettrace cut short: what it holds, and where it ends" \
	'^    \(byte [0-9]+: the stream is cut short' "$TEST_TMP/m.report"
check_grep "report, a malformed .nettrace: the CPU section is still there" \
	'^Top [0-9]+ functions by self samples' "$TEST_TMP/m.report"
done_testing

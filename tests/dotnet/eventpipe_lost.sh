#!/usr/bin/env bash
# Events the runtime drops, counted from the gaps in its threads' sequence
# numbers as TraceEvent counts them.  The runtime drops what does not fit
# its session buffer while nobody reads the stream: tracerig, stopped
# (SIGSTOP) for seconds while the workload throws exceptions into the
# smallest buffer (1 MiB), cannot read it.  Then the manifest's events_lost
# must be TraceEvent's EventsLost for the same file, the log must say what
# it means and what to do, `tracerig report` must say it, and the other
# counts must still be TraceEvent's.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/dotnet/lib-dotnet.sh"
need_plugins eventpipe
dotnet_app perfview
PV=$DOTNET_APP
dotnet_app hot
HOT_DLL=$DOTNET_APP
command -v python3 >/dev/null 2>&1 || skip_all "needs python3 (reads manifest.json)"

# ep_counter NAME MANIFEST: the eventpipe backend's counter NAME.
ep_counter() {
	python3 -c 'import json, sys
m = json.load(open(sys.argv[2]))
print([p for p in m["plugins"] if p["name"] == "eventpipe"][0]["counters"].get(sys.argv[1], "none"))' "$1" "$2"
}
# field KEYWORD FILE: the first field after KEYWORD on its line.
field() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }
# count KEYWORD NAME FILE: the count on the "KEYWORD COUNT NAME" line (0 if none).
count() { awk -v k="$1" -v n="$2" '$1 == k && $3 == n { c = $2 } END { print c + 0 }' "$3"; }

printf '[tracerig]\nname = lost\n[eventpipe]\nproviders = exceptions, gc\nbuffer_size = 1M\n' \
	>"$TEST_TMP/lost.ini"
env -u DOTNET_DiagnosticPorts TMPDIR="$TEST_TMP" timeout 120 "$TRACERIG" -c "$TEST_TMP/lost.ini" \
	-o "$TEST_TMP/l.trace.zip" -- dotnet "$HOT_DLL" 8 exceptions gc >"$TEST_TMP/l.out" 2>&1 </dev/null &
tr=$!
on_exit "kill -CONT $tr 2>/dev/null; kill $tr 2>/dev/null"
wait_for_grep '^ready ' "$TEST_TMP/l.out" 300
check_grep "the workload runs under tracerig" '^ready ' "$TEST_TMP/l.out"
sleep 1
kill -STOP "$tr"
sleep 3
kill -CONT "$tr"
rc=0
wait "$tr" || rc=$?
check_eq "tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/l.trace.zip" "$TEST_TMP/l"
pid=$(awk '/^ready /{ print $2 }' "$TEST_TMP/l.out")
nt="$TEST_TMP/l/dotnet.$pid.nettrace"
m="$TEST_TMP/l/manifest.json"
check "the archive holds dotnet.$pid.nettrace" test -s "$nt"
prc=0
dotnet "$PV" nettrace "$nt" >"$TEST_TMP/l.pv" 2>"$TEST_TMP/l.pv.err" || prc=$?
check_eq "EventPipeEventSource reads it" 0 "$prc"
lost=$(ep_counter events_lost "$m")
check "the runtime dropped events while tracerig was stopped (events_lost $lost)" \
	test "$lost" -gt 0
check_eq "events_lost is TraceEvent's EventsLost" "$(field lost "$TEST_TMP/l.pv")" "$lost"
check_eq "events is still TraceEvent's count" "$(field events "$TEST_TMP/l.pv")" \
	"$(ep_counter events "$m")"
check_eq "events_exception_thrown is TraceEvent's Exception/Start" \
	"$(count event Microsoft-Windows-DotNETRuntime/Exception/Start "$TEST_TMP/l.pv")" \
	"$(ep_counter events_exception_thrown "$m")"
check "and fewer than the workload threw (thrown=$(sed -n 's/^done .* thrown=\([0-9]*\).*/\1/p' "$TEST_TMP/l.out"))" \
	test "$(ep_counter events_exception_thrown "$m")" -lt \
	"$(sed -n 's/^done .* thrown=\([0-9]*\).*/\1/p' "$TEST_TMP/l.out")"
check_grep "the log says what was dropped, why, and what to do" \
	"pid $pid: dotnet\\.$pid\\.nettrace: the runtime dropped $lost events .*buffer_size, 1 MiB\\) was full .*raise buffer_size" \
	"$TEST_TMP/l/tracerig.log"
rrc=0
"$TRACERIG" report "$TEST_TMP/l.trace.zip" >"$TEST_TMP/l.report" 2>&1 || rrc=$?
check_eq "report exits 0" 0 "$rrc"
check_grep "report says how many events the runtime dropped" \
	"^    lost +$lost events the runtime dropped, its session buffer full \\(raise \\[eventpipe\\] buffer_size\\)" \
	"$TEST_TMP/l.report"
done_testing

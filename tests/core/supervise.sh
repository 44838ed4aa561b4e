#!/usr/bin/env bash
# The supervisor: a backend that crashes, aborts or hangs in any phase does
# not take the others' data with it; a killed collector is salvaged by the
# watchdog; signals during packaging do not lose the run.
. "$top_srcdir/tests/lib.sh"
# Staging directories go under $TMPDIR: keep them in the test's own.
export TMPDIR="$TEST_TMP"

two="$top_srcdir/tests/core/profiles/two.ini"
out="$TEST_TMP/sup.trace.zip"
J="$TEST_TMP/journal"
# testb is optional in two.ini, testa required.  Short timeouts keep the
# hang cases quick; nothing here depends on how fast the machine is.
fast=(--set tracerig.start_timeout=1s --set tracerig.stop_timeout=1s --set tracerig.flush_timeout=1s)
# ASan would report the test plugin's deliberate fault itself instead of
# letting tracerig's handler isolate it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_abort=0:allow_user_segv_handler=1"

manifest_field() { # PLUGIN FIELD: prints the plugin's field from manifest.json
	python3 -c 'import json,sys
m=json.load(open(sys.argv[1]))
p=[p for p in m["plugins"] if p["name"]==sys.argv[2]][0]
print(p.get(sys.argv[3], "-"))' "$TEST_TMP/x/manifest.json" "$1" "$2"
}

for phase in init start collect stop flush fini; do
	for fault in segv abort hang; do
		[ "$phase/$fault" = collect/hang ] && continue # a stuck thread of its own harms nobody
		what="optional backend: $fault in $phase"
		rm -f "$out"
		run_tracerig -c "$two" -o "$out" "${fast[@]}" \
			--set testb.fault_in="$phase" --set testb.fault="$fault"
		check_eq "$what: exit 0" 0 "$rc"
		if ! [ -s "$out" ]; then
			not_ok "$what: archive written" "$(cat "$TEST_TMP/out")"
			continue
		fi
		unzip_archive "$out" "$TEST_TMP/x"
		check_grep "$what: the other backend's data is in the archive" '^payload from-a$' "$TEST_TMP/x/testa.txt"
		if [ "$phase" = fini ]; then
			# The manifest was written before fini: the log says it.
			case $fault in
			hang) check_grep "$what: said" 'testb: fini did not return within 1000 ms: abandoned as hung' "$TEST_TMP/out" ;;
			*) check_grep "$what: said" "testb: crashed \\(SIG(SEGV|ABRT)\\) in fini" "$TEST_TMP/out" ;;
			esac
			continue
		fi
		check_eq "$what: manifest status" skipped "$(manifest_field testb status)"
		check_eq "$what: manifest names the phase" "$phase" "$(manifest_field testb failed_in)"
		case $fault in
		segv) check_eq "$what: manifest names the signal" SIGSEGV "$(manifest_field testb signal)" ;;
		abort) check_eq "$what: manifest names the signal" SIGABRT "$(manifest_field testb signal)" ;;
		hang) check_eq "$what: manifest says hung" 1000 "$(manifest_field testb abandoned_after_ms)" ;;
		esac
		check_grep "$what: a closing warning names it" "warning: optional backend testb failed \\((crashed with SIG(SEGV|ABRT)|hung, abandoned after 1000 ms|hung in $phase, abandoned after 1000 ms) ?(in $phase)?\\)" "$TEST_TMP/out"
	done
done

# A required backend crashing while collecting ends the session at once;
# the others are still packaged, and the exit status says it failed.
rm -f "$out"
run_tracerig -c "$two" -o "$out" -d 0 "${fast[@]}" --set testa.fault_in=collect
check_eq "required backend crashed while collecting: exit 1" 1 "$rc"
check "required backend crashed: archive written anyway" test -s "$out"
unzip_archive "$out" "$TEST_TMP/x"
check_grep "required backend crashed: the other's data is there" '^payload from-b$' "$TEST_TMP/x/testb.txt"
check_grep "required backend crashed: the session says why it ended" '"ended_by": "a backend crashed"' "$TEST_TMP/x/manifest.json"
check_eq "required backend crashed: failed in collect" collect "$(manifest_field testa failed_in)"
check_eq "required backend crashed: with SIGSEGV" SIGSEGV "$(manifest_field testa signal)"

# The window is what -d says: a slow source's start does not eat into it,
# and a slow stop does not stretch the others' window.
rm -f "$out"
run_tracerig -c "$two" -o "$out" -d 300ms --set testb.start_delay=1s --set testa.stop_delay=1s
check_eq "slow start and stop: exit 0" 0 "$rc"
unzip_archive "$out" "$TEST_TMP/x"
check "slow start: the session's window is the 300 ms asked for, after every source started" \
	python3 -c 'import json,sys
m=json.load(open(sys.argv[1])); c=m["session"]; p={p["name"]:p for p in m["plugins"]}
w=c["window_end_monotonic_ns"]-c["window_start_monotonic_ns"]
assert 300e6 <= w, w
assert c["window_start_monotonic_ns"] >= p["testb"]["window"]["start_monotonic_ns"], "window opened before the slow source was ready"
assert p["testa"]["window"]["end_monotonic_ns"] == p["testb"]["window"]["end_monotonic_ns"], "stops asked at different instants"
assert p["testb"]["window"]["start_monotonic_ns"] - p["testa"]["window"]["start_monotonic_ns"] >= 900e6, "start_delay not seen"' "$TEST_TMP/x/manifest.json"

wait_for_line() { # FILE PATTERN: bounded poll, no fixed sleep
	for _ in $(seq 1 200); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# kill -9 of the collector: the watchdog stops the launched command and
# packages what was collected.
rm -f "$out" "$J"
pidfile="$TEST_TMP/cmd.pid"
"$TRACERIG" -c "$two" -o "$out" -d 0 --set testb.journal="$J" -- \
	sh -c 'echo $$ > "$1"; exec sleep 1000' sh "$pidfile" >"$TEST_TMP/out" 2>&1 &
pid=$!
wait_for_line "$J" 'testb start' && wait_for_line "$pidfile" '[0-9]'
cmd=$(cat "$pidfile" 2>/dev/null)
kill -9 "$pid"
wait "$pid" 2>/dev/null
for _ in $(seq 1 200); do [ -s "$out" ] && ! kill -0 "$cmd" 2>/dev/null && break; sleep 0.05; done
check "kill -9: the watchdog wrote the archive" test -s "$out"
check "kill -9: the launched command had written its PID" test -n "$cmd"
check "kill -9: the launched command was stopped" sh -c "[ -n '$cmd' ] && ! kill -0 '$cmd' 2>/dev/null"
unzip_archive "$out" "$TEST_TMP/x"
check_grep "kill -9: the manifest says the collector died" '"ended_by": "the collecting process died"' "$TEST_TMP/x/manifest.json"
check_grep "kill -9: the manifest says how it was salvaged" '"why": "it was killed \(SIGKILL' "$TEST_TMP/x/manifest.json"
check_grep "kill -9: the run log is in the archive" 'collecting' "$TEST_TMP/x/tracerig.log"
check_grep "kill -9: said on the terminal" "the collecting process \\(PID $pid\\) ended without finishing" "$TEST_TMP/out"
check "kill -9: no staging directory left behind" sh -c "! ls -d '$TEST_TMP'/tracerig-*staging* 2>/dev/null | grep -q ."

# A fault the core cannot pin on a plugin (here: on the main thread) is
# fatal, but the watchdog still packages and says what happened.
rm -f "$out" "$J"
"$TRACERIG" -c "$two" -o "$out" -d 0 --set testb.journal="$J" >"$TEST_TMP/out" 2>&1 &
pid=$!
wait_for_line "$J" 'testb start'
kill -SEGV "$pid"
wait "$pid" 2>/dev/null
for _ in $(seq 1 200); do [ -s "$out" ] && break; sleep 0.05; done
check "fault in the core: the watchdog wrote the archive" test -s "$out"
unzip_archive "$out" "$TEST_TMP/x"
check_grep "fault in the core: the manifest names the signal" '"why": "it died of SIGSEGV in tracerig"' "$TEST_TMP/x/manifest.json"
check_grep "fault in the core: said on the terminal" 'tracerig: fatal SEGV in the core' "$TEST_TMP/out"

# A signal the core leaves at its default action (SIGUSR1 to a session
# that records, as `pkill -USR1 tracerig` meant for flight recorders sends
# it): the salvaged archive names that signal, not SIGKILL.
rm -f "$out" "$J"
"$TRACERIG" -c "$two" -o "$out" -d 0 --set testb.journal="$J" >"$TEST_TMP/out" 2>&1 &
pid=$!
wait_for_line "$J" 'testb start'
kill -USR1 "$pid"
wait "$pid" 2>/dev/null
for _ in $(seq 1 200); do [ -s "$out" ] && break; sleep 0.05; done
check "killed by SIGUSR1: the watchdog wrote the archive" test -s "$out"
unzip_archive "$out" "$TEST_TMP/x"
check_grep "killed by SIGUSR1: the manifest names the signal" '"why": "it was killed by SIGUSR1"' "$TEST_TMP/x/manifest.json"

# The watchdog killed: the session says so at once, goes on, and packages
# on its own.
rm -f "$out" "$J"
"$TRACERIG" -c "$two" -o "$out" -d 0 --set testb.journal="$J" >"$TEST_TMP/out" 2>&1 &
pid=$!
wait_for_line "$J" 'testb start'
wd=$(pgrep -P "$pid" -x tracerig-watch)
check "the watchdog runs beside the session" test -n "$wd"
[ -n "$wd" ] && kill -KILL "$wd"
wait_for_line "$TEST_TMP/out" 'watchdog'
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
check_eq "watchdog killed: the session exits 0" 0 "$rc"
check_grep "watchdog killed: said, with what it means" \
	"the watchdog \(PID $wd\) was killed by SIGKILL: if tracerig dies now, nothing packages" "$TEST_TMP/out"
check "watchdog killed: the session wrote its archive" test -s "$out"
unzip_archive "$out" "$TEST_TMP/x"
check_grep "watchdog killed: the archive's log says it" "watchdog \(PID $wd\) was killed by SIGKILL" "$TEST_TMP/x/tracerig.log"
check_grep "watchdog killed: the data is there" '^payload from-b$' "$TEST_TMP/x/testb.txt"

# One SIGTERM while the sources are still starting: they finish starting,
# are stopped at once, and what they have is packaged.
rm -f "$out" "$J"
"$TRACERIG" -c "$two" -o "$out" -d 0 --set testb.journal="$J" --set testb.start_delay=2s \
	>"$TEST_TMP/out" 2>&1 &
pid=$!
wait_for_line "$J" 'testb init'
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
check_eq "SIGTERM while starting: exit 0" 0 "$rc"
check_grep "SIGTERM while starting: said" 'terminated while starting: finishing that, then packaging' "$TEST_TMP/out"
check "SIGTERM while starting: archive written" test -s "$out"
unzip_archive "$out" "$TEST_TMP/x"
check_grep "SIGTERM while starting: the session ended by the signal" '"ended_by": "signal"' "$TEST_TMP/x/manifest.json"
check_grep "SIGTERM while starting: both sources were flushed" '^payload from-b$' "$TEST_TMP/x/testb.txt"

# One SIGTERM while packaging (systemd, timeout, Kubernetes): packaging
# goes on and the archive is written.
rm -f "$out" "$J"
"$TRACERIG" -c "$two" -o "$out" -d 100ms --set testb.journal="$J" --set testb.flush_delay=1s \
	>"$TEST_TMP/out" 2>&1 &
pid=$!
wait_for_line "$J" 'testb flush'
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
check_eq "SIGTERM during packaging: exit 0" 0 "$rc"
check "SIGTERM during packaging: archive written" test -s "$out"
check_grep "SIGTERM during packaging: said" 'terminated while packaging: finishing that, then packaging' "$TEST_TMP/out"
unzip_archive "$out" "$TEST_TMP/x"
check_grep "SIGTERM during packaging: the slow backend's data is there" '^payload from-b$' "$TEST_TMP/x/testb.txt"

# A second signal while packaging aborts, and keeps the staging directory.
rm -f "$out" "$J"
"$TRACERIG" -c "$two" -o "$out" -d 100ms --set testb.journal="$J" --set testb.flush_delay=3s \
	>"$TEST_TMP/out" 2>&1 &
pid=$!
wait_for_line "$J" 'testb flush'
kill -TERM "$pid"
wait_for_line "$TEST_TMP/out" 'terminated while packaging'
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
check_eq "second signal during packaging: exit 130" 130 "$rc"
check "second signal during packaging: no archive" test ! -e "$out"
staging=$(sed -n 's/.*what was collected so far is left in \(.*\)$/\1/p' "$TEST_TMP/out")
check "second signal during packaging: the named staging dir is kept" test -s "$staging/testa.txt"
check_grep "second signal: nothing is left for the watchdog to do" 'aborted by a second interrupt' "$TEST_TMP/out"
check "second signal: the watchdog did not package" sh -c "! grep -q 'ended without finishing' '$TEST_TMP/out'"
rm -rf "$staging"

# A second signal also stops the launched command: nothing is left running.
rm -f "$out" "$J" "$pidfile"
"$TRACERIG" -c "$two" -o "$out" -d 0 --set testb.journal="$J" --set testa.stop_delay=3s -- \
	sh -c 'echo $$ > "$1"; exec sleep 1000' sh "$pidfile" >"$TEST_TMP/out" 2>&1 &
pid=$!
wait_for_line "$J" 'testb start' && wait_for_line "$pidfile" '[0-9]'
cmd=$(cat "$pidfile" 2>/dev/null)
kill -INT "$pid"
wait_for_line "$J" 'testb stop'
interrupt_again INT "$pid"
rc=0; wait "$pid" || rc=$?
check_eq "second signal with a launched command: exit 130" 130 "$rc"
check "second signal: the launched command is gone" sh -c "! kill -0 '$cmd' 2>/dev/null"
staging=$(sed -n 's/.*what was collected so far is left in \(.*\)$/\1/p' "$TEST_TMP/out")
[ -n "$staging" ] && rm -rf "$staging"

done_testing

#!/usr/bin/env bash
# A plugin's cleanup (watchdog_cleanup): the core's watchdog runs it when the
# plugin does not get to remove it itself (tracerig killed, the plugin
# faulted before fini, a second Ctrl-C) and says what it did; a run that
# ends normally leaves it alone; code that is not the plugin's is refused.
. "$top_srcdir/tests/lib.sh"
export TMPDIR="$TEST_TMP"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_abort=0:allow_user_segv_handler=1"

two="$top_srcdir/tests/core/profiles/two.ini"
out="$TEST_TMP/c.trace.zip"
J="$TEST_TMP/journal"
C="$TEST_TMP/cleaned"
fast=(--set tracerig.stop_timeout=1s --set tracerig.flush_timeout=1s)
wait_for_line() { # FILE PATTERN: bounded poll, no fixed sleep
	for _ in $(seq 1 200); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# An ordinary run: fini removes the cleanup, the watchdog does nothing.
run_tracerig -c "$two" -o "$out" --set testb.journal="$J" --set testb.cleanup="$C"
check_eq "normal run: exit 0" 0 "$rc"
check_grep "the cleanup is registered" '^testb cleanup registered$' "$J"
check "normal run: the cleanup did not run" test ! -e "$C"
check_no_grep "normal run: no cleanup is said" 'ended without cleaning up' "$TEST_TMP/out"

# kill -9 of tracerig: the watchdog runs it and says so under the plugin's name.
rm -f "$out" "$J" "$C"
"$TRACERIG" -c "$two" -o "$out" -d 0 --set testb.journal="$J" --set testb.cleanup="$C" \
	>"$TEST_TMP/out" 2>&1 </dev/null &
pid=$!
wait_for_line "$J" 'testb start'
kill -9 "$pid"
wait "$pid" 2>/dev/null
wait_for_line "$C" 'cleanup file'
check_eq "kill -9: the cleanup ran once" "cleanup file" "$(cat "$C" 2>/dev/null)"
wait_for_line "$TEST_TMP/out" 'ended without cleaning up'
check_grep "kill -9: it is said, by the plugin's name" \
	"^tracerig: testb: tracerig \\(pid $pid\\) ended without cleaning up: wrote $C\$" "$TEST_TMP/out"
for _ in $(seq 1 200); do [ -s "$out" ] && break; sleep 0.05; done
check "kill -9: the archive is salvaged as well" test -s "$out"

# The plugin crashes in stop: it is never called again, not even fini, so
# its cleanup is still registered when tracerig finishes: the watchdog runs it.
rm -f "$out" "$J" "$C"
run_tracerig -c "$two" -o "$out" "${fast[@]}" --set testb.cleanup="$C" \
	--set testb.fault_in=stop --set testb.fault=segv
check_eq "crash in stop: exit 0" 0 "$rc"
check_eq "crash in stop: the cleanup ran once" "cleanup file" "$(cat "$C" 2>/dev/null)"
check_grep "crash in stop: it is said" "^tracerig: testb: tracerig \\(pid [0-9]*\\) ended without cleaning up: wrote $C\$" "$TEST_TMP/out"

# A second Ctrl-C aborts without packaging, and still cleans up.
rm -f "$out" "$J" "$C"
"$TRACERIG" -c "$two" -o "$out" -d 0 --set testb.journal="$J" --set testb.cleanup="$C" \
	--set testa.stop_delay=30s >"$TEST_TMP/out" 2>&1 </dev/null &
pid=$!
wait_for_line "$J" 'testb start'
kill -INT "$pid"
wait_for_line "$TEST_TMP/out" 'Ctrl-C again aborts'
interrupt_again INT "$pid"
rc=0; wait "$pid" || rc=$?
check_eq "second Ctrl-C: exit 130" 130 "$rc"
check_eq "second Ctrl-C: the cleanup ran once" "cleanup file" "$(cat "$C" 2>/dev/null)"

done_testing

#!/bin/sh
# kill -9 of tracerig leaks nothing: the core's watchdog runs the lttng
# backend's cleanups, which destroy the session and stop the session daemon
# tracerig started; and a session left
# by a tracerig that no longer runs (named tracerig-<pid>-<start time>) is
# destroyed by the next run, which says so.  A session whose owner still
# runs is left alone.
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lttng/lib-lttng.sh"
lttng_prereqs

"$LTTNG_APP" -t 120 -i 1000 & app=$!
on_exit "kill $app 2>/dev/null; wait $app 2>/dev/null"

no_active_session_of() { ! lttng list 2>/dev/null | grep -q "tracerig-$1-[0-9]* \[active\]"; }
no_session_of() { ! lttng list 2>/dev/null | grep -q "tracerig-$1-"; }
starttime() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20; }

# --- 1: tracerig started the daemon; kill -9 tracerig ---------------------
if sessiond_pid >/dev/null; then
	skip "kill -9: the daemon tracerig started is stopped" "a session daemon is already running"
else
	write_profile "$TEST_TMP/s.ini" 'events=tracerig_test:*' 'start_sessiond=yes'
	"$TRACERIG" -c "$TEST_TMP/s.ini" -p "$app" -d 0 -o "$TEST_TMP/s.zip" >"$TEST_TMP/out" 2>&1 </dev/null &
	tr=$!
	wait_active "$tr" || not_ok "the session records" "$(cat "$TEST_TMP/out")"
	daemon=$(sessiond_pid)
	kill -9 "$tr"
	wait "$tr" 2>/dev/null
	wait_for "kill -9: no session of tracerig $tr records any more" no_active_session_of "$tr"
	wait_for "kill -9: the daemon tracerig started (pid $daemon) is gone" gone "$daemon"
	wait_for "kill -9: the cleanup is said" said "^tracerig: lttng: tracerig (pid $tr) ended without cleaning up: "
	check_grep "kill -9: it names the session and the daemon" \
		"^tracerig: lttng: tracerig \\(pid $tr\\) ended without cleaning up: destroyed LTTng session tracerig-$tr-[0-9]+; stopped the lttng-sessiond it started \\(pid $daemon\\)\$" "$TEST_TMP/out"
fi

# --- 2: someone else's daemon: orphans are destroyed by the next run -----
own_sessiond
# Three sessions named like tracerig's: an owner that never existed, a live
# process with another start time (the PID was reused), and a live owner.
live="tracerig-$app-$(starttime "$app")"
for s in tracerig-999999999-1 "tracerig-$$-1" "$live"; do
	lttng create "$s" --output "$TEST_TMP/planted/$s" >/dev/null &&
		lttng enable-event -u -s "$s" 'tracerig_planted:*' >/dev/null &&
		lttng start "$s" >/dev/null || not_ok "planting session $s"
done
on_exit "lttng destroy '$live' >/dev/null 2>&1"
write_profile "$TEST_TMP/o.ini" 'events=tracerig_test:*' 'start_sessiond=no'
"$TRACERIG" -c "$TEST_TMP/o.ini" -p "$app" -d 0 -o "$TEST_TMP/o.zip" >"$TEST_TMP/out" 2>&1 </dev/null &
tr=$!
wait_active "$tr" || not_ok "the session records" "$(cat "$TEST_TMP/out")"
check_grep "an orphan whose owner is gone is destroyed, and said" \
	"^tracerig: lttng: warning: destroyed session tracerig-999999999-1 \\(still recording\\): it was left by tracerig pid 999999999, which no longer runs \\(killed before it could clean up\\)\$" "$TEST_TMP/out"
check_grep "an orphan whose PID was reused is destroyed" \
	"destroyed session tracerig-$$-1 \\(still recording\\): it was left by tracerig pid $$, which no longer runs" "$TEST_TMP/out"
check_eq "the planted orphans are gone" "" "$(lttng list 2>/dev/null | grep -o 'tracerig-999999999-1\|tracerig-'"$$"'-1 ')"
check_eq "a session whose owner still runs is kept" 1 "$(lttng list 2>/dev/null | grep -c "$live \\[active\\]")"
kill -9 "$tr"
wait "$tr" 2>/dev/null
wait_for "kill -9: its session is destroyed in someone else's daemon" no_session_of "$tr"
wait_for "kill -9: the cleanup is said" said "^tracerig: lttng: tracerig (pid $tr) ended without cleaning up: destroyed LTTng session tracerig-$tr-[0-9]*\$"
check_eq "someone else's daemon keeps running" "$OWN_SESSIOND" "$(sessiond_pid)"

done_testing

#!/bin/sh
# A second Ctrl-C during packaging aborts tracerig (exit 130), and still no
# session daemon it started, no consumer daemon and no session of it is
# left running: the core's watchdog runs the backend's cleanups.  A test
# backend that takes 30 s to stop holds tracerig in packaging while the
# second SIGINT lands.
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lttng/lib-lttng.sh"
lttng_prereqs
# The aborted run's staging directory, kept by design, stays in ours.
tmpdir_for_tracerig="$TEST_TMP"
[ -e "$top_builddir/tests/plugins/testa.la" ] || skip_all "tests/plugins/testa not built"
if sessiond_pid >/dev/null; then skip_all "a session daemon is running: this test needs tracerig to start its own"; fi

"$LTTNG_APP" -t 120 -i 1000 & app=$!
on_exit "kill $app 2>/dev/null; wait $app 2>/dev/null"

# Sources stop together: lttng may have stopped (and destroyed its session)
# while testa still holds the stop phase, or not yet.
write_profile "$TEST_TMP/a.ini" 'events=tracerig_test:*' 'start_sessiond=yes'
printf '\n[testa]\nstop_delay = 30s\n' >>"$TEST_TMP/a.ini"
TMPDIR="$tmpdir_for_tracerig" "$TRACERIG" -c "$TEST_TMP/a.ini" -p "$app" -d 0 -o "$TEST_TMP/a.zip" >"$TEST_TMP/out" 2>&1 </dev/null &
tr=$!
for _ in $(seq 300); do
	lttng list 2>/dev/null | grep -q "tracerig-$tr-[0-9]* \[active\]" && break
	sleep 0.1
done
daemon=$(sessiond_pid)
[ -n "$daemon" ] || not_ok "tracerig started a session daemon" "$(cat "$TEST_TMP/out")"
kids=$(children_of "$daemon" | tr '\n' ' ')
kill -INT "$tr"
wait_for "the first SIGINT starts stopping and packaging" said "Ctrl-C again aborts without packaging"
interrupt_again INT "$tr"
rc=0; wait "$tr" || rc=$?
check_eq "the second SIGINT aborts: exit 130" 130 "$rc"
check_grep "the abort is said" "aborted by a second interrupt" "$TEST_TMP/out"
wait_for "no session of tracerig $tr is left" sh -c "! lttng list 2>/dev/null | grep -q 'tracerig-$tr-'"
wait_for "the session daemon tracerig started (pid $daemon) is gone" gone "$daemon"
left=""
for k in $kids; do
	for _ in $(seq 100); do gone "$k" && break; sleep 0.1; done
	gone "$k" || left="$left $k"
done
check_eq "its consumer daemons ($kids) are gone" "" "$left"
wait_for "the cleanup is said" said "^tracerig: lttng: tracerig (pid $tr) ended without cleaning up: "
check_grep "it names the daemon (and the session, unless lttng's stop had destroyed it)" \
	"^tracerig: lttng: tracerig \\(pid $tr\\) ended without cleaning up: (destroyed LTTng session tracerig-$tr-[0-9]+; )?stopped the lttng-sessiond it started \\(pid $daemon\\)\$" "$TEST_TMP/out"

done_testing

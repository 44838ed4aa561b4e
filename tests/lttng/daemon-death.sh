#!/bin/sh
# lttng-sessiond dying mid-session is a failure of the lttng backend, said
# with its cause and what to do -- not "lttng ok" with an empty trace -- and
# the consumer daemons of a daemon tracerig started do not outlive it.
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lttng/lib-lttng.sh"
lttng_prereqs

"$LTTNG_APP" -t 120 -i 1000 & app=$!
on_exit "kill $app 2>/dev/null; wait $app 2>/dev/null"

# run_and_kill_daemon PROFILE TAG: starts tracerig -p $app, kills the
# session daemon with SIGKILL once the session records, then ends the
# session with SIGINT; $rc, $dead (daemon pid), $kids (its consumers).
run_and_kill_daemon() {
	"$TRACERIG" -c "$1" -p "$app" -d 0 -o "$TEST_TMP/$2.zip" >"$TEST_TMP/out" 2>&1 </dev/null &
	tr=$!
	if ! wait_active "$tr"; then
		not_ok "$2: the session records" "$(cat "$TEST_TMP/out")"
	fi
	dead=$(sessiond_pid)
	kids=$(children_of "$dead" | tr "\n" " ")
	kill -9 "$dead"
	for _ in $(seq 100); do gone "$dead" && break; sleep 0.1; done
	kill -INT "$tr"
	rc=0; wait "$tr" || rc=$?
}

msg_re() {
	echo "^tracerig: lttng: stop failed: stopping session tracerig-$1-[0-9]+ failed: the session daemon died during the session: lttng-sessiond \\(pid $2\\) is gone, so the trace in lttngTrace is incomplete or empty \\(find why it died in the system log, or run 'lttng-sessiond -vvv' in a terminal, then record again\\) \\(flushing what it has\\)\$"
}

# --- 1: the daemon tracerig started --------------------------------------
if sessiond_pid >/dev/null; then
	skip "a daemon tracerig started dies" "a session daemon is already running"
else
	write_profile "$TEST_TMP/s.ini" 'events=tracerig_test:*' 'start_sessiond=yes'
	run_and_kill_daemon "$TEST_TMP/s.ini" started
	check_eq "its daemon died: tracerig exits 1 (lttng is required)" 1 "$rc"
	check_grep "the message names the cause and what to do" "$(msg_re "$tr" "$dead")" "$TEST_TMP/out"
	check_grep "the summary says lttng FAILED" '^  lttng +FAILED \((stop|flush): No such process\)' "$TEST_TMP/out"
	check_no_grep "never 'lttng ok'" '^  lttng +ok' "$TEST_TMP/out"
	unzip_archive "$TEST_TMP/started.zip" "$TEST_TMP/started"
	check_grep "the manifest marks lttng failed" '"status": *"failed"' "$TEST_TMP/started/manifest.json"
	left=""
	for k in $kids; do
		for _ in $(seq 100); do gone "$k" && break; sleep 0.1; done
		gone "$k" || left="$left $k"
	done
	if [ -n "$kids" ]; then check_eq "its consumer daemons ($kids) are gone too" "" "$left"
	else not_ok "its consumer daemons are gone too" "the daemon had no consumer daemon to check"; fi
fi

# --- 2: a daemon someone else started ------------------------------------
own_sessiond
# Its pid file names another process, as one left by a daemon killed with
# SIGKILL does once the PID is reused: tracerig goes by who answers.
sleep 300 & decoy=$!
on_exit "kill $decoy 2>/dev/null"
echo "$decoy" >/var/run/lttng/lttng-sessiond.pid
write_profile "$TEST_TMP/o.ini" 'events=tracerig_test:*' 'start_sessiond=no'
run_and_kill_daemon "$TEST_TMP/o.ini" other
OWN_SESSIOND=
check_eq "someone else's daemon died: tracerig exits 1" 1 "$rc"
check_grep "the same message, naming that daemon (not the process its pid file names)" "$(msg_re "$tr" "$dead")" "$TEST_TMP/out"
check "the process the pid file named was left alone" kill -0 "$decoy"
check_grep "the summary says lttng FAILED" '^  lttng +FAILED \((stop|flush): No such process\)' "$TEST_TMP/out"

# --- 3: the session destroyed behind tracerig's back ----------------------
own_sessiond
"$TRACERIG" -c "$TEST_TMP/o.ini" -p "$app" -d 0 -o "$TEST_TMP/gone.zip" >"$TEST_TMP/out" 2>&1 </dev/null &
tr=$!
wait_active "$tr" || not_ok "the session records" "$(cat "$TEST_TMP/out")"
name=$(lttng list 2>/dev/null | grep -o "tracerig-$tr-[0-9]*")
lttng destroy "$name" >/dev/null
kill -INT "$tr"
rc=0; wait "$tr" || rc=$?
check_eq "a session destroyed by someone else: tracerig exits 1" 1 "$rc"
check_grep "the message says the daemon no longer knows the session" \
	"^tracerig: lttng: stopping session $name failed: the session daemon no longer knows it \\(someone ran 'lttng destroy' on it, or the daemon was restarted\\), so the trace in lttngTrace is incomplete \\(record again\\)\$" "$TEST_TMP/out"
check_grep "the summary says lttng FAILED" '^  lttng +FAILED \((stop|flush): No such file or directory\)' "$TEST_TMP/out"

done_testing

#!/bin/sh
# With no session daemon and start_sessiond = no, tracerig fails with the
# documented message naming the fix, and --check says the same.
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lttng/lib-lttng.sh"
lttng_prereqs
if sessiond_pid >/dev/null; then skip_all "a session daemon is running and is not ours to stop"; fi

msg="no LTTng session daemon is running (start one with 'lttng-sessiond --daemonize', or set start_sessiond = yes)"
write_profile "$TEST_TMP/n.ini" 'events=tracerig_test:*' 'start_sessiond=no'
run_tracerig -c "$TEST_TMP/n.ini" -d 1 -o "$TEST_TMP/n.trace.zip" -- "$LTTNG_APP" -n 1
if [ "$rc" != 0 ]; then ok "tracerig fails (exit $rc)"; else not_ok "tracerig fails" "it exited 0"; fi
check_grep "the error names the fix" "tracerig: lttng: .*$(printf '%s' "$msg" | sed 's/[][().*]/\\&/g')" "$TEST_TMP/out"
check_eq "no archive is left behind" no "$([ -e "$TEST_TMP/n.trace.zip" ] && echo yes || echo no)"
check_eq "no daemon was started" "" "$(sessiond_pid || true)"

run_tracerig --check -c "$TEST_TMP/n.ini"
if [ "$rc" != 0 ]; then ok "--check fails for a required lttng backend"; else not_ok "--check fails" "exit 0"; fi
check_grep "--check gives the same advice" "lttng .*NOT USABLE: no LTTng session daemon is running" "$TEST_TMP/out"

# With autostart allowed, --check says what will happen instead.
write_profile "$TEST_TMP/a.ini" 'events=tracerig_test:*' 'start_sessiond=yes'
run_tracerig --check -c "$TEST_TMP/a.ini"
check_eq "--check passes when tracerig may start the daemon" 0 "$rc"
check_grep "--check notes the daemon will be started" "will start lttng-sessiond and stop it afterwards" "$TEST_TMP/out"

done_testing

#!/bin/sh
# -p PID records that process only: another process emitting the same
# events at the same time stays out of the archive.
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lttng/lib-lttng.sh"
lttng_prereqs
own_sessiond

# Both apps register with the daemon before tracerig creates its session.
"$LTTNG_APP" -t 30 -i 2000 & a=$!
"$LTTNG_APP" -t 30 -i 2000 & b=$!
on_exit "kill $a $b 2>/dev/null; wait $a $b 2>/dev/null"
sleep 0.5

write_profile "$TEST_TMP/p.ini" 'events=tracerig_test:hello' 'start_sessiond=no'
run_tracerig -c "$TEST_TMP/p.ini" -p "$a" -d 1 -o "$TEST_TMP/p.trace.zip"
check_eq "tracerig -p exits 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
unzip_archive "$TEST_TMP/p.trace.zip" "$TEST_TMP/p"
bt_text "$TEST_TMP/p" >"$TEST_TMP/p.txt"
n_a=$(grep -c "vpid = $a," "$TEST_TMP/p.txt")
n_b=$(grep -c "vpid = $b," "$TEST_TMP/p.txt")
if [ "$n_a" -gt 0 ]; then ok "events of the -p process ($n_a from pid $a)"
else not_ok "events of the -p process" "$(head -5 "$TEST_TMP/p.txt")" "$(cat "$TEST_TMP/out")"; fi
check_eq "no event of the other process (pid $b)" 0 "$n_b"
check_eq "every event comes from the -p process" "$(grep -c 'tracerig_test:hello:' "$TEST_TMP/p.txt")" "$n_a"
check_eq "both apps were still running (the exclusion was not a crash)" "yes" \
	"$(kill -0 "$a" 2>/dev/null && kill -0 "$b" 2>/dev/null && echo yes)"

done_testing

#!/usr/bin/env bash
# On a terminal: one live status line with elapsed/remaining time and each
# backend's progress, then the summary.  Not on a terminal: no status line.
. "$top_srcdir/tests/lib.sh"
command -v script >/dev/null || skip_all "needs script(1) from util-linux for a pseudo-terminal"

two="$top_srcdir/tests/core/profiles/two.ini"
script -qec "'$TRACERIG' -c '$two' -o '$TEST_TMP/t.trace.zip' -d 1200ms" "$TEST_TMP/typescript" >/dev/null 2>&1
rc=$?
check_eq "run on a pseudo-terminal exits 0" 0 "$rc"
tr '\r' '\n' <"$TEST_TMP/typescript" >"$TEST_TMP/lines"
check_grep "the status line shows elapsed and remaining time" '\[tracerig\] [0-9]+s elapsed, [0-9]+s left' "$TEST_TMP/lines"
check_grep "the status line shows each backend's progress" '\| testa: running \| testb: running' "$TEST_TMP/lines"
check_grep "the summary lists each backend's status and counters" 'testa +ok +1 flushed entries, 6 bytes payload' "$TEST_TMP/lines"

run_tracerig -c "$two" -o "$TEST_TMP/t.trace.zip" -d 600ms
check_no_grep "no status line when stderr is not a terminal" 'elapsed' "$TEST_TMP/out"
check_grep "the summary is printed when not a terminal too" 'archive .*t.trace.zip' "$TEST_TMP/out"

run_tracerig -q -c "$two" -o "$TEST_TMP/t.trace.zip" -d 300ms
check_eq "-q prints nothing on success" "" "$(cat "$TEST_TMP/out")"

done_testing

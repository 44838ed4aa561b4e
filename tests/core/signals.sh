#!/usr/bin/env bash
# Ctrl-C / SIGTERM stop and package; a second one aborts and says so.
. "$top_srcdir/tests/lib.sh"
# Staging directories go under $TMPDIR: keep them in the test's own.
export TMPDIR="$TEST_TMP"

two="$top_srcdir/tests/core/profiles/two.ini"
out="$TEST_TMP/sig.trace.zip"

for sig in INT TERM; do
	rm -f "$out"
	"$TRACERIG" -c "$two" -o "$out" -d 0 >"$TEST_TMP/out" 2>&1 &
	pid=$!
	sleep 0.5
	kill -s "$sig" "$pid"
	rc=0; wait "$pid" || rc=$?
	check_eq "SIG$sig during collection: exit 0" 0 "$rc"
	check "SIG$sig during collection still writes the archive" test -s "$out"
	unzip_archive "$out" "$TEST_TMP/x$sig"
	check_grep "SIG$sig: the manifest says the session ended by signal" '"ended_by": "signal"' "$TEST_TMP/x$sig/manifest.json"
	check "SIG$sig: collected data is in the archive" test -s "$TEST_TMP/x$sig/testa.txt"
done
check_grep "stopping on a signal says a second one aborts" 'Ctrl-C again aborts without packaging' "$TEST_TMP/out"

# A second interrupt while a backend is still stopping aborts packaging.
rm -f "$out"
"$TRACERIG" -c "$two" -o "$out" -d 0 --set testa.stop_delay=5s >"$TEST_TMP/out" 2>&1 &
pid=$!
sleep 0.5
kill -INT "$pid"
sleep 0.5
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
check_eq "a second interrupt exits 130" 130 "$rc"
check_grep "the abort is said, with where the data is" 'aborted by a second interrupt: no archive was written; what was collected so far is left in .*staging' "$TEST_TMP/out"
check "no archive after an abort" test ! -e "$out"

done_testing

#!/bin/sh
# LOG_COMPILER's wrapper: runs one test (the last argument, after the
# command that runs it) under a lock shared by every test of the machine,
# so that `make check -jN` runs tests side by side.  A test that changes
# what all the others share (a kernel limit, the machine's one
# lttng-sessiond) says so with a line
#     # test-lock: exclusive (why)
# and runs alone: it waits for the tests running to end, and none starts
# before it has ended.  The others hold the lock shared.
#
# With TRACERIG_TEST_TIMES set to a file, appends "SECONDS TEST START
# MODE" to it: how long the test ran, its wait for the lock left out
# (what CI's time limit is spent on, which the order of results no longer
# tells once tests overlap), when it started (epoch seconds) and how it
# held the lock (-s shared, -x alone).
for last; do :; done
mode=-s
grep -qs '^# test-lock: exclusive' "$last" && mode=-x
lockdir=/run/lock
[ -d "$lockdir" ] && [ -w "$lockdir" ] || lockdir=${TMPDIR:-/tmp}
exec 9>>"$lockdir/tracerig-tests.lock" || exit 99
flock "$mode" 9 || exit 99
started=$(date +%s)
"$@" 9>&-
rc=$?
if [ -n "${TRACERIG_TEST_TIMES:-}" ]; then
	echo "$(($(date +%s) - started)) $last $started $mode" >>"$TRACERIG_TEST_TIMES"
fi
exit $rc

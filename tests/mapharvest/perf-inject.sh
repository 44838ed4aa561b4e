#!/usr/bin/env bash
# `perf inject --jit` works on the archive: the harvested jit-<hostpid>.dump
# of a Node.js process in a container (its records rewritten to the host
# PID) turns JIT code into jitted-*.so objects that name the hot JS function.
# The perf.data side is recorded here by stock perf, with the jitdump's mmap
# renamed the way tracerig's perf.data must name it: ./jit-<hostpid>.dump.
# test-lock: exclusive (stock perf: perf 6.1 aborts, util/build-id.c:1010, on
# perf.data recorded while another test's tracerig has BPF programs loaded)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/mapharvest/lib-mapharvest.sh"
command -v perf >/dev/null 2>&1 || skip_all "needs perf (apt-get install linux-perf)"
perf version >/dev/null 2>&1 || skip_all "perf does not run here"

write_profile "$TEST_TMP/p.ini"
# V8 buffers its jitdump writes and flushes them when it exits: the process
# ends during the session (which then ends too) so the copy is complete.
start_container 4 --perf-prof
wait_file "/proc/$NODE_PID/root/tmp/work/jit-1.dump" || not_ok "node wrote its jitdump"
perf record -q -k 1 -p "$NODE_PID" -o "$TEST_TMP/perf.data" >"$TEST_TMP/perf.out" 2>&1 &
perf_pid=$!
trace -c "$TEST_TMP/p.ini" -p "$NODE_PID" -d 20 -o "$TEST_TMP/a.trace.zip"
wait "$perf_pid"
check_eq "tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
check_grep "the session ended with the process" "every target process has exited" \
	"$TEST_TMP/a/tracerig.log"

old=/tmp/work/jit-1.dump
name=jit-$NODE_PID.dump
new=.$(printf '%*s' $(( ${#old} - ${#name} - 1 )) '' | tr ' ' /)$name
OLD=$old NEW=$new perl -0777 -pe 's/\Q$ENV{OLD}\E/$ENV{NEW}/g' "$TEST_TMP/perf.data" >"$TEST_TMP/a/perf.stock.data"
check "stock perf recorded the jitdump mapping" grep -aq "$new" "$TEST_TMP/a/perf.stock.data"
(cd "$TEST_TMP/a" && perf inject --jit -i perf.stock.data -o perf.jit.data) >"$TEST_TMP/inject.out" 2>&1
check "perf inject --jit made jitted objects from the archive's jitdump" \
	test -n "$(ls "$TEST_TMP/a" | grep "^jitted-$NODE_PID-.*\\.so$" | head -1)"
(cd "$TEST_TMP/a" && perf report -i perf.jit.data --stdio 2>/dev/null) >"$TEST_TMP/report.txt"
check_grep "perf report names the hot JS function in a jitted object" \
	"jitted-$NODE_PID-[0-9]+\\.so +\\[\\.\\] JS:\\*?tracerigHotLoop" "$TEST_TMP/report.txt"

# The same with tracerig's own perf.data.  Only a build without the
# perf_events plugin (neither its .la nor its .so here) is a reason to skip;
# a profile with [perf_events] whose archive lacks perf.data is a failure.
if [ ! -e "$top_builddir/plugins/perf_events/perf_events.la" ] &&
	[ ! -e "$top_builddir/plugins/perf_events/.libs/perf_events.so" ]; then
	skip "perf inject --jit works on tracerig's own perf.data" \
		"perf_events plugin not built (no plugins/perf_events/perf_events.la or .so in $top_builddir)"
elif [ "$have_perf_events" != yes ] || [ ! -e "$TEST_TMP/a/perf.data" ]; then
	not_ok "the archive holds perf_events' perf.data" \
		"perf_events is built but $TEST_TMP/a.trace.zip has no perf.data" \
		"entries: $(ls "$TEST_TMP/a" | grep -v '^jitted-' | tr '\n' ' ')" "$(grep -i 'perf_events\|error\|warn' "$TEST_TMP/a/tracerig.log" 2>/dev/null | head -20)"
else
	(cd "$TEST_TMP/a" && rm -f jitted-*.so && perf inject --jit -i perf.data -o perf.own.data) \
		>"$TEST_TMP/inject2.out" 2>&1
	check "perf inject --jit works on tracerig's own perf.data" \
		test -n "$(ls "$TEST_TMP/a" | grep "^jitted-$NODE_PID-.*\\.so$" | head -1)"
fi
done_testing

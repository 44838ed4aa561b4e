#!/usr/bin/env bash
# Node.js in a PID + mount namespace with its own /tmp, traced from the host
# by its host PID: the archive holds perf-<hostpid>.map (--perf-basic-prof)
# and jit-<hostpid>.dump (--perf-prof, written to its working directory).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/mapharvest/lib-mapharvest.sh"

write_profile "$TEST_TMP/p.ini"

# ---- --perf-basic-prof: /tmp/perf-1.map inside, perf-<hostpid>.map outside
start_container 8 --perf-basic-prof
wait_file "/proc/$NODE_PID/root/tmp/perf-1.map" || not_ok "node wrote its perf map"
trace -c "$TEST_TMP/p.ini" -p "$NODE_PID" -d 2 -o "$TEST_TMP/basic.trace.zip"
check_eq "tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/basic.trace.zip" "$TEST_TMP/basic"
check "archive holds perf-$NODE_PID.map" test -s "$TEST_TMP/basic/perf-$NODE_PID.map"
check_grep "the map names the hot JS function" 'tracerigHotLoop' "$TEST_TMP/basic/perf-$NODE_PID.map"
check "the namespace's name perf-1.map is not used" test ! -e "$TEST_TMP/basic/perf-1.map"
check_grep "the log says where it came from" \
	"pid $NODE_PID: harvesting /tmp/perf-1.map \\(stored as perf-$NODE_PID.map\\)" \
	"$TEST_TMP/basic/tracerig.log"
check_grep "the map was handed to the symbolizer" \
	"perf-$NODE_PID.map handed to the symbolizer$" "$TEST_TMP/basic/tracerig.log"
if [ "$have_perf_events" = yes ]; then
	check_grep "perf.data.txt names the JS function in its frames" 'tracerigHotLoop' \
		"$TEST_TMP/basic/perf.data.txt"
else
	skip "perf.data.txt names the JS function in its frames" "perf_events plugin not built"
fi
kill -KILL "$CONTAINER_PID" 2>/dev/null; wait "$CONTAINER_PID" 2>/dev/null

# ---- --perf-prof: ./jit-1.dump in /tmp/work inside
start_container 8 --perf-prof
wait_file "/proc/$NODE_PID/root/tmp/work/jit-1.dump" || not_ok "node wrote its jitdump"
trace -c "$TEST_TMP/p.ini" -p "$NODE_PID" -d 2 -o "$TEST_TMP/jit.trace.zip"
check_eq "tracerig exits 0 (jitdump)" 0 "$rc"
unzip_archive "$TEST_TMP/jit.trace.zip" "$TEST_TMP/jit"
check "archive holds jit-$NODE_PID.dump" test -s "$TEST_TMP/jit/jit-$NODE_PID.dump"
# The jitdump header's magic 0x4A695444 ("JiTD"), little-endian on disk.
check_eq "it is a jitdump" "DTiJ" "$(head -c 4 "$TEST_TMP/jit/jit-$NODE_PID.dump" 2>/dev/null)"
check "its code-load records name the hot JS function" \
	grep -aq tracerigHotLoop "$TEST_TMP/jit/jit-$NODE_PID.dump"
check_grep "found in the working directory" "harvesting /tmp/work/jit-1.dump" \
	"$TEST_TMP/jit/tracerig.log"
check_eq "its header says the host PID, not 1" "$NODE_PID" \
	"$(od -An -tu4 -j20 -N4 "$TEST_TMP/jit/jit-$NODE_PID.dump" 2>/dev/null | tr -d ' ')"
kill -KILL "$CONTAINER_PID" 2>/dev/null; wait "$CONTAINER_PID" 2>/dev/null

# ---- asked for a map that is not there (a /tmp cleaner took it): said so
start_container 8 --perf-basic-prof
wait_file "/proc/$NODE_PID/root/tmp/perf-1.map" && rm -f "/proc/$NODE_PID/root/tmp/perf-1.map"
trace -c "$TEST_TMP/p.ini" -p "$NODE_PID" -d 1 -o "$TEST_TMP/ro.trace.zip"
check_eq "tracerig exits 0 (no map)" 0 "$rc"
unzip_archive "$TEST_TMP/ro.trace.zip" "$TEST_TMP/ro"
check_grep "a missing map the runtime was asked for is reported" \
	"pid $NODE_PID: --perf-basic-prof is set but no perf map was found" "$TEST_TMP/ro/tracerig.log"
done_testing

#!/usr/bin/env bash
# A process that exits mid-session keeps its map: here a launched command
# whose Node.js child lives in its own namespaces with a private /tmp that
# disappears with it, and a host process whose map cleanup = yes removes.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/mapharvest/lib-mapharvest.sh"

write_profile "$TEST_TMP/p.ini"
trace -c "$TEST_TMP/p.ini" -d 3 -o "$TEST_TMP/a.trace.zip" -- \
	unshare --mount --pid --fork sh -c 'js=$(cat "$1") && mount -t tmpfs tmpfs /tmp && cd /tmp &&
		printf "%s\n" "$js" >hot.js && exec node --perf-basic-prof hot.js 1 x' sh "$HOT_JS"
check_eq "tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
hostpid=$(sed -n 's/.*harvesting \/tmp\/perf-1.map (stored as perf-\([0-9]*\)\.map).*/\1/p' \
	"$TEST_TMP/a/tracerig.log" | head -1)
check "the launched command's Node.js child was found" test -n "$hostpid"
check "it has exited" test ! -e "/proc/${hostpid:-0}"
check "its map is in the archive under its host PID" test -s "$TEST_TMP/a/perf-${hostpid:-0}.map"
check_grep "with the hot JS function" tracerigHotLoop "$TEST_TMP/a/perf-${hostpid:-0}.map"
# Complete: V8 ends every line, and the last one, with a newline.
check_eq "and complete up to its last line" "" "$(tail -c 1 "$TEST_TMP/a/perf-${hostpid:-0}.map" | tr -d '\n')"

# ---- a host process exiting mid-session, cleanup = yes
write_profile "$TEST_TMP/c.ini" "cleanup = yes"
# (in $TEST_TMP: V8 leaves an isolate-*.log in its working directory)
(cd "$TEST_TMP" && exec node --perf-basic-prof "$HOT_JS" 1.5 "$MARK") >/dev/null 2>&1 &
pid=$!
on_exit "kill $pid 2>/dev/null"
wait_file "/tmp/perf-$pid.map" || not_ok "node wrote /tmp/perf-$pid.map"
trace -c "$TEST_TMP/c.ini" -p "$pid" -d 5 -o "$TEST_TMP/c.trace.zip"
wait "$pid" 2>/dev/null
check_eq "tracerig exits 0 (cleanup)" 0 "$rc"
unzip_archive "$TEST_TMP/c.trace.zip" "$TEST_TMP/c"
check_grep "the exited process's map is kept" tracerigHotLoop "$TEST_TMP/c/perf-$pid.map"
check "and the left-behind /tmp/perf-$pid.map is removed" test ! -e "/tmp/perf-$pid.map"
check_grep "the removal is logged" "removed the left-behind /tmp/perf-$pid.map" "$TEST_TMP/c/tracerig.log"
rm -f "/tmp/perf-$pid.map"

# ---- a launched command is asked for its maps (dotnet_env)
trace -c "$TEST_TMP/p.ini" -o "$TEST_TMP/e.trace.zip" -- sh -c 'echo "${DOTNET_PerfMapEnabled:-unset}" >"$1"' sh "$TEST_TMP/env"
check_eq "the launched command gets DOTNET_PerfMapEnabled=1" 1 "$(cat "$TEST_TMP/env" 2>/dev/null)"
DOTNET_PerfMapEnabled=3 trace -c "$TEST_TMP/p.ini" -o "$TEST_TMP/e.trace.zip" -- sh -c 'echo "$DOTNET_PerfMapEnabled" >"$1"' sh "$TEST_TMP/env"
check_eq "a setting of its own is kept" 3 "$(cat "$TEST_TMP/env" 2>/dev/null)"
done_testing

#!/usr/bin/env bash
# tracerig --check says when a traced program has no frame pointers (and
# CFI): callchain = fp would lose its callers, callchain = dwarf unwinds
# them.  The same program built with and without frame pointers: the note
# names the one without, not the other, and not under callchain = dwarf.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
export TMPDIR="$TEST_TMP"

chain_workload omit omit
chain_workload no-omit no-omit
without_libdw && skip_all "a build without libdw reads no CFI"

# check_pid NAME PROFILE PROGRAM: --check -p on PROGRAM running; its output
# in $TEST_TMP/NAME.  --check judges the process's /proc/PID/exe, which is
# this shell until the forked child has exec'd PROGRAM: on a loaded machine
# that can come after --check has looked (and bash, built without frame
# pointers, got the note), so it waits for the exec, however long it takes.
check_pid() {
	local name=$1 profile=$2 prog=$3 pid
	"$prog" 60 &
	pid=$!
	until [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$prog")" ]; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	run_tracerig --check -c "$profile" -p "$pid"
	kill "$pid"
	wait "$pid" 2>/dev/null
	cp "$TEST_TMP/out" "$TEST_TMP/$name"
	check_eq "$name: --check passes" 0 "$rc"
}

check_pid omit "$CPU_INI" "$w/omit/chain"
check_grep "without frame pointers: --check names the program and says dwarf helps" \
	"note: $w/omit/chain \(process [0-9]+\) has no frame pointers .*callchain = dwarf" \
	"$TEST_TMP/omit"
check_pid no-omit "$CPU_INI" "$w/no-omit/chain"
check_no_grep "with frame pointers: no such note" "no frame pointers" "$TEST_TMP/no-omit"
check_pid dwarf "$top_srcdir/conf/profiles/cpu-dwarf.ini" "$w/omit/chain"
check_no_grep "callchain = dwarf already: no such note" "no frame pointers" "$TEST_TMP/dwarf"

done_testing

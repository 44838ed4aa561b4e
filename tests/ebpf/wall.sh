#!/bin/sh
# The wall-clock view: when an on-CPU source flushed cpu.folded before the
# ebpf backend (profile order), wall.folded holds both, on-CPU samples turned
# into microseconds (1 / oncpu_frequency each), every leaf marked [on-cpu] or
# [off-cpu], other processes' samples left out.  The on-CPU source is a
# stand-in plugin (tests/ebpf/fakecpu.c) writing what perf_events writes; with
# perf_events built, the shipped wall.ini is run for real as well.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf
TRACERIG_PLUGIN_PATH="$top_builddir/tests/ebpf:$TRACERIG_PLUGIN_PATH"
export TRACERIG_PLUGIN_PATH

cat >"$TEST_TMP/wall.ini" <<'INI'
[tracerig]
name = walltest
required = fakecpu, ebpf
[fakecpu]
[ebpf]
oncpu_frequency = 100
INI
run_tracerig -c "$TEST_TMP/wall.ini" -o "$TEST_TMP/w.trace.zip" -- "$workload"
check_eq "tracerig runs an on-CPU source and ebpf" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
unzip_archive "$TEST_TMP/w.trace.zip" "$TEST_TMP/w"
f="$TEST_TMP/w/wall.folded"
check "wall.folded is in the archive" test -s "$f"
check_grep "wall.svg is a flame graph" '<svg' "$TEST_TMP/w/wall.svg"
check_grep "on-CPU samples become time, marked, under the process name" \
	'^workload;main;spin_on_cpu;\[on-cpu\] 100000$' "$f"
check_no_grep "other processes' samples are left out" 'other_process' "$f"
check_grep "off-CPU stacks are marked" '^workload;.*;blocked_in_sleep;.*_\[k\];\[off-cpu\] [0-9]+$' "$f"
check_eq "every line is marked" 0 "$(grep -cvE ';\[(on|off)-cpu\] [0-9]+$' "$f")"
check_eq "off-CPU time is the same as in offcpu.folded" \
	"$(awk '{ s += $NF } END { print s }' "$TEST_TMP/w/offcpu.folded")" \
	"$(grep -F '[off-cpu]' "$f" | awk '{ s += $NF } END { print s }')"

# The shipped profile, with the real perf_events backend.
if [ -e "$top_builddir/plugins/perf_events/perf_events.la" ]; then
	# 300 ms on the CPU first: the real on-CPU side needs samples.
	run_tracerig -c "$top_srcdir/conf/profiles/wall.ini" -o "$TEST_TMP/r.trace.zip" -- "$workload" -s 300
	check_eq "wall.ini runs" 0 "$rc"
	unzip_archive "$TEST_TMP/r.trace.zip" "$TEST_TMP/r"
	check_grep "wall.ini gives the off-CPU side" '^workload;.*;blocked_in_pipe_read;.*\[off-cpu\] [0-9]+$' "$TEST_TMP/r/wall.folded"
	check_grep "and the on-CPU side, in the spinning function" '^workload;.*spin_on_cpu;.*\[on-cpu\] [0-9]+$' "$TEST_TMP/r/wall.folded"
else
	skip "wall.ini with perf_events" "the perf_events backend is not built"
fi
done_testing

#!/bin/sh
# The ebpf backend end to end: tracerig launches a workload whose threads
# block in known functions for known times (tests/ebpf/blockers.c: 3 x 200 ms
# sleeps, a pipe read answered 400 ms after it waits, a mutex held 300 ms by
# another thread once the waiter waits, 100 x 2 ms sleeps); offcpu.folded
# must show each function with at least its planned blocked time (-2 %) and
# at most what the thread measured inside the function (an interval lasts
# until the thread runs again: on a busy machine, longer than planned), and
# a min-block threshold must drop the short waits (but for those a busy
# machine stretched past it, which the thread measured).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf

times="$TEST_TMP/w.times"
run_tracerig -c "$offcpu_profile" -o "$TEST_TMP/w.trace.zip" -- "$workload" -t "$times"
check_eq "tracerig traces the launched workload" 0 "$rc"
[ "$rc" = 0 ] || cat "$TEST_TMP/out" | sed 's/^/# /'
unzip_archive "$TEST_TMP/w.trace.zip" "$TEST_TMP/w"
f="$TEST_TMP/w/offcpu.folded"
check "offcpu.folded is in the archive" test -s "$f"
check_grep "offcpu.svg is a flame graph" '<svg' "$TEST_TMP/w/offcpu.svg"
check_grep "stacks start at the process, then the thread" '^workload-[0-9]+;workload-[0-9]+;' "$f"
# (Its exec, still named after tracerig's forked child, counts too.)
check_eq "only the launched workload is traced" 0 \
	"$(grep -cvE '^(workload|tracerig)-[0-9]+;[^;]+-[0-9]+;' "$f")"
check_no_grep "tracerig's own threads are not" 'notify_thread|tr_session_run|tr_command_release' "$f"
check_grep "user frames go down to the blocking function, then kernel frames" \
	';blocked_in_pipe_read;.*_\[k\] [0-9]+$' "$f"
check_no_grep "the tracing machinery's frames are left out" 'bpf_trace_run|bpf_prog_' "$f"

check "the workload measured its functions" test -s "$times"
# The roots name the real process and threads (the workload wrote its
# PID and the TIDs of two blocking threads).
pid=$(measured_us "$times" pid)
sleep_tid=$(measured_us "$times" tid:blocked_in_sleep)
pipe_tid=$(measured_us "$times" tid:blocked_in_pipe_read)
# (Children of the workload count too: the sanitizers' leak checker is one.)
check_eq "every blocking function's root carries the workload's PID" 0 \
	"$(grep -E ';blocked_(in|on)_' "$f" | grep -cvE "^workload-$pid;")"
check_grep "the sleeps are under the sleeping thread's TID" \
	"^workload-$pid;workload-$sleep_tid;.*;blocked_in_sleep;" "$f"
check_grep "the pipe read under the reading thread's TID" \
	"^workload-$pid;workload-$pipe_tid;.*;blocked_in_pipe_read;" "$f"
check_no_grep "each thread's stacks under its own TID only" \
	"^workload-$pid;workload-$sleep_tid;.*;blocked_in_pipe_read;" "$f"
check_eq "the threads are told apart: several TIDs" 1 \
	"$(sed -n 's/^workload-[0-9]*;[^;]*-\([0-9]*\);.*/\1/p' "$f" | sort -u | awk 'END { print (NR >= 4) }')"
# Each interval the session says it lost (its end hidden by this kernel:
# lost_ms) may be one of a function's calls.
w_manifest="$TEST_TMP/w/manifest.json"
check_within "blocked_in_sleep: 3 x 200 ms in do_nanosleep" 600 \
	"$(fn_total "$f" blocked_in_sleep 'do_nanosleep')" "$(measured_us "$times" blocked_in_sleep)" \
	"$(lost_ms "$w_manifest" 200)"
check_within "blocked_in_pipe_read: 400 ms in pipe_read" 400 \
	"$(fn_total "$f" blocked_in_pipe_read 'pipe_read')" "$(measured_us "$times" blocked_in_pipe_read)" \
	"$(lost_ms "$w_manifest" 400)"
check_within "blocked_on_mutex: 300 ms in futex_wait" 300 \
	"$(fn_total "$f" blocked_on_mutex 'futex_wait')" "$(measured_us "$times" blocked_on_mutex)" \
	"$(lost_ms "$w_manifest" 300)"
check_within "holding_mutex_sleep: 300 ms" 300 \
	"$(fn_total "$f" holding_mutex_sleep 'do_nanosleep')" "$(measured_us "$times" holding_mutex_sleep)" \
	"$(lost_ms "$w_manifest" 300)"
check_within "blocked_in_short_sleep: 100 x 2 ms" 200 \
	"$(fn_total "$f" blocked_in_short_sleep 'do_nanosleep')" "$(measured_us "$times" blocked_in_short_sleep)" \
	"$(lost_ms "$w_manifest" 2)"

m="$TEST_TMP/w/manifest.json"
check_grep "the manifest counts context switches" '"switches"' "$m"
check_grep "the manifest counts dropped stacks" '"kernel_stacks_dropped"' "$m"
check_grep "the manifest counts kept intervals" '"intervals_kept"' "$m"
check_grep "the manifest counts garbage frames folded into [unknown]" '"unknown_frames_folded": *[0-9]' "$m"

# min_block_us = 20 ms: the 2 ms sleeps go, the 200 ms ones stay.  An
# interval lasts until the thread runs again, so on a loaded machine a 2 ms
# sleep can really be off the CPU for 20 ms or more, and be kept: what is
# kept of the short sleeps is bounded by the calls the thread measured at
# 20 ms or more (none on an idle machine), while without the cut it would
# be all hundred of them.
run_tracerig -c "$offcpu_profile" --set ebpf.min_block_us=20000 -o "$TEST_TMP/m.trace.zip" -- \
	"$workload" -t "$TEST_TMP/m.times"
check_eq "tracerig runs with min_block_us" 0 "$rc"
unzip_archive "$TEST_TMP/m.trace.zip" "$TEST_TMP/m"
check_cut_below "min_block_us drops the short waits" 20000 \
	"$(fn_total "$TEST_TMP/m/offcpu.folded" blocked_in_short_sleep)" "$TEST_TMP/m.times" \
	blocked_in_short_sleep
check_within "and keeps the long ones" 600 \
	"$(fn_total "$TEST_TMP/m/offcpu.folded" blocked_in_sleep 'do_nanosleep')" \
	"$(measured_us "$TEST_TMP/m.times" blocked_in_sleep)" "$(lost_ms "$TEST_TMP/m/manifest.json" 200)"
check_grep "the manifest counts the dropped waits" '"intervals_below_min_block": *[1-9]' "$TEST_TMP/m/manifest.json"
done_testing

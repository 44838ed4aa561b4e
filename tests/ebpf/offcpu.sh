#!/bin/sh
# The ebpf backend end to end: tracerig launches a workload whose threads
# block in known functions for known times (tests/ebpf/blockers.c: 3 x 200 ms
# sleeps, a pipe read answered after 400 ms, a mutex held 300 ms by another
# thread, 100 x 2 ms sleeps); offcpu.folded must show each function with its
# blocked time within -2 % / +10 % (+50 % for the 2 ms sleeps: an interval
# lasts until the thread runs again, and on a busy CI machine waiting for a
# CPU after the wake-up weighs much more on 2 ms than on 200 ms), and a
# min-block threshold must drop the short waits.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf

run_tracerig -c "$offcpu_profile" -o "$TEST_TMP/w.trace.zip" -- "$workload"
check_eq "tracerig traces the launched workload" 0 "$rc"
[ "$rc" = 0 ] || cat "$TEST_TMP/out" | sed 's/^/# /'
unzip_archive "$TEST_TMP/w.trace.zip" "$TEST_TMP/w"
f="$TEST_TMP/w/offcpu.folded"
check "offcpu.folded is in the archive" test -s "$f"
check_grep "offcpu.svg is a flame graph" '<svg' "$TEST_TMP/w/offcpu.svg"
check_grep "stacks start at the process" '^workload;' "$f"
# (Its exec, still named after tracerig's forked child, counts too.)
check_eq "only the launched workload is traced" 0 "$(grep -cvE '^(workload|tracerig);' "$f")"
check_no_grep "tracerig's own threads are not" 'notify_thread|tr_session_run|tr_command_release' "$f"
check_grep "user frames go down to the blocking function, then kernel frames" \
	';blocked_in_pipe_read;.*_\[k\] [0-9]+$' "$f"
check_no_grep "the tracing machinery's frames are left out" 'bpf_trace_run|bpf_prog_' "$f"

check_near "blocked_in_sleep: 3 x 200 ms in do_nanosleep" 600 \
	"$(fn_total "$f" blocked_in_sleep 'do_nanosleep')" 10
check_near "blocked_in_pipe_read: 400 ms in pipe_read" 400 \
	"$(fn_total "$f" blocked_in_pipe_read 'pipe_read')" 10
check_near "blocked_on_mutex: 300 ms in futex_wait" 300 \
	"$(fn_total "$f" blocked_on_mutex 'futex_wait')" 10
check_near "holding_mutex_sleep: 300 ms" 300 \
	"$(fn_total "$f" holding_mutex_sleep 'do_nanosleep')" 10
check_near "blocked_in_short_sleep: 100 x 2 ms" 200 \
	"$(fn_total "$f" blocked_in_short_sleep 'do_nanosleep')" 50

m="$TEST_TMP/w/manifest.json"
check_grep "the manifest counts context switches" '"switches"' "$m"
check_grep "the manifest counts dropped stacks" '"kernel_stacks_dropped"' "$m"
check_grep "the manifest counts kept intervals" '"intervals_kept"' "$m"

# min_block_us = 20 ms: the 2 ms sleeps go, the 200 ms ones stay.
run_tracerig -c "$offcpu_profile" --set ebpf.min_block_us=20000 -o "$TEST_TMP/m.trace.zip" -- "$workload"
check_eq "tracerig runs with min_block_us" 0 "$rc"
unzip_archive "$TEST_TMP/m.trace.zip" "$TEST_TMP/m"
check_eq "min_block_us drops the short waits" 0 "$(fn_total "$TEST_TMP/m/offcpu.folded" blocked_in_short_sleep)"
check_near "and keeps the long ones" 600 \
	"$(fn_total "$TEST_TMP/m/offcpu.folded" blocked_in_sleep 'do_nanosleep')" 10
check_grep "the manifest counts the dropped waits" '"intervals_below_min_block": *[1-9]' "$TEST_TMP/m/manifest.json"
done_testing

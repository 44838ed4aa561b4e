#!/usr/bin/env bash
# Stacks cut at the callchain limit (the kernel's perf_event_max_stack, or
# [perf_events] max_stack, perf record's --max-stack) lack their outermost
# frames: cpu.folded roots them at [cut at max_stack] rather than pass them
# off as stacks that start there, the manifest counts them, and the log
# says what to raise.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
chain_workload fp no-omit

# --- max_stack = 3: main -> chain_outer -> chain_middle -> lib_inner ->
# lib_leaf keeps its three innermost frames (as a frame-pointer walk sees
# them), marked as cut.
printf '[tracerig]\nname = ms\n[perf_events]\nkernel = no\nmax_stack = 3\n' >"$TEST_TMP/cut.ini"
run_tracerig -c "$TEST_TMP/cut.ini" -o "$TEST_TMP/a.trace.zip" -- "$w/fp/chain" 1.5
check_eq "max_stack = 3: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
check_grep "the leaf's stack: three frames under the cut mark" \
	'^chain-[0-9]+;chain-[0-9]+;\[cut at max_stack\];chain_[a-z]+;[a-z_]+;lib_leaf [0-9]+$' \
	"$TEST_TMP/a/cpu.folded"
check_no_grep "no cut stack passes for one starting in the workload" \
	'^chain-[0-9]+;chain-[0-9]+;(chain_|lib_)' "$TEST_TMP/a/cpu.folded"
check_no_grep "no chain stack is deeper than the limit" \
	'^chain-[0-9]+;chain-[0-9]+;\[cut at max_stack\](;[^;]*){4}' "$TEST_TMP/a/cpu.folded"
cut=$(awk '/;\[cut at max_stack\];/ { n += $NF } END { print n + 0 }' "$TEST_TMP/a/cpu.folded")
check "the cut samples are there ($cut)" test "$cut" -ge 100
check "manifest.json counts them: stacks_cut = the marked samples ($cut)" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
pe = [p for p in m["plugins"] if p["name"] == "perf_events"][0]
assert pe["counters"]["stacks_cut"] == int(sys.argv[2]), pe["counters"]
' "$TEST_TMP/a/manifest.json" "$cut"
check_grep "the log says how many, the limit, and what to raise" \
	"[0-9]+ sample\\(s\\) reached the callchain limit of 3 frames: .*kernel\\.perf_event_max_stack, or \\[perf_events\\] max_stack" \
	"$TEST_TMP/out"
check_grep "the kernel was asked for 3 frames (perf.data's attr)" 'sample_max_stack = 3' \
	<(perf evlist -v -i "$TEST_TMP/a/perf.data" 2>/dev/null | tr ',' '\n' | sed 's/^ *//; s/: / = /')

# --- the kernel's own limit (127 here): the same stacks are whole.
printf '[tracerig]\nname = ms\n[perf_events]\nkernel = no\n' >"$TEST_TMP/whole.ini"
run_tracerig -c "$TEST_TMP/whole.ini" -o "$TEST_TMP/b.trace.zip" -- "$w/fp/chain" 1
unzip_archive "$TEST_TMP/b.trace.zip" "$TEST_TMP/b"
check_grep "no limit reached: the stacks start at main's callers" \
	'^chain-[0-9]+;chain-[0-9]+;([^;]*;)?main;chain_outer;.*lib_leaf [0-9]+$' \
	"$TEST_TMP/b/cpu.folded"
check_no_grep "and none is marked cut" 'cut at max_stack' "$TEST_TMP/b/cpu.folded"
check_grep "stacks_cut is 0" '"stacks_cut": 0' "$TEST_TMP/b/manifest.json"

# --- above the kernel's limit: refused by the kernel, said with the fix.
limit=$(cat /proc/sys/kernel/perf_event_max_stack)
printf '[tracerig]\nname = ms\nrequired = perf_events\n[perf_events]\nmax_stack = %d\n' \
	$((limit + 1)) >"$TEST_TMP/over.ini"
run_tracerig -c "$TEST_TMP/over.ini" -d 1 -o "$TEST_TMP/c.trace.zip" -- true
check "max_stack above kernel.perf_event_max_stack: the run fails" test "$rc" -ne 0
check_grep "saying both values and what to do" \
	"max_stack = $((limit + 1)) is above kernel\\.perf_event_max_stack = $limit: lower it, or raise that with sysctl" \
	"$TEST_TMP/out"
done_testing

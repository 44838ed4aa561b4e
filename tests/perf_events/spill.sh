#!/usr/bin/env bash
# cpu.folded's lines beyond [perf_events] folded_memory go to sorted runs
# in the staging directory and are merged back at the end (issue 27: every
# process's stacks are rooted at its PID, so a long system-wide session's
# distinct lines grew with each process it saw).  With a limit of 4 KiB a
# loop of short processes spills many times; cpu.folded is still exactly
# what converting the finished perf.data gives, each stack once, and no
# run is left behind.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
CONVERT="$top_builddir/bench/perf_events/convert"
[ -x "$CONVERT" ] || skip_all "bench/perf_events/convert is not built (make check builds it)"
export TMPDIR="$TEST_TMP"
mkdir -p "$TEST_TMP/out"

N=60
cat >"$TEST_TMP/loop.sh" <<LOOP
for i in \$(seq $N); do "$DEMO" --seconds 0.03 --threads 2 2>/dev/null || exit 1; done
LOOP
"$TRACERIG" -vv -c "$CPU_INI" --set perf_events.frequency=2999 --set perf_events.folded_memory=4096 \
	-o "$TEST_TMP/out/a.trace.zip" -- sh "$TEST_TMP/loop.sh" >"$TEST_TMP/a.out" 2>&1 </dev/null
check_eq "tracerig records the loop of $N processes" 0 "$?"
unzip_archive "$TEST_TMP/out/a.trace.zip" "$TEST_TMP/a"
runs=$(sed -n 's/.*cpu\.folded: merged from \([0-9]*\) sorted runs.*/\1/p' "$TEST_TMP/a/tracerig.log" | tail -1)
check "cpu.folded was merged from runs on disk (${runs:-none})" test "${runs:-0}" -ge 1
check "at most 16 runs at once" test "${runs:-99}" -le 16
check_no_grep "no run failed to be written" "could not be written to the staging" "$TEST_TMP/a/tracerig.log"
"$CONVERT" "$TEST_TMP/a/perf.data" "$TEST_TMP/offline.txt" "$TEST_TMP/offline.folded" \
	>"$TEST_TMP/convert.out" 2>&1
check_eq "the offline conversion of its perf.data runs" 0 "$?"
check_eq "cpu.folded has the offline conversion's stacks and counts" \
	"$(sort "$TEST_TMP/offline.folded" | md5sum)" "$(sort "$TEST_TMP/a/cpu.folded" | md5sum)"
check_eq "each stack once in cpu.folded" "" \
	"$(sed 's/ [0-9]*$//' "$TEST_TMP/a/cpu.folded" | sort | uniq -d | head -3)"
check "cpu.folded is sorted" env LC_ALL=C sort -c "$TEST_TMP/a/cpu.folded"
demo_lines=$(grep -c '^tracerig-demo-[0-9]*;' "$TEST_TMP/a/cpu.folded")
check "stacks of many demo processes ($demo_lines lines)" test "$demo_lines" -ge "$N"
check "frames of the demo processes are named" grep -q 'demo_hot' "$TEST_TMP/a/cpu.folded"
check_eq "no run left behind" "" "$(find "$TEST_TMP" -name '.folded-*' | head -3)"
check "cpu.svg was drawn from it" grep -q 'demo_hot' "$TEST_TMP/a/cpu.svg"
done_testing

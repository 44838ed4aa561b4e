#!/usr/bin/env bash
# The views' memory beyond [perf_events] view_memory goes to the staging
# directory (issue 27: every process's stacks are rooted at its PID and
# every pprof sample labelled with it, so a long system-wide session's views
# grew with each process it saw): cpu.folded's lines to sorted runs merged
# back at the end, cpu.pb.gz's samples encoded and appended to the profile.
# With a limit of 4 KiB a loop of short processes spills both many times;
# cpu.folded is still exactly what converting the finished perf.data gives,
# each stack once; Google's pprof reads cpu.pb.gz whole (every sample of
# perf.data.txt, the demo's functions, one process by its pid label); and
# nothing is left behind.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
. "$top_srcdir/tests/lib-pprof.sh"
need_pprof
CONVERT="$top_builddir/bench/perf_events/convert"
[ -x "$CONVERT" ] || skip_all "bench/perf_events/convert is not built (make check builds it)"
export TMPDIR="$TEST_TMP"
mkdir -p "$TEST_TMP/out"

N=60
cat >"$TEST_TMP/loop.sh" <<LOOP
for i in \$(seq $N); do "$DEMO" --seconds 0.03 --threads 2 2>/dev/null || exit 1; done
LOOP
"$TRACERIG" -vv -c "$CPU_INI" --set perf_events.frequency=2999 --set perf_events.view_memory=4096 \
	-o "$TEST_TMP/out/a.trace.zip" -- sh "$TEST_TMP/loop.sh" >"$TEST_TMP/a.out" 2>&1 </dev/null
check_eq "tracerig records the loop of $N processes" 0 "$?"
unzip_archive "$TEST_TMP/out/a.trace.zip" "$TEST_TMP/a"
runs=$(sed -n 's/.*cpu\.folded: merged from \([0-9]*\) sorted runs.*/\1/p' "$TEST_TMP/a/tracerig.log" | tail -1)
check "cpu.folded was merged from runs on disk (${runs:-none})" test "${runs:-0}" -ge 1
check "at most 16 runs at once" test "${runs:-99}" -le 16
spills=$(sed -n 's/.*cpu\.pb\.gz: \([0-9]*\) spills of samples.*/\1/p' "$TEST_TMP/a/tracerig.log" | tail -1)
check "cpu.pb.gz's samples were spilled (${spills:-never})" test "${spills:-0}" -ge 2
check_no_grep "no spill failed to be written" "could not be written to the staging" "$TEST_TMP/a/tracerig.log"
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
total=$(grep -c '^[^ 	]' "$TEST_TMP/a/perf.data.txt")
got=$("$PPROF" -top -sample_index=samples "$TEST_TMP/a/cpu.pb.gz" 2>/dev/null | sed -n 's/.*of \([0-9]*\) total.*/\1/p')
check_eq "pprof reads every sample of perf.data.txt from cpu.pb.gz" "$total" "$got"
"$PPROF" -top -nodecount=1000 "$TEST_TMP/a/cpu.pb.gz" >"$TEST_TMP/top" 2>&1
check_grep "pprof names the demo's functions" 'demo_hot' "$TEST_TMP/top"
# The profile's binary is the mapping with the most samples, spilled
# ones counted: the demo, not the shell that ran the loop.
check_grep "pprof takes the demo for the profile's binary" '^File: tracerig-demo$' "$TEST_TMP/top"
pid=$(awk '/^tracerig-demo/ { split($2, a, "/"); print a[1]; exit }' "$TEST_TMP/a/perf.data.txt")
pid_samples=$(awk -v p="$pid" '/^[^ \t]/ { split($2, a, "/"); if (a[1] == p) n++ } END { print n + 0 }' "$TEST_TMP/a/perf.data.txt")
got=$("$PPROF" -top -sample_index=samples -nodefraction=0 -nodecount=100000 -tagfocus="pid=$pid" \
	"$TEST_TMP/a/cpu.pb.gz" 2>/dev/null | sed -n 's/.*accounting for \([0-9]*\),.*/\1/p')
check_eq "-tagfocus=pid=$pid keeps that process's samples" "$pid_samples" "$got"
check_eq "no run left behind" "" "$(find "$TEST_TMP" -name '.folded-*' -o -name '.pprof-*' | head -3)"
check "cpu.svg was drawn from it" grep -q 'demo_hot' "$TEST_TMP/a/cpu.svg"
done_testing

#!/usr/bin/env bash
# What perf_events' conversion and the core's symbolizer keep per process
# goes once the replay is past the process's end (issue 27: a system-wide
# session beside a compile loop grew without bound, every compile new
# PIDs).  A launched command runs 150 short two-threaded processes one
# after the other: the conversion's log says they ended and that none of
# their frame texts is kept; and what it writes is still byte for byte
# what converting the finished perf.data gives without forgetting anything
# (bench/perf_events/convert keeps every process).
. "$top_srcdir/tests/perf_events/lib-perf.sh"
CONVERT="$top_builddir/bench/perf_events/convert"
[ -x "$CONVERT" ] || skip_all "bench/perf_events/convert is not built (make check builds it)"
export TMPDIR="$TEST_TMP"

N=150
# The last one's end is more than a second (of the recording's time, the
# grace a process's state is kept after its end) before the shell's.
cat >"$TEST_TMP/loop.sh" <<LOOP
for i in \$(seq $N); do "$DEMO" --seconds 0.03 --threads 2 2>/dev/null || exit 1; done
sleep 1.5
LOOP
"$TRACERIG" -vv -c "$CPU_INI" --set perf_events.frequency=2999 -o "$TEST_TMP/a.trace.zip" \
	-- sh "$TEST_TMP/loop.sh" >"$TEST_TMP/a.out" 2>&1 </dev/null
check_eq "tracerig records the loop of $N processes" 0 "$?"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
line=$(grep -o 'conversion: [0-9]* processes ended, [0-9]* followed still kept .*; frame texts kept: [0-9]* user, [0-9]* kernel' \
	"$TEST_TMP/a/tracerig.log" | tail -1)
check "the conversion says what it keeps" test -n "$line"
set -- $(echo "$line" | tr -cs '0-9' ' ')
ended=${1:-0} running=${2:-0} user=${3:-999999}
demo_samples=$(grep -Ec '^tracerig-demo|^demo-worker' "$TEST_TMP/a/perf.data.txt")
check "the demo processes were sampled ($demo_samples samples)" test "$demo_samples" -ge "$N"
check "at least the $N demo processes ended ($ended)" test "$ended" -ge "$N"
# The launched shell and its sleep may still be kept: their texts stay, a
# few dozen; $N processes' would be thousands.
check "no ended process keeps its frame texts ($user user texts kept, $running processes)" \
	test "$user" -le 300
"$CONVERT" "$TEST_TMP/a/perf.data" "$TEST_TMP/offline.txt" "$TEST_TMP/offline.folded" \
	>"$TEST_TMP/convert.out" 2>&1
check_eq "the offline conversion of its perf.data runs" 0 "$?"
check "perf.data.txt is byte for byte the offline conversion's" \
	cmp "$TEST_TMP/a/perf.data.txt" "$TEST_TMP/offline.txt"
check_eq "cpu.folded has the same stacks and counts" \
	"$(sort "$TEST_TMP/offline.folded" | md5sum)" "$(sort "$TEST_TMP/a/cpu.folded" | md5sum)"
check "frames of the demo processes are named" grep -q 'demo_hot' "$TEST_TMP/a/cpu.folded"
done_testing

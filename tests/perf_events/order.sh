#!/usr/bin/env bash
# perf.data.txt is in time order, across CPUs and within every thread, as
# `perf script` prints it (speedscope refuses text that goes back in time),
# and it holds the same samples as perf script reads from the same file.
. "$top_srcdir/tests/perf_events/lib-perf.sh"

out="$TEST_TMP/o.trace.zip"
# More busy threads than CPUs: they migrate, both rings fill and are drained
# in turn, which is what put the text out of order.
run_tracerig -c "$CPU_INI" -o "$out" -- "$DEMO" --seconds 2 --threads 4
check_eq "a multi-threaded demo is traced: exit 0" 0 "$rc"
unzip_archive "$out" "$TEST_TMP/o"
txt="$TEST_TMP/o/perf.data.txt"

check "perf.data.txt never goes back in time, globally or within a thread" python3 - "$txt" <<'PY'
import re, sys
head = re.compile(r'^.+?\s+(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):')
last, per_tid, n, cpus = -1, {}, 0, set()
for i, line in enumerate(open(sys.argv[1], errors='replace'), 1):
    m = head.match(line)
    if not m:
        continue
    t = int(m.group(4)) * 10**6 + int(m.group(5))
    tid = m.group(2)
    assert t >= last, f"line {i}: {t} after {last}"
    assert t >= per_tid.get(tid, -1), f"line {i}: thread {tid} goes back in time"
    last, per_tid[tid], n = t, t, n + 1
    cpus.add(m.group(3))
assert n > 100, f"only {n} samples"
print(n, "samples on CPUs", sorted(cpus))
PY

if command -v perf >/dev/null 2>&1; then
	perf script -i "$TEST_TMP/o/perf.data" -F tid,time 2>/dev/null |
		awk '{print $1, $2}' >"$TEST_TMP/perf-order"
	grep -E '^\S.* [0-9]+/[0-9]+ +\[[0-9]+\] +[0-9]+\.[0-9]+:' "$txt" |
		sed -E 's/^.* [0-9]+\/([0-9]+) +\[[0-9]+\] +([0-9]+\.[0-9]+):.*/\1 \2:/' >"$TEST_TMP/our-order"
	check "the same samples in the same order as perf script (tid, time)" \
		cmp "$TEST_TMP/perf-order" "$TEST_TMP/our-order"
else
	skip "the same samples in the same order as perf script" "perf is not installed"
fi

done_testing

#!/usr/bin/env bash
# Who is sampled: -p takes one process (all its threads) and nothing else;
# a launched command's short-lived children are caught; system-wide sees
# everyone; a cgroup takes exactly its processes.
. "$top_srcdir/tests/perf_events/lib-perf.sh"

# Long enough to outlive every run below however loaded the machine is
# (on_exit stops them): with 6 s they had exited before the system-wide
# run when the runs before it were slow.
"$DEMO" --seconds 120 --threads 2 2>/dev/null &
a=$!
"$DEMO" --seconds 120 --threads 1 2>/dev/null &
b=$!
on_exit "kill $a $b 2>/dev/null; wait 2>/dev/null"
sleep 0.3

# thread_cpu PID: "TID ns" for each thread, its time on a CPU (schedstat).
thread_cpu() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat" 2>/dev/null)"
	done
}
# The threads' CPU times are read inside the clock reads, around the run.
mono_before=$(mono_now)
thread_cpu "$a" >"$TEST_TMP/p-cpu-before"
run_tracerig -c "$CPU_INI" -o "$TEST_TMP/p.trace.zip" -p "$a" -d 1
thread_cpu "$a" >"$TEST_TMP/p-cpu-after"
mono_after=$(mono_now)
check_eq "-p PID: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/p.trace.zip" "$TEST_TMP/p"
check_eq "-p: only that process has samples" "$a" "$(sample_pids "$TEST_TMP/p/perf.data.txt" | tr '\n' ' ' | sed 's/ $//')"
# Each worker thread is sampled as much as the CPU time it got in the
# sampling window, which a loaded machine makes a small share of the 999 Hz.
# That time is not known, but bounded: at most what the thread got during
# the whole run, at least that minus the wall-clock time of the run outside
# the window (a thread runs on one CPU at a time).  On an idle machine the
# lower bound is most of the 999 Hz; on a loaded one it drops to 1 sample.
check "-p: both of its worker threads are sampled, as much as the CPU time they got" \
	python3 - "$TEST_TMP/p/perf.data.txt" "$a" "$TEST_TMP/p-cpu-before" "$TEST_TMP/p-cpu-after" \
	"$mono_before" "$mono_after" "$TEST_TMP/p/manifest.json" <<'PY'
import collections, json, re, sys
txt, pid, before, after, lo, hi, manifest = sys.argv[1:]
samples = collections.Counter(m.group(1) for m in
    (re.match(r'^demo-worker +' + pid + r'/(\d+) ', l) for l in open(txt)) if m)
def cpu(path):
    return {t: int(ns) for t, ns in (l.split() for l in open(path) if len(l.split()) == 2)}
cpu0, cpu1 = cpu(before), cpu(after)
c = [x for x in json.load(open(manifest))["plugins"] if x["name"] == "perf_events"][0]["counters"]
window = (c["window_end_ns"] - c["window_start_ns"]) / 1e9
outside = float(hi) - float(lo) - window
workers = [t for t in cpu1 if t != pid and t in cpu0]
assert len(workers) == 2, f"threads {sorted(cpu1)}: want 2 workers"
for t in workers:
    got = (cpu1[t] - cpu0[t]) / 1e9
    # (+-10 ms: schedstat is brought up to date at ticks and switches.)
    low = max(1, 0.9 * 999 * (got - outside - 0.01))
    high = 1.05 * 999 * (got + 0.01) + 5
    print(f"thread {t}: {samples[t]} samples, {got:.3f} s of CPU in the {window + outside:.3f} s "
          f"run, {window:.3f} s window: want {low:.0f} to {high:.0f}")
    assert low <= samples[t] <= high, t
PY
check_eq "-p: its hottest function is demo_hot" demo_hot \
	"$(leaf_counts "$TEST_TMP/p/perf.data.txt" "$a" | head -1 | cut -d' ' -f1)"

run_tracerig -c "$CPU_INI" -o "$TEST_TMP/s.trace.zip" -d 1
check_eq "system-wide: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/s.trace.zip" "$TEST_TMP/s"
sample_pids "$TEST_TMP/s/perf.data.txt" >"$TEST_TMP/s-pids"
check "system-wide: both demos are sampled" sh -c "grep -qx $a '$TEST_TMP/s-pids' && grep -qx $b '$TEST_TMP/s-pids'"
check "system-wide: samples from every CPU" \
	test "$(sed -n 's/.*\[\([0-9]\{3\}\)\].*/\1/p' "$TEST_TMP/s/perf.data.txt" | sort -u | wc -l)" -eq "$(nproc)"

# perf_events follows cgroup v2 (the unified hierarchy, wherever mounted).
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
cg=${cg2:-/nonexistent}/tracerig-test-$$
if [ -n "$cg2" ] && mkdir "$cg" 2>/dev/null && echo "$b" >"$cg/cgroup.procs"; then
	on_exit "kill $a $b 2>/dev/null; wait 2>/dev/null; rmdir $cg 2>/dev/null"
	run_tracerig -c "$CPU_INI" -o "$TEST_TMP/c.trace.zip" -d 1 --set tracerig.cgroup="$cg"
	check_eq "cgroup: exit 0" 0 "$rc"
	unzip_archive "$TEST_TMP/c.trace.zip" "$TEST_TMP/c"
	check_eq "cgroup: only the cgroup's process is sampled" "$b" \
		"$(sample_pids "$TEST_TMP/c/perf.data.txt" | tr '\n' ' ' | sed 's/ $//')"
else
	skip "cgroup: only the cgroup's process is sampled" "no cgroup v2 hierarchy to create a cgroup in"
fi

# A child that lives 200 ms and exits long before the session ends.
run_tracerig -c "$CPU_INI" -o "$TEST_TMP/f.trace.zip" -- "$DEMO" --seconds 1 --threads 1 --fork
check_eq "launched command with a short-lived child: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/f.trace.zip" "$TEST_TMP/f"
check_eq "the command and its child are sampled" 2 "$(sample_pids "$TEST_TMP/f/perf.data.txt" | wc -l)"
check_grep "the exited child's frames are symbolized" \
	'^	 +[0-9a-f]+ demo_child_spin \(.*tracerig-demo\)$' "$TEST_TMP/f/perf.data.txt"

# Counting starts at the command's exec: none of tracerig's own code.
check_no_grep "nothing of tracerig before the exec" '^(tracerig|tr[-:][a-z_-]+) ' "$TEST_TMP/f/perf.data.txt"

done_testing

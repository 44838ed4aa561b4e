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

run_tracerig -c "$CPU_INI" -o "$TEST_TMP/p.trace.zip" -p "$a" -d 1
check_eq "-p PID: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/p.trace.zip" "$TEST_TMP/p"
check_eq "-p: only that process has samples" "$a" "$(sample_pids "$TEST_TMP/p/perf.data.txt" | tr '\n' ' ' | sed 's/ $//')"
# (Each thread gets what CPU a loaded machine leaves it: a share of the
# 999 Hz, not all of it; 10 samples each is far below any share.)
check "-p: both of its worker threads are sampled" \
	test "$(sed -n "s/^demo-worker  *$a\/\([0-9]*\) .*/\1/p" "$TEST_TMP/p/perf.data.txt" |
		sort | uniq -c | awk '$1 >= 10' | wc -l)" -ge 2
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
check_no_grep "nothing of tracerig before the exec" '^tracerig ' "$TEST_TMP/f/perf.data.txt"

done_testing

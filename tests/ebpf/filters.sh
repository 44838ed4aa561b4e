#!/bin/sh
# Who gets traced: -p takes one process and leaves a second blocking one
# out; a cgroup takes the processes in it.  Both workloads loop the same
# scenario under different names (-n).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf

"$workload" -n target -l & target=$!
"$workload" -n bystander -l & bystander=$!
on_exit "kill $target $bystander 2>/dev/null; wait 2>/dev/null"

run_tracerig -c "$offcpu_profile" -p "$target" -d 2 -o "$TEST_TMP/p.trace.zip"
check_eq "tracerig -p traces a running process" 0 "$rc"
unzip_archive "$TEST_TMP/p.trace.zip" "$TEST_TMP/p"
f="$TEST_TMP/p/offcpu.folded"
check_grep "the -p process is traced, under its PID" "^target-$target;target-[0-9]+;.*;blocked_in_sleep;" "$f"
check_no_grep "the second blocking process is not" '^bystander-' "$f"
check_no_grep "nor anything else" '^[^t]' "$f"

# A cgroup (v2; unified or hybrid hierarchy) holding the bystander only.
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$cg2" ] && cg=$cg2/tracerig-ebpf-test.$$ && mkdir "$cg" 2>/dev/null; then
	on_exit "cat $cg/cgroup.procs 2>/dev/null | while read p; do echo \$p >$cg2/cgroup.procs; done; rmdir $cg"
	if echo "$bystander" >"$cg/cgroup.procs"; then
		run_tracerig -c "$offcpu_profile" --set tracerig.cgroup="$cg" -d 2 -o "$TEST_TMP/c.trace.zip"
		check_eq "tracerig traces a cgroup" 0 "$rc"
		unzip_archive "$TEST_TMP/c.trace.zip" "$TEST_TMP/c"
		check_grep "the cgroup's process is traced" "^bystander-$bystander;bystander-[0-9]+;.*;blocked_in_sleep;" "$TEST_TMP/c/offcpu.folded"
		check_no_grep "processes outside it are not" '^target-' "$TEST_TMP/c/offcpu.folded"
	else
		skip "cgroup filter" "cannot move a process into $cg"
	fi
else
	skip "cgroup filter" "no writable cgroup v2 hierarchy"
fi
done_testing

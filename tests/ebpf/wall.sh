#!/bin/sh
# The wall-clock view, a core step after every source has flushed: the core
# joins the folded views the sources declared (an on-CPU source's samples,
# each worth what the source says, and ebpf's offcpu.folded) into
# wall.folded, in microseconds, every leaf marked [on-cpu] or [off-cpu],
# other processes' samples left out, whatever the order of the sources.  The
# on-CPU source is first a stand-in plugin (tests/ebpf/fakecpu.c) declaring
# 10 ms a sample; with perf_events built, the shipped wall.ini is run for
# real as well and the roots ("comm-PID;tcomm-TID") are checked against the
# workload's real PID and TIDs.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf
TRACERIG_PLUGIN_PATH="$top_builddir/tests/ebpf:$TRACERIG_PLUGIN_PATH"
export TRACERIG_PLUGIN_PATH

# ebpf first: the view no longer depends on which source flushes first.
cat >"$TEST_TMP/wall.ini" <<'INI'
[tracerig]
name = walltest
required = ebpf, fakecpu
[ebpf]
[fakecpu]
INI
run_tracerig -c "$TEST_TMP/wall.ini" -o "$TEST_TMP/w.trace.zip" -- "$workload" -t "$TEST_TMP/w.times"
check_eq "tracerig runs ebpf and an on-CPU source" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
unzip_archive "$TEST_TMP/w.trace.zip" "$TEST_TMP/w"
f="$TEST_TMP/w/wall.folded"
pid=$(measured_us "$TEST_TMP/w.times" pid)
check "wall.folded is in the archive" test -s "$f"
check_grep "wall.svg is a flame graph" '<svg' "$TEST_TMP/w/wall.svg"
check_grep "the manifest lists wall.folded" '"wall\.folded"' "$TEST_TMP/w/manifest.json"
check_grep "on-CPU samples become time at the declared 10 ms each, marked, under the same root" \
	"^workload-$pid;workload-$pid;main;spin_on_cpu;\\[on-cpu\\] 100000\$" "$f"
check_no_grep "other processes' samples are left out" 'other_process' "$f"
check_grep "off-CPU stacks are marked, under the process and the thread" \
	"^workload-$pid;workload-[0-9]+;.*;blocked_in_sleep;.*_\\[k\\];\\[off-cpu\\] [0-9]+\$" "$f"
check_eq "every line is marked" 0 "$(grep -cvE ';\[(on|off)-cpu\] [0-9]+$' "$f")"
check_eq "off-CPU time is the same as in offcpu.folded" \
	"$(awk '{ s += $NF } END { print s }' "$TEST_TMP/w/offcpu.folded")" \
	"$(grep -F '[off-cpu]' "$f" | awk '{ s += $NF } END { print s }')"
check_no_grep "no key to copy: nothing about oncpu_frequency" 'oncpu_frequency' "$TEST_TMP/out"

# A profile that still sets the old key works and is told it is not needed.
cat >"$TEST_TMP/old.ini" <<'INI'
[tracerig]
name = walltest
required = fakecpu, ebpf
[fakecpu]
[ebpf]
oncpu_frequency = 250
INI
run_tracerig -c "$TEST_TMP/old.ini" -o "$TEST_TMP/o.trace.zip" -- "$workload"
check_eq "oncpu_frequency is still accepted" 0 "$rc"
check_grep "and said to be ignored" 'ebpf: warning: oncpu_frequency is no longer needed and is ignored' "$TEST_TMP/out"
unzip_archive "$TEST_TMP/o.trace.zip" "$TEST_TMP/o"
check_grep "the samples keep the worth their source declared" \
	';main;spin_on_cpu;\[on-cpu\] 100000$' "$TEST_TMP/o/wall.folded"

# ebpf alone: no on-CPU view, no wall.folded.
run_tracerig -c "$offcpu_profile" -o "$TEST_TMP/a.trace.zip" -- "$workload"
check_eq "ebpf alone runs" 0 "$rc"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
check "without an on-CPU view there is no wall.folded" test ! -e "$TEST_TMP/a/wall.folded"

# The shipped profile, with the real perf_events backend.
if [ -e "$top_builddir/plugins/perf_events/perf_events.la" ]; then
	# 300 ms on the CPU first: the real on-CPU side needs samples.
	run_tracerig -c "$top_srcdir/conf/profiles/wall.ini" -o "$TEST_TMP/r.trace.zip" -- \
		"$workload" -s 300 -t "$TEST_TMP/r.times"
	check_eq "wall.ini runs" 0 "$rc"
	[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
	unzip_archive "$TEST_TMP/r.trace.zip" "$TEST_TMP/r"
	r="$TEST_TMP/r"
	pid=$(measured_us "$TEST_TMP/r.times" pid)
	pipe_tid=$(measured_us "$TEST_TMP/r.times" tid:blocked_in_pipe_read)
	check_grep "wall.ini gives the off-CPU side, under the reading thread" \
		"^workload-$pid;workload-$pipe_tid;.*;blocked_in_pipe_read;.*\\[off-cpu\\] [0-9]+\$" "$r/wall.folded"
	# spin_on_cpu runs on the main thread: TID = PID.
	check_grep "and the on-CPU side, in the spinning function, under the main thread" \
		"^workload-$pid;workload-$pid;.*spin_on_cpu;.*\\[on-cpu\\] [0-9]+\$" "$r/wall.folded"
	on_us=$(grep -F '[on-cpu]' "$r/wall.folded" | grep -F ';spin_on_cpu;' | awk '{ s += $NF } END { print s + 0 }')
	cpu_us=$(measured_us "$TEST_TMP/r.times" cpu:spin_on_cpu)
	# The samples become the CPU time the spin really got (its thread's
	# clock), within sampling error: a quarter and three 99 Hz samples.
	check "spin_on_cpu's on-CPU time is its CPU time ($on_us us sampled, $cpu_us us measured)" \
		awk -v u="$on_us" -v c="${cpu_us:-0}" 'BEGIN { d = u - c; if (d < 0) d = -d; exit !(c > 0 && u > 0 && d <= c / 4 + 30000) }'
	check_grep "perf_events says what a sample was worth" '"ns_per_sample": *[1-9]' "$r/manifest.json"
	# cpu.folded's roots are the PIDs and TIDs perf_events sampled, as
	# perf.data.txt ("comm pid/tid ...") has them.
	sed -n 's/^[^;]*-\([0-9]*\);[^;]*-\([0-9]*\);.*/\1\/\2/p' "$r/cpu.folded" | sort -u >"$TEST_TMP/folded.ids"
	sed -n 's/^.* \{1,\}\([0-9]\{1,\}\)\/\([0-9]\{1,\}\) \{1,\}\[[0-9]\{3\}\] .*/\1\/\2/p' "$r/perf.data.txt" |
		sort -u >"$TEST_TMP/txt.ids"
	check "cpu.folded has roots" test -s "$TEST_TMP/folded.ids"
	check_eq "cpu.folded's pid/tid pairs are perf.data.txt's" "$(cat "$TEST_TMP/txt.ids")" "$(cat "$TEST_TMP/folded.ids")"
	check_grep "cpu.folded roots the workload's samples at its PID and main thread" \
		"^workload-$pid;workload-$pid;.*spin_on_cpu [0-9]+\$" "$r/cpu.folded"

	# A flight recorder's snapshot has its own wall-clock view: the
	# final one, at the command's end, covers the whole short run.
	mkdir -p "$TEST_TMP/fl"
	run_tracerig -c "$top_srcdir/conf/profiles/wall.ini" --set tracerig.mode=flight \
		--set tracerig.window=60s -o "$TEST_TMP/fl" -- "$workload" -s 300 -t "$TEST_TMP/fl.times"
	check_eq "wall.ini runs as a flight recorder" 0 "$rc"
	[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
	fl_zip=$(ls "$TEST_TMP/fl"/wall-*.trace.zip 2>/dev/null | head -1)
	unzip_archive "$fl_zip" "$TEST_TMP/fls"
	fl="$TEST_TMP/fls"
	pid=$(measured_us "$TEST_TMP/fl.times" pid)
	pipe_tid=$(measured_us "$TEST_TMP/fl.times" tid:blocked_in_pipe_read)
	check_grep "the snapshot's wall.folded has the off-CPU side" \
		"^workload-$pid;workload-$pipe_tid;.*;blocked_in_pipe_read;.*\\[off-cpu\\] [0-9]+\$" "$fl/wall.folded"
	check_grep "and the on-CPU side" \
		"^workload-$pid;workload-$pid;.*spin_on_cpu;.*\\[on-cpu\\] [0-9]+\$" "$fl/wall.folded"
	check_grep "with its flame graph" '<svg' "$fl/wall.svg"
	check "its wall.pb.gz is dated by the snapshot's range" \
		python3 "$top_srcdir/tests/pprof-dated.py" "$fl/wall.pb.gz" "$fl/manifest.json"
else
	skip "wall.ini with perf_events" "the perf_events backend is not built"
fi
done_testing

#!/bin/sh
# ebpf callchain = cfi (user stacks walked in the kernel by tables compiled
# from .eh_frame) gives the whole stacks callchain = dwarf gives, and both
# give the ones perf's --call-graph dwarf gives.  The workload
# (tests/ebpf/cfi/nofp2.c) is built -O2 -fomit-frame-pointer and blocks
# through Debian's libc, which has no frame pointers either: in
# pthread_cond_wait, epoll_wait and read from known callers, in nanosleep
# from a qsort comparator (the walk goes through libc's merge sort), and in
# a library it dlopen()s a second after its start (libcfilate.c, built here
# like late.sh's library).
#
# The bounds do not depend on load: each waiter is woken only once it
# sleeps in its system call and 5 ms after that, the comparator and the
# late library sleep 5 ms a time, ROUNDS times each; every total is
# checked against 80 % of ROUNDS x 5 ms, as dwarf.sh does (but cfi's in
# the late library: its first stacks may come before the walker has the
# library's tables, and must then be counted as short).  For cfi, 99 % of
# each other blocking thread's time has stacks that reach the thread
# start.  Where perf is installed, the distinct chains each tool finds
# from the thread function down to the libc wrapper are the same, frame
# by frame (the workload is deterministic: the same comparisons, so the
# same merge sort depths, every run).
#
# The workload warms up for half a second before its threads start: a
# process's first stacks, before callchain = cfi has its tables, keep one
# frame (counted, as the test checks), which is the start of a service,
# not its steady state.
# test-lock: exclusive (stock perf: perf 6.1 aborts, util/build-id.c:1010, on
# perf.data recorded while another test's tracerig has BPF programs loaded)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf
nofp2="$top_builddir/tests/ebpf/cfi/nofp2"
[ -x "$nofp2" ] || skip_all "tests/ebpf/cfi/nofp2 is not built"
command -v cc >/dev/null || skip_all "no C compiler to build the late library"
lib="$TEST_TMP/libcfilate.so"
cc -O2 -g -fomit-frame-pointer -shared -fPIC -o "$lib" "$top_srcdir/tests/ebpf/cfi/libcfilate.c" ||
	skip_all "cannot build the late library"
dwarf_profile="$top_srcdir/conf/profiles/offcpu-dwarf.ini"
rounds=200
least_us=$((rounds * 5000 * 8 / 10))

# Each blocker: thread function, caller, blocker, the libc wrapper (a regex
# for its frame), a kernel frame of the wait.  The late one's caller and
# blocker are late_caller;late_lib_entry in the program and the library,
# then late_lib_blocker in the library.
# (A file read by the loops, not a pipe into them: a pipe would run them
# in a subshell, which would count the checks for itself.)
blockers="$TEST_TMP/blockers"
cat >"$blockers" <<'EOF'
condwait_thread condwait_caller condwait_blocker pthread_cond_wait futex
epollwait_thread epollwait_caller epollwait_blocker epoll_wait epoll
piperead_thread piperead_caller piperead_blocker read pipe_read
sort_thread sort_caller my_sorter nanosleep do_nanosleep
late_thread late_caller late_lib_entry nanosleep do_nanosleep
EOF
# The part of a stack from the thread function down to the wrapper, as a
# regex of folded frames; a thread's whole stack starts with the two frames
# of libc that start threads (clone3;start_thread with libc's symbols).
chain_re() {
	case $3 in
	my_sorter) echo "$1;$2;$3;[^;]*qsort[^;]*;([^;]+;)*my_compare;[^;]*$4[^;]*" ;;
	late_lib_entry) echo "$1;$2;$3;late_lib_blocker;[^;]*$4[^;]*" ;;
	*) echo "$1;$2;$3;[^;]*$4[^;]*" ;;
	esac
}
root='^nofp2-[0-9]+;nofp2-[0-9]+;'
thread_root="$root[^;]+;[^;]+;"
# A stack that reaches its start: in _start, or in clone3 (where a thread
# starts, and where the main thread creates one: the CFI ends there both
# times), or two frames above a thread function whatever their names.
whole_re="$root(_start;|clone3;|[^;]+;[^;]+;[a-z]+_thread;)"

# re_total FOLDED REGEX: microseconds of the lines matching REGEX.
re_total() { awk -v re="$2" '$0 ~ re { s += $NF } END { printf "%d\n", s }' "$1"; }
# at_least NAME ACTUAL MINIMUM
at_least() {
	if [ "${2:-0}" -ge "$3" ]; then ok "$1"; else not_ok "$1" "got ${2:-0}, expected at least $3"; fi
}
# whole_share FOLDED THREAD_FN: of the time of the thread that runs
# THREAD_FN with user frames, the per cent (floor) whose stack reaches the
# thread start, that time, all of it, and the thread's root frame.  The
# thread is the one of the heaviest whole stack through THREAD_FN; its
# other stacks (the start barrier, a preemption) count too.
whole_share() {
	awk -v re="$thread_root$2;" '
	FNR == NR {
		if ($0 ~ re && $NF > best) { best = $NF; split($0, f, ";"); tid = f[2] }
		next
	}
	{
		split($0, f, ";")
		if (f[2] != tid || f[3] ~ /_\[k\]( [0-9]+)?$/) next
		all += $NF
		if ($0 ~ re) whole += $NF
	}
	END { printf "%d %d %d %s\n", all ? int(whole * 100 / all) : 0, whole, all, tid }' "$1" "$1"
}

# short_lines FOLDED: the workload's distinct stacks with user frames that
# do not reach their start.
short_lines() {
	grep -E "$root" "$1" | grep -Ev "$whole_re" | grep -Evc "${root}[^;]*_\[k\][; ]"
}

# Stacks as lines of user frames, outermost first, names without their
# symbol versions (perf: clock_nanosleep@GLIBC_2.2.5, tracerig the same).
folded_stacks() {
	sed -E 's/ [0-9]+$//; s/^[^;]*;[^;]*;//' "$1" |
		awk -F';' '{ s = ""; for (i = 1; i <= NF; i++) if ($i !~ /_\[k\]$/) s = s (s == "" ? "" : ";") $i; print s }' |
		sed -E 's/@[^;]*//g'
}
# chains STACKS THREAD_FN CALLER BLOCKER WRAPPER: the distinct parts of
# STACKS from THREAD_FN down to the wrapper, of the stacks that reach the
# thread start (its second frame is THREAD_FN's caller).
chains() {
	grep -Eo "^[^;]+;[^;]+;$(chain_re "$2" "$3" "$4" "$5")" "$1" | sed -E 's/^[^;]+;[^;]+;//' | sort -u
}

# The same workload under perf, for the chains it finds.
perf_ok=0
if ! command -v perf >/dev/null; then
	skip "perf: the chains perf finds" "perf is not installed"
elif ! perf record -q -o "$TEST_TMP/perf.data" -e sched:sched_switch --call-graph dwarf -- \
	"$nofp2" -n "$rounds" -l "$lib" >"$TEST_TMP/perf.out" 2>&1; then
	skip "perf: the chains perf finds" "perf record failed: $(tail -1 "$TEST_TMP/perf.out")"
else
	perf script -i "$TEST_TMP/perf.data" --no-inline -F comm,tid,ip,sym >"$TEST_TMP/perf.script" \
		2>"$TEST_TMP/perf.err"
	perf_stacks "$TEST_TMP/perf.script" >"$TEST_TMP/perf.stacks"
	check "perf: perf script gives stacks of the workload" grep -q 'condwait_blocker' "$TEST_TMP/perf.stacks"
	perf_ok=1
fi

for mode in dwarf cfi; do
	# Half a second of warm-up: the measured threads start once the
	# process's tables are loaded (a first short sleep's walk, at its end,
	# has them loaded: see warm_up in nofp2.c).
	run_tracerig -c "$dwarf_profile" --set ebpf.callchain=$mode -o "$TEST_TMP/$mode.trace.zip" -- \
		"$nofp2" -n "$rounds" -w 500 -l "$lib"
	if [ "$mode" = cfi ] && grep -q "callchain = cfi is not available in this build" "$TEST_TMP/out"; then
		skip "cfi: the whole stacks" "callchain = cfi is not available in this build (no libdw)"
		continue
	fi
	if [ "$mode" = dwarf ] && grep -q "callchain = dwarf is not available in this build" "$TEST_TMP/out"; then
		skip "dwarf: the whole stacks" "callchain = dwarf is not available in this build (no libdw)"
		continue
	fi
	check_eq "$mode: tracerig traces the workload" 0 "$rc"
	[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
	unzip_archive "$TEST_TMP/$mode.trace.zip" "$TEST_TMP/$mode"
	f="$TEST_TMP/$mode/offcpu.folded"
	m="$TEST_TMP/$mode/manifest.json"
	check "$mode: offcpu.folded is in the archive" test -s "$f"

	while read -r thr caller blocker wrapper kernel; do
		re="$thread_root$(chain_re "$thr" "$caller" "$blocker" "$wrapper");.*$kernel[^;]*_\[k\]"
		us=$(re_total "$f" "$re")
		if [ "$mode" = cfi ] && [ "$thr" = late_thread ]; then
			# The first stacks after the dlopen may come before the
			# walker has the library's tables.
			at_least "$mode: $thr;$caller;$blocker;...$wrapper named once loaded (us)" "$us" 1
		else
			at_least "$mode: $thr;$caller;$blocker;...$wrapper, from the thread start (us)" \
				"$us" "$least_us"
		fi
	done <"$blockers"
	us=$(re_total "$f" "${root}_start;[^;]+;[^;]+;main;tick_caller;ticker;[^;]*nanosleep[^;]*;.*do_nanosleep_\[k\]")
	at_least "$mode: the ticker's sleeps go down to main (us)" "$us" "$least_us"
	# (A stack cut short may end in a frame it could not name; the
	# manifest counts those, below.)
	check_no_grep "$mode: no frame of a whole stack of the workload is unknown" \
		"$whole_re.*\\[unknown\\]" "$f"

	if [ "$mode" = dwarf ]; then
		check_grep "dwarf: the manifest counts unwound stacks" '"dwarf_stacks_unwound": *[1-9]' "$m"
		# For comparison with cfi's, not checked.
		for thr in condwait_thread epollwait_thread piperead_thread sort_thread; do
			set -- $(whole_share "$f" "$thr")
			echo "# dwarf: $2 of $3 us ($1 %) of $thr's stacks reach the thread start"
		done
		# Every stack short of its start is counted: cut by the copy's
		# size, or ended in code mapped since the mappings were read
		# (the late library's first intervals).
		short=$(short_lines "$f")
		counted=$(python3 -c 'import json, sys
p = [p for p in json.load(open(sys.argv[1]))["plugins"] if p["name"] == "ebpf"][0]["counters"]
print(p.get("dwarf_stacks_cut_short", 0) + p.get("dwarf_stacks_ended_unmapped", 0))' "$m")
		at_least "dwarf: the $short stacks short of their start are counted (cut short, ended unmapped)" \
			"$counted" "$short"
	else
		check_grep "cfi: the manifest counts walks" '"cfi_walks": *[1-9]' "$m"
		for c in cfi_stacks_no_table cfi_stacks_cut_short cfi_frames_by_fp cfi_stacks_read_failed; do
			check_grep "cfi: the manifest has $c" "\"$c\": *[0-9]" "$m"
		done
		for thr in condwait_thread epollwait_thread piperead_thread sort_thread; do
			set -- $(whole_share "$f" "$thr")
			if [ "$1" -ge 99 ]; then
				ok "cfi: $2 of $3 us of $thr's stacks reach the thread start"
			else
				not_ok "cfi: 99 % of $thr's stacks reach the thread start" \
					"$2 of $3 us ($1 %); the heaviest stacks of ${4:-the process} that do not:" \
					"$(grep -E "^[^;]*;${4:-nofp2-[0-9]+};" "$f" | grep -Ev "$whole_re" |
						awk '{ print $NF, $0 }' | sort -rn | cut -d' ' -f2- | head -5)"
			fi
		done
		# Honest limits: every stack with user frames that does not
		# reach its start (the late library's first ones) is counted:
		# cut short, without a table or unreadable.
		short=$(short_lines "$f")
		counted=$(python3 -c 'import json, sys
p = [p for p in json.load(open(sys.argv[1]))["plugins"] if p["name"] == "ebpf"][0]["counters"]
print(sum(p.get("cfi_stacks_" + c, 0) for c in ("cut_short", "no_table", "read_failed")))' "$m")
		at_least "cfi: the $short stacks short of their start are counted (cut short, no table, read failed)" \
			"$counted" "$short"
	fi

	# perf's chains, frame by frame, are the ones tracerig gives.
	[ "$perf_ok" = 1 ] || continue
	folded_stacks "$f" >"$TEST_TMP/$mode.stacks"
	while read -r thr caller blocker wrapper kernel; do
		chains "$TEST_TMP/perf.stacks" "$thr" "$caller" "$blocker" "$wrapper" >"$TEST_TMP/p.chains"
		chains "$TEST_TMP/$mode.stacks" "$thr" "$caller" "$blocker" "$wrapper" >"$TEST_TMP/t.chains"
		if [ -s "$TEST_TMP/p.chains" ] && cmp -s "$TEST_TMP/p.chains" "$TEST_TMP/t.chains"; then
			ok "$mode: $blocker's chains are perf's ($(wc -l <"$TEST_TMP/t.chains"))"
		else
			not_ok "$mode: $blocker's chains are perf's" "perf:" "$(cat "$TEST_TMP/p.chains")" \
				"tracerig ($mode):" "$(cat "$TEST_TMP/t.chains")"
		fi
	done <"$blockers"
done
done_testing

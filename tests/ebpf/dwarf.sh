#!/bin/sh
# ebpf callchain = dwarf: a workload built -O2 -fomit-frame-pointer
# (tests/ebpf/dwarf/nofp.c) blocks in nanosleep from my_sleeper and in read
# from my_reader, through Debian's libc, which has no frame pointers either.
# With the user stacks copied at switch-out and unwound by CFI,
# offcpu.folded names those callers above the libc wrapper, in order, for
# most of the blocked time; with callchain = fp, on the same workload, it
# does not: dwarf made the difference.  The bounds do not depend on load:
# 200 sleeps of 5 ms block at least 1 s, and the pipe read's time is
# compared with all the time spent in pipe_read.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf
nofp="$top_builddir/tests/ebpf/dwarf/nofp"
[ -x "$nofp" ] || skip_all "tests/ebpf/dwarf/nofp is not built"
dwarf_profile="$top_srcdir/conf/profiles/offcpu-dwarf.ini"

# re_total FOLDED REGEX: microseconds of the lines matching REGEX.
re_total() { awk -v re="$2" '$0 ~ re { s += $NF } END { printf "%d\n", s }' "$1"; }
# at_least NAME ACTUAL MINIMUM
at_least() {
	if [ "${2:-0}" -ge "$3" ]; then ok "$1"; else not_ok "$1" "got ${2:-0}, expected at least $3"; fi
}

run_tracerig -c "$dwarf_profile" -o "$TEST_TMP/d.trace.zip" -- "$nofp"
if grep -q "callchain = dwarf is not available in this build" "$TEST_TMP/out"; then
	# A build without libdw: the key says so, and that is all it can do.
	check_eq "without libdw, callchain = dwarf is refused" 1 "$([ "$rc" != 0 ] && echo 1)"
	done_testing
	exit
fi
check_eq "dwarf: tracerig traces the workload" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
unzip_archive "$TEST_TMP/d.trace.zip" "$TEST_TMP/d"
f="$TEST_TMP/d/offcpu.folded"
check "dwarf: offcpu.folded is in the archive" test -s "$f"
# 200 x 5 ms = 1 s asleep at least; most of it (80 %) under
# sleeper_thread;my_sleeper;<the libc wrapper>.
sleep_us=$(re_total "$f" ';sleeper_thread;my_sleeper;[^;]*nanosleep[^;]*;.*do_nanosleep')
at_least "dwarf: nanosleep's caller my_sleeper, called from sleeper_thread (us)" "$sleep_us" 800000
pipe_all=$(re_total "$f" ';(anon_)?pipe_read_\[k\]')
pipe_us=$(re_total "$f" ';reader_thread;my_reader;[^;]*read[^;]*;.*(anon_)?pipe_read_\[k\]')
at_least "dwarf: the pipe is read in read (us)" "$pipe_all" 1
at_least "dwarf: most of pipe_read's time under reader_thread;my_reader;read (us, of $pipe_all)" \
	"$((pipe_us * 10))" "$((pipe_all * 8))"
check_grep "dwarf: the stacks go down to main (my_writer)" '^nofp;.*main;my_writer;[^;]*nanosleep' "$f"
m="$TEST_TMP/d/manifest.json"
check_grep "dwarf: the manifest counts stacks cut short by the copy size" '"dwarf_stacks_cut_short": *[0-9]' "$m"
check_grep "dwarf: the manifest counts unwound stacks" '"dwarf_stacks_unwound": *[1-9]' "$m"
check_grep "dwarf: the manifest counts copies lost to a full ring" '"dwarf_copies_lost_ring_full": *[0-9]' "$m"

# A copy too small for the stack: the unwinding stops where the copy ends,
# and the manifest says how often.
run_tracerig -c "$dwarf_profile" --set ebpf.dwarf_stack_bytes=64 -o "$TEST_TMP/s.trace.zip" -- \
	"$nofp" -n 20
check_eq "small copy: tracerig traces the workload" 0 "$rc"
unzip_archive "$TEST_TMP/s.trace.zip" "$TEST_TMP/s"
check_grep "small copy: the manifest counts the stacks it cut short" \
	'"dwarf_stacks_cut_short": *[1-9]' "$TEST_TMP/s/manifest.json"
check_no_grep "small copy: no stack reaches main" ';main;' "$TEST_TMP/s/offcpu.folded"

# The same workload with frame pointers: libc's wrapper hides its caller.
run_tracerig -c "$dwarf_profile" --set ebpf.callchain=fp -o "$TEST_TMP/f.trace.zip" -- "$nofp"
check_eq "fp: tracerig traces the workload" 0 "$rc"
unzip_archive "$TEST_TMP/f.trace.zip" "$TEST_TMP/f"
f="$TEST_TMP/f/offcpu.folded"
check "fp: offcpu.folded is in the archive" test -s "$f"
check "fp: the sleeps are there" test "$(re_total "$f" ';do_nanosleep_\[k\]')" -ge 800000
fp_sleep=$(re_total "$f" ';my_sleeper;[^;]*nanosleep')
fp_pipe=$(re_total "$f" ';my_reader;[^;]*read[^;]*;.*(anon_)?pipe_read_\[k\]')
check "fp: nanosleep's caller is not found (${fp_sleep} us under my_sleeper)" test "$fp_sleep" -lt 100000
check "fp: read's caller is not found (${fp_pipe} us under my_reader)" test "$fp_pipe" -lt 100000
done_testing

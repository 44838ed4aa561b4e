#!/usr/bin/env bash
# Frames in nothing mapped (issue 27, item 10): a frame-pointer chain
# through code built without frame pointers ends in a new address every
# sample, in every process.  cpu.pb.gz keeps one location for them, by
# name, not one per address: a long system-wide session's profile grew
# with each (about 200,000 of them in 5 minutes beside a compile loop).
# perf.data.txt still gives every address, and the samples are all there.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
. "$top_srcdir/tests/lib-pprof.sh"
need_pprof
[ "$(uname -m)" = x86_64 ] || skip_all "tests/perf_events/fakechain.c sets rbp: x86_64 only"
command -v cc >/dev/null || skip_all "no C compiler to build tests/perf_events/fakechain.c"
cc -O2 -o "$TEST_TMP/fakechain" "$top_srcdir/tests/perf_events/fakechain.c" ||
	skip_all "cannot build tests/perf_events/fakechain.c"

run_tracerig -c "$CPU_INI" -o "$TEST_TMP/a.trace.zip" -- "$TEST_TMP/fakechain" 2
check_eq "tracerig records the program" 0 "$rc"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
txt="$TEST_TMP/a/perf.data.txt"
pid=$(awk '$1 == "fakechain" { split($2, p, "/"); print p[1]; exit }' "$txt")
# The program's samples whose stack ends in nothing mapped, and at how
# many addresses, as perf.data.txt gives them.  A sample counts once: its
# chain may pass more than one unmapped address.
read -r n_unmapped n_addresses < <(awk -v pid="$pid" '
	/^[^ \t]/ { split($2, p, "/"); mine = (p[1] == pid); counted = 0; next }
	mine && /\[unknown\] \(\[unknown\]\)$/ {
		if (!counted) { n++; counted = 1 }
		if (!($1 in seen)) { seen[$1] = 1; a++ } }
	END { print n + 0, a + 0 }' "$txt")
check "perf.data.txt: the program's stacks end in many unmapped addresses ($n_addresses in $n_unmapped samples)" \
	test "$n_addresses" -ge 100
"$PPROF" -raw "$TEST_TMP/a/cpu.pb.gz" >"$TEST_TMP/raw" 2>&1
locations=$(sed -n '/^Locations/,/^Mappings/p' "$TEST_TMP/raw" | grep -c ' \[unknown\] ')
check_eq "cpu.pb.gz: one location for them, by name" 1 "$locations"
# [unknown]'s cumulative time: every sample with it in its stack.
got=$("$PPROF" -top -unit=ns -tagfocus="pid=$pid" "$TEST_TMP/a/cpu.pb.gz" 2>/dev/null |
	awk '$NF == "[unknown]" { v = $4; sub(/ns$/, "", v); print v; exit }')
period=$(awk -v pid="$pid" '$1 == "fakechain" { split($2, p, "/"); if (p[1] == pid) { print $(NF-1); exit } }' "$txt")
check_eq "... which holds all their samples' time (${n_unmapped} x ${period} ns)" \
	"$((n_unmapped * period))" "$got"
done_testing

#!/usr/bin/env bash
# tracerig --check says when a traced program has no frame pointers (and
# CFI): callchain = fp would lose its callers, callchain = dwarf unwinds
# them.  The same program built with and without frame pointers: the note
# names the one without, not the other, and not under callchain = dwarf.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
command -v cc >/dev/null || skip_all "no C compiler to build the workload"
export TMPDIR="$TEST_TMP"

src="$top_srcdir/tests/perf_events/dwarf"
# Not under /tmp: some tests mount a private one.
w=$(mktemp -d "$top_builddir/tests/perf_events/fpcheck-work.XXXXXX")
on_exit "rm -rf '$w'"
for fp in omit no-omit; do
	mkdir "$w/$fp" &&
		cc -O2 -f$fp-frame-pointer -shared -fPIC -o "$w/$fp/libchain.so" "$src/libchain.c" &&
		cc -O2 -f$fp-frame-pointer -o "$w/$fp/chain" "$src/chain.c" -L"$w/$fp" -lchain \
			-Wl,-rpath,"$w/$fp" || skip_all "cannot build the workload"
done

probe="$TEST_TMP/probe.ini"
printf '[tracerig]\nrequired = perf_events\n[perf_events]\ncallchain = dwarf\n' >"$probe"
if ! "$TRACERIG" --check -c "$probe" >"$TEST_TMP/check" 2>&1 &&
	grep -q "not available in this build" "$TEST_TMP/check"; then
	skip_all "a build without libdw reads no CFI"
fi

# check_pid NAME PROFILE PROGRAM: --check -p on PROGRAM running; its output
# in $TEST_TMP/NAME.
check_pid() {
	local name=$1 profile=$2 prog=$3 pid
	"$prog" 60 &
	pid=$!
	run_tracerig --check -c "$profile" -p "$pid"
	kill "$pid"
	wait "$pid" 2>/dev/null
	cp "$TEST_TMP/out" "$TEST_TMP/$name"
	check_eq "$name: --check passes" 0 "$rc"
}

check_pid omit "$CPU_INI" "$w/omit/chain"
check_grep "without frame pointers: --check names the program and says dwarf helps" \
	"note: $w/omit/chain \(process [0-9]+\) has no frame pointers .*callchain = dwarf" \
	"$TEST_TMP/omit"
check_pid no-omit "$CPU_INI" "$w/no-omit/chain"
check_no_grep "with frame pointers: no such note" "no frame pointers" "$TEST_TMP/no-omit"
check_pid dwarf "$top_srcdir/conf/profiles/cpu-dwarf.ini" "$w/omit/chain"
check_no_grep "callchain = dwarf already: no such note" "no frame pointers" "$TEST_TMP/dwarf"

done_testing

#!/usr/bin/env bash
# `tracerig report` on an archive in perfcollect's layout, so old and new
# captures can be compared: perfcollect records with `perf record`, writes
# `perf script -F comm,pid,tid,cpu,time,period,event,ip,sym,dso,trace` to
# NAME.trace/perf.data.txt and zips the NAME.trace directory whole.  The
# archive is made here the same way, of the demo workload, and the report
# must name the workload's hot functions and its PID.
. "$top_srcdir/tests/lib.sh"
export TMPDIR="$TEST_TMP"

need_root
command -v perf >/dev/null || skip_all "perf is not installed"
command -v zip >/dev/null || skip_all "needs zip(1) to build the archive as perfcollect does"
demo="$top_builddir/demo/tracerig-demo"
[ -x "$demo" ] || skip_all "demo/tracerig-demo is not built"

pc="$TEST_TMP/pc"
mkdir -p "$pc/demo.trace"
# perfcollect's CPU sampling: cpu-clock at 999 Hz, call graphs, CLOCK_MONOTONIC,
# the CPU in each sample (perfcollect gets it from -a, which here would
# sample the whole shared machine).  No build ids: perf.data.txt names the
# objects by path, and perf's post-processing of them (and its ~/.debug
# cache, shared with every other perf run) is what can crash perf.  The
# split makes demo_hot the hottest function by far, whatever the load.
# Debian's perf (6.1) on this newer kernel writes files that its own perf
# script aborts on now and then ("assertion failed at util/build-id.c:1010",
# then "stack smashing detected"; for a while every file, even of
# `perf record ls`): the recording is tried again, and when stock perf
# still dies on its own files, tracerig records the demo and stock perf
# script writes perf.data.txt from that (as tests/core/convert.sh does).
# The archive is perfcollect's either way: perf script's text, zipped.
record_with_perf() {
	perf record -k 1 -g -F 999 -e cpu-clock --sample-cpu --no-buildid --no-buildid-cache \
		-o "$pc/perf.data" -- \
		"$demo" --seconds 1 --threads 2 --split 80,10,10 >"$TEST_TMP/record.out" 2>&1
}
record_with_tracerig() {
	local dir="$TEST_TMP/tr"
	mkdir -p "$dir"
	"$TRACERIG" -c "$top_srcdir/conf/profiles/cpu.ini" -o "$dir/demo.trace.zip" -- \
		"$demo" --seconds 1 --threads 2 --split 80,10,10 >"$TEST_TMP/record.out" 2>&1 &&
		unzip -q -o "$dir/demo.trace.zip" perf.data -d "$dir" && mv "$dir/perf.data" "$pc/perf.data"
}
# perfcollect's fields; perf warns that 'trace' is not valid for software
# events: perfcollect asks for it anyway, for its tracepoints.
script_as_perfcollect() {
	perf script -i "$pc/perf.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,dso,trace \
		>"$pc/demo.trace/perf.data.txt" 2>"$TEST_TMP/script.err"
}
recorder=perf
for attempt in 1 2 3 4; do
	[ "$attempt" = 4 ] && recorder=tracerig
	rc=0
	"record_with_$recorder" || rc=$?
	[ "$rc" = 0 ] || break
	script_rc=0
	script_as_perfcollect || script_rc=$?
	[ "$script_rc" -ge 128 ] || break
	echo "# $recorder recording $attempt: stock perf script died (status $script_rc):"
	tail -2 "$TEST_TMP/script.err" | sed 's/^/#   /'
done
check_eq "$recorder record of the demo exits 0" 0 "$rc"
pid=$(sed -n 's/^tracerig-demo: pid \([0-9][0-9]*\),.*/\1/p' "$TEST_TMP/record.out")
check "the demo printed its pid" test -n "$pid"
: "${pid:=no pid printed}"
check "perf script wrote demo.trace/perf.data.txt" test -s "$pc/demo.trace/perf.data.txt"
(cd "$pc" && zip -q -r demo.trace.zip demo.trace)

run_tracerig report "$pc/demo.trace.zip"
r="$TEST_TMP/out"
check_eq "report of a perfcollect archive exits 0" 0 "$rc"
check_grep "says it is perfcollect's layout, under demo.trace/" \
	"^archive +$pc/demo\\.trace\\.zip \\(perfcollect's layout: entries under demo\\.trace/, no manifest\\)$" "$r"
check_no_grep "no warning about a missing manifest" '^tracerig: ' "$r"
check_no_grep "does not say there are no samples" 'No samples|CPU samples: none' "$r"
check_grep "counts the samples of demo.trace/perf.data.txt, by event" \
	'^CPU samples: [1-9][0-9]* in perf\.data\.txt \(cpu-clock' "$r"
table() { sed -n "/$1/,/^\$/p" "$r" | sed '1,2d;/^$/d' | sed 's/  */ /g;s/^ //'; }
check_eq "demo_hot is the top function by self samples" "demo_hot" \
	"$(table '^Top .* by self samples' | head -n1 | cut -d' ' -f3-)"
check_grep "demo_run_slice is on the stacks" '^demo_run_slice$' \
	<(table '^Top .* by total samples' | cut -d' ' -f3-)
check_grep "demo_worker is on the stacks" '^demo_worker$' \
	<(table '^Top .* by total samples' | cut -d' ' -f3-)
check_eq "the demo's process is the busiest, by its pid" "$pid" \
	"$(table '^Processes' | head -n1 | sed -n 's/^[0-9]* [0-9.]*% [^ ]* \([0-9]*\).*/\1/p')"

# The same stacks in a tracerig archive (entries at the root) read alike:
# the layout is the only difference.
mkdir -p "$TEST_TMP/root"
cp "$pc/demo.trace/perf.data.txt" "$TEST_TMP/root/"
(cd "$TEST_TMP/root" && zip -q "$TEST_TMP/root.trace.zip" perf.data.txt)
cp "$r" "$TEST_TMP/pc.out"
run_tracerig report "$TEST_TMP/root.trace.zip"
check_eq "the same perf.data.txt at the root: the same tables" \
	"$(sed -n '/^CPU samples/,$p' "$TEST_TMP/pc.out")" "$(sed -n '/^CPU samples/,$p' "$TEST_TMP/out")"

done_testing

#!/usr/bin/env bash
# Symbols from the recording: a library loaded late (dlopen) in a process
# that then exec()s another program and exits before tracerig converts
# anything; short-lived processes of a system-wide run.  Every frame stock
# `perf script` names in the archive's perf.data, perf.data.txt names the
# same: frames are resolved against the mappings the recording says were
# live when each sample was taken, not /proc/PID/maps read at the end.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
command -v perf >/dev/null || skip_all "perf is not installed"
w="$TEST_TMP/w"
build_late_workload "$w"

out="$TEST_TMP/late.trace.zip"
run_tracerig -c "$CPU_INI" -o "$out" -- "$w/late" "$w/liblate.so" "$w/after"
check_eq "the late-loading program is traced: exit 0" 0 "$rc"
unzip_archive "$out" "$TEST_TMP/l"
txt="$TEST_TMP/l/perf.data.txt"
check_grep "early_spin, of the program itself, is named" "^	 *[0-9a-f]+ early_spin \\($w/late\\)$" "$txt"
check_grep "late_hot, of the library loaded late, is named after the process exited" \
	"^	 *[0-9a-f]+ late_hot \\($w/liblate.so\\)$" "$txt"
check_grep "after_exec_spin, of the program exec()ed into, is named" \
	"^	 *[0-9a-f]+ after_exec_spin \\($w/after\\)$" "$txt"
check_no_grep "no frame of late names a function of after, or the reverse" \
	"(early_spin|late_hot) \\($w/after\\)|after_exec_spin \\($w/late\\)" "$txt"
check "every frame perf script names, tracerig names the same" \
	same_frames_as_perf "$txt" "$TEST_TMP/l/perf.data"
check_grep "the flame graph has the late library's function" 'late_hot [0-9]+$|;late_hot' "$TEST_TMP/l/cpu.folded"
check "the manifest counts the mappings replayed" python3 -c '
import json, sys
p = [p for p in json.load(open(sys.argv[1]))["plugins"] if p["name"] == "perf_events"][0]
assert p["counters"]["mappings_replayed"] > 3, p["counters"]' "$TEST_TMP/l/manifest.json"

# One object at two paths: copies, so one build id.  A process of the
# first copy ends and the copy is removed before anything is named (all
# converted at the end); a process of the second ran after it.  Giving up
# on the first path must not leave the second unnamed: both tests of this
# workload, side by side under a system-wide session, once did.
mkdir -p "$TEST_TMP/one" "$TEST_TMP/two"
cp "$w/late" "$w/liblate.so" "$TEST_TMP/one/" && cp "$w/late" "$w/liblate.so" "$TEST_TMP/two/"
run_tracerig -c "$CPU_INI" --set perf_events.convert_while_collecting=no -o "$TEST_TMP/copies.trace.zip" \
	-- sh -c '"$1/late" "$1/liblate.so" && rm -r "$1" && exec "$2/late" "$2/liblate.so"' sh \
	"$TEST_TMP/one" "$TEST_TMP/two"
check_eq "two copies of one object, the first removed: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/copies.trace.zip" "$TEST_TMP/c"
check_grep "... the first copy's samples are there" "^	 *[0-9a-f]+ .* \\($TEST_TMP/one/liblate.so\\)$" \
	"$TEST_TMP/c/perf.data.txt"
check_grep "... the second copy's program is named" "^	 *[0-9a-f]+ early_spin \\($TEST_TMP/two/late\\)$" \
	"$TEST_TMP/c/perf.data.txt"
check_grep "... and its library" "^	 *[0-9a-f]+ late_hot \\($TEST_TMP/two/liblate.so\\)$" \
	"$TEST_TMP/c/perf.data.txt"

# System-wide, with processes that live a fraction of the session.
out="$TEST_TMP/sys.trace.zip"
"$TRACERIG" -c "$CPU_INI" -o "$out" -d 3 >"$TEST_TMP/out" 2>&1 </dev/null &
tr=$!
sleep 0.5
pids=""
for i in 1 2 3; do
	"$w/late" "$w/liblate.so" &
	pids="$pids${pids:+,}$!"
	wait $!
done
wait "$tr"
check_eq "system-wide with short-lived processes: exit 0" 0 "$?"
unzip_archive "$out" "$TEST_TMP/s"
check_grep "system-wide: the short-lived processes' late library is named" \
	"^	 *[0-9a-f]+ late_hot \\($w/liblate.so\\)$" "$TEST_TMP/s/perf.data.txt"
# Compared on this test's processes: what else runs on the machine (the
# other tests, beside this one) is no part of what this test holds fixed.
check "system-wide: every frame perf script names in the short-lived processes, tracerig names the same" \
	same_frames_as_perf "$TEST_TMP/s/perf.data.txt" "$TEST_TMP/s/perf.data" "$pids"
# A frame in no known object is named by its address, as frame_name names
# it for every output (offcpu.folded too); a run of them is one frame.
check_no_grep "cpu.folded: a run of frames in no object is one frame" \
	'(^|;)(0x[0-9a-f]+|\[unknown\]);(0x[0-9a-f]+|\[unknown\])(;| [0-9]+$)' "$TEST_TMP/s/cpu.folded"

done_testing

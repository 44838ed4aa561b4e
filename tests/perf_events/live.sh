#!/usr/bin/env bash
# Converting while collecting (convert_while_collecting, record mode): the
# text, folded stacks and pprof samples made as perf.data grows are what
# converting the finished perf.data gives, byte for byte; the flush only
# finishes them; a killed tracerig leaves the text made so far; `no`
# converts everything in the flush; with callchain = dwarf it goes as far
# as the samples are unwound while collecting, with the same result.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
CONVERT="$top_builddir/bench/perf_events/convert"
[ -x "$CONVERT" ] || skip_all "bench/perf_events/convert is not built (make check builds it)"
export TMPDIR="$TEST_TMP" # staging directories go there

# The demo lives through every recording and the offline conversions
# after them: the same objects are found either way.
"$DEMO" --seconds 600 --threads 2 >/dev/null 2>&1 &
demo=$!
on_exit "kill $demo 2>/dev/null; wait $demo 2>/dev/null"

# staged_text ARCHIVE: the perf.data.txt tracerig is writing for ARCHIVE.
staged_text() { ls -d "$TEST_TMP"/tracerig-"$1".staging-*/perf.data.txt 2>/dev/null | head -1; }
# wait_staged_text ARCHIVE N: until the staged text holds N demo_hot frames
# (2 minutes at most, however loaded the machine).
wait_staged_text() {
	local t
	for _ in $(seq 600); do
		t=$(staged_text "$1")
		[ -n "$t" ] && [ "$(grep -c ' demo_hot (' "$t" 2>/dev/null)" -ge "$2" ] && return 0
		sleep 0.2
	done
	return 1
}
# same_as_offline DIR NAME: DIR's perf.data.txt and cpu.folded are what
# the conversion gives on DIR's perf.data once finished.
same_as_offline() {
	"$CONVERT" "$1/perf.data" "$1/offline.txt" "$1/offline.folded" >"$1/convert.out" 2>&1
	check_eq "$2: the offline conversion of its perf.data runs" 0 "$?"
	check "$2: perf.data.txt is byte for byte the offline conversion's" \
		cmp "$1/perf.data.txt" "$1/offline.txt"
	check_eq "$2: cpu.folded has the same stacks and counts" \
		"$(sort "$1/offline.folded" | md5sum)" "$(sort "$1/cpu.folded" | md5sum)"
}
# samples TXT: the sample blocks of a perf.data.txt.
samples() { grep -Ec '^\S.* [0-9]+\.[0-9]{6}: +[0-9]+ cpu-clock:' "$1"; }

# ---- the default: converted while collecting, stopped by SIGTERM
"$TRACERIG" -c "$CPU_INI" -p "$demo" -d 600 -o "$TEST_TMP/a.trace.zip" >"$TEST_TMP/a.out" 2>&1 </dev/null &
tr=$!
on_exit "kill -9 $tr 2>/dev/null"
wait_staged_text a.trace.zip 200
check "the text is written while collecting (200 demo_hot frames in the staged perf.data.txt)" \
	kill -0 "$tr"
kill -TERM "$tr"
wait "$tr"
check_eq "SIGTERM: tracerig exits 0" 0 "$?"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
check_grep "the log says how much was converted while collecting" \
	'perf_events: converted [1-9][0-9]* KiB of perf.data while collecting \([1-9][0-9]* steps' \
	"$TEST_TMP/a/tracerig.log"
check_grep "and the manifest" '"converted_while_collecting_bytes": [1-9]' "$TEST_TMP/a/manifest.json"
# At nice 19 while collecting; what is left once it ended is on the way to
# the archive, at the session's priority (tracerig's own, this shell's),
# not at 1.5% of a CPU beside a busy workload.
check_grep "the converting thread finished at the session's priority ($(nice)), not 19" \
	"perf_events: converted .* while collecting \\(.*, finished at nice $(nice)\\)" \
	"$TEST_TMP/a/tracerig.log"
same_as_offline "$TEST_TMP/a" "while collecting"
n=$(samples "$TEST_TMP/a/perf.data.txt")
check_grep "every sample is in the text (the manifest's count: $n)" "\"samples\": $n," \
	"$TEST_TMP/a/manifest.json"
check "the demo's hot function leads" \
	test "$(leaf_counts "$TEST_TMP/a/perf.data.txt" "$demo" | head -1 | cut -d' ' -f1)" = demo_hot
check "cpu.pb.gz is there, its samples built while collecting" test -s "$TEST_TMP/a/cpu.pb.gz"

# ---- system-wide: every CPU's records, still in time order
run_tracerig -c "$CPU_INI" -d 2 -o "$TEST_TMP/s.trace.zip"
check_eq "system-wide: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/s.trace.zip" "$TEST_TMP/s"
check_grep "system-wide: converted while collecting" 'converted [0-9]+ KiB of perf.data while collecting' \
	"$TEST_TMP/s/tracerig.log"
check "system-wide: sample times never go back" python3 - "$TEST_TMP/s/perf.data.txt" <<'PY'
import re, sys
last = 0.0
for line in open(sys.argv[1], errors='replace'):
    m = re.match(r'^\S.*? \[\d+\] +(\d+\.\d+): ', line)
    if m:
        t = float(m.group(1))
        assert t >= last, (t, last)
        last = t
PY
same_as_offline "$TEST_TMP/s" "system-wide"

# ---- convert_while_collecting = no: the flush converts it all, the same way
run_tracerig -c "$CPU_INI" -p "$demo" -d 1 -o "$TEST_TMP/n.trace.zip" \
	--set perf_events.convert_while_collecting=no
check_eq "convert_while_collecting = no: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/n.trace.zip" "$TEST_TMP/n"
check_no_grep "nothing is converted while collecting" 'converted [0-9]+ KiB of perf.data while collecting' "$TEST_TMP/n/tracerig.log"
same_as_offline "$TEST_TMP/n" "converted in the flush"

# ---- callchain = dwarf: converted while collecting as far as the samples
# are unwound, adopting the frames the unwinding thread found
if without_libdw; then
	skip "dwarf: converted while collecting" "this build has no libdw (callchain = dwarf is refused)"
else
	"$TRACERIG" -c "$top_srcdir/conf/profiles/cpu-dwarf.ini" -p "$demo" -d 600 -o "$TEST_TMP/w.trace.zip" \
		>"$TEST_TMP/w.out" 2>&1 </dev/null &
	tr=$!
	on_exit "kill -9 $tr 2>/dev/null"
	wait_staged_text w.trace.zip 200
	check "dwarf: the text is written while collecting (200 demo_hot frames in the staged perf.data.txt)" \
		kill -0 "$tr"
	kill -TERM "$tr"
	wait "$tr"
	check_eq "dwarf: SIGTERM: tracerig exits 0" 0 "$?"
	unzip_archive "$TEST_TMP/w.trace.zip" "$TEST_TMP/w"
	check_grep "dwarf: the log says how much was converted while collecting" \
		'perf_events: converted [1-9][0-9]* KiB of perf.data while collecting \([1-9][0-9]* steps' \
		"$TEST_TMP/w/tracerig.log"
	check "dwarf: frames unwound while collecting were adopted" python3 -c '
import json, sys
p = [p for p in json.load(open(sys.argv[1]))["plugins"] if p["name"] == "perf_events"][0]
c = p["counters"]
assert c["unwound_while_collecting"] > 0 and c["unwound_samples"] >= c["unwound_while_collecting"], c' \
		"$TEST_TMP/w/manifest.json"
	same_as_offline "$TEST_TMP/w" "dwarf"
fi

# ---- tracerig killed: the salvaged archive has the text made so far
"$TRACERIG" -c "$CPU_INI" -p "$demo" -d 600 -o "$TEST_TMP/k.trace.zip" >"$TEST_TMP/k.out" 2>&1 </dev/null &
tr=$!
on_exit "kill -9 $tr 2>/dev/null"
wait_staged_text k.trace.zip 100
check "killed: still collecting, 100 demo_hot frames converted" kill -0 "$tr"
kill -9 "$tr"
wait "$tr" 2>/dev/null
for _ in $(seq 600); do [ -s "$TEST_TMP/k.trace.zip" ] && break; sleep 0.1; done
unzip_archive "$TEST_TMP/k.trace.zip" "$TEST_TMP/k"
check "killed: the watchdog's archive holds perf.data.txt" test -s "$TEST_TMP/k/perf.data.txt"
check "killed: with the demo's samples" \
	test "$(grep -c ' demo_hot (' "$TEST_TMP/k/perf.data.txt")" -ge 100

done_testing

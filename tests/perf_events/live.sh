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
# after them: the same objects are found either way.  One thread: the
# conversion runs at nice 19, and with the demo on both CPUs of a 2-CPU
# machine the sanitizer build's DWARF case converted nothing in 2 minutes.
"$DEMO" --seconds 600 --threads 1 >/dev/null 2>&1 &
demo=$!
on_exit "kill $demo 2>/dev/null; wait $demo 2>/dev/null"

# staged ARCHIVE NAME: the file NAME tracerig is staging for ARCHIVE.
staged() { ls -d "$TEST_TMP"/tracerig-"$1".staging-*/"$2" 2>/dev/null | head -1; }
# wait_staged ARCHIVE NAME BYTES: until the staged NAME is BYTES long (2
# minutes at most, however loaded the machine).  Its size, not its lines:
# what the core deflated of it is freed as the session goes.
wait_staged() {
	local f
	for _ in $(seq 600); do
		f=$(staged "$1" "$2")
		[ -n "$f" ] && [ "$(stat -c %s "$f" 2>/dev/null || echo 0)" -ge "$3" ] && return 0
		sleep 0.2
	done
	return 1
}
# freed FILE: FILE holds less than half its size on disk (holes punched).
freed() {
	local b
	b=$(stat -c '%b %B %s' "$1" 2>/dev/null) || return 1
	set -- $b
	[ "$3" -gt 0 ] && [ $(($1 * $2 * 2)) -lt "$3" ]
}
not_freed() { ! freed "$1"; }
# wait_freed ARCHIVE NAME [sync]: until the staged NAME gave back what was
# deflated of it (2 minutes at most).  tracerig frees what the kernel's
# flusher wrote back (30 s after it was written, by default); with
# `sync` the test does the flusher's work at once (fsync).
wait_freed() {
	local f
	for _ in $(seq 600); do
		f=$(staged "$1" "$2")
		[ -n "$f" ] && [ "${3:-}" = sync ] && sync "$f"
		[ -n "$f" ] && freed "$f" && return 0
		sleep 0.2
	done
	return 1
}
# NULs FILE: how many zero bytes FILE has (a freed range archived as such).
nuls() { tr -cd '\0' <"$1" | wc -c; }
# Punching holes is what frees them: a file system without it keeps the
# files whole (said in the log), and those checks are skipped.
: >"$TEST_TMP/punch" && head -c 16384 /dev/zero >"$TEST_TMP/punch"
can_punch=0
fallocate -p -o 0 -l 8192 "$TEST_TMP/punch" 2>/dev/null && can_punch=1
# records_whole PERF_DATA: every record of the data section has a header
# (a freed range archived as zeros would not).
records_whole() {
	python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
off, size = struct.unpack_from('<QQ', b, 40)
end = off + size if size else len(b)
n = 0
while off + 8 <= end:
    typ, misc, sz = struct.unpack_from('<IHH', b, off)
    assert 1 <= typ < 128 and sz >= 8, ('bad record', off, typ, sz)
    off += sz
    n += 1
assert n > 100, n
PY
}
# same_as_offline DIR NAME [PID]: DIR's perf.data.txt and cpu.folded are
# what the conversion gives on DIR's perf.data once finished (PID's
# samples only, when given: a process that ended since, another test's,
# can no longer be named from its perf map).
same_as_offline() {
	"$CONVERT" "$1/perf.data" "$1/offline.txt" "$1/offline.folded" >"$1/convert.out" 2>&1
	check_eq "$2: the offline conversion of its perf.data runs" 0 "$?"
	if [ -n "${3:-}" ]; then
		for f in perf.data.txt offline.txt; do
			awk -v pid="$3" 'BEGIN { RS = ""; ORS = "\n\n"; re = " " pid "/[0-9]+ +\\[" }
				{ split($0, l, "\n"); if (l[1] ~ re) print }' "$1/$f" >"$1/$f.$3"
		done
		check "$2: $3's samples are there, and its stacks" \
			sh -c "test -s '$1/offline.txt.$3' && grep -q -- '^[^;]*-$3;' '$1/cpu.folded'"
		check "$2: $3's samples in perf.data.txt are byte for byte the offline conversion's" \
			cmp "$1/perf.data.txt.$3" "$1/offline.txt.$3"
		check_eq "$2: cpu.folded has the same stacks and counts for $3" \
			"$(grep -- "^[^;]*-$3;" "$1/offline.folded" | sort | md5sum)" \
			"$(grep -- "^[^;]*-$3;" "$1/cpu.folded" | sort | md5sum)"
		return
	fi
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
check "the text is written while collecting (200 KiB of staged perf.data.txt)" \
	wait_staged a.trace.zip perf.data.txt 204800
check "tracerig is still collecting" kill -0 "$tr"
# The flusher writes a dirty page back dirty_expire_centisecs after it was
# dirtied, looking every dirty_writeback_centisecs: within wait_freed's 2
# minutes unless the machine was set otherwise (then the test syncs).
flusher=
[ $(($(cat /proc/sys/vm/dirty_expire_centisecs) + $(cat /proc/sys/vm/dirty_writeback_centisecs))) -le 9000 ] ||
	flusher=sync
if [ "$can_punch" = 1 ]; then
	wait_freed a.trace.zip perf.data.txt $flusher
	check "what was deflated of the staged perf.data.txt is freed while collecting, once the kernel wrote it back" \
		kill -0 "$tr"
	wait_freed a.trace.zip perf.data $flusher
	check "and of perf.data, once converted" kill -0 "$tr"
else
	skip "the staged files are freed while collecting" "$TEST_TMP cannot punch holes"
	skip "and perf.data" "$TEST_TMP cannot punch holes"
fi
kill -TERM "$tr"
wait "$tr"
check_eq "SIGTERM: tracerig exits 0" 0 "$?"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
check_grep "the log says how much was converted while collecting" \
	'perf_events: converted [1-9][0-9]* KiB of perf.data while collecting \([1-9][0-9]* steps' \
	"$TEST_TMP/a/tracerig.log"
check_grep "and the manifest" '"converted_while_collecting_bytes": [1-9]' "$TEST_TMP/a/manifest.json"
if [ "$can_punch" = 1 ]; then
	check_grep "the log says how much of the staged text was freed" \
		'perf.data.txt: .* deflated before packaging \(.*; [0-9.]+ [KM]iB of the staged copy freed\)' \
		"$TEST_TMP/a/tracerig.log"
else
	skip "the log says how much was freed" "$TEST_TMP cannot punch holes"
fi
check_eq "no freed range went into the archive's text" 0 "$(nuls "$TEST_TMP/a/perf.data.txt")"
check "nor into its perf.data" records_whole "$TEST_TMP/a/perf.data"
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
same_as_offline "$TEST_TMP/s" "system-wide" "$demo"

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
	check "dwarf: the text is written while collecting (200 KiB of staged perf.data.txt)" \
		wait_staged w.trace.zip perf.data.txt 204800
	check "dwarf: tracerig is still collecting" kill -0 "$tr"
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
wait_staged k.trace.zip perf.data.txt 102400
[ "$can_punch" = 1 ] && wait_freed k.trace.zip perf.data.txt sync && wait_freed k.trace.zip perf.data sync
check "killed: still collecting, 100 KiB converted$([ "$can_punch" = 1 ] && echo ", the deflated part freed")" \
	kill -0 "$tr"
kill -9 "$tr"
wait "$tr" 2>/dev/null
for _ in $(seq 600); do [ -s "$TEST_TMP/k.trace.zip" ] && break; sleep 0.1; done
unzip_archive "$TEST_TMP/k.trace.zip" "$TEST_TMP/k"
check "killed: the watchdog's archive holds perf.data.txt" test -s "$TEST_TMP/k/perf.data.txt"
check "killed: with the demo's samples" \
	test "$(grep -c ' demo_hot (' "$TEST_TMP/k/perf.data.txt")" -ge 100
check_grep "killed: the watchdog used what was deflated before the collector died" \
	'entries were partly deflated before the collector died: those pieces are used' \
	"$TEST_TMP/k/tracerig.log"
check_eq "killed: no freed range went into the salvaged text" 0 "$(nuls "$TEST_TMP/k/perf.data.txt")"
check "killed: nor into the salvaged perf.data" records_whole "$TEST_TMP/k/perf.data"

# collect_written_back NAME LABEL COMMAND...: a session of the demo by
# COMMAND (tracerig, with options or a wrapper) into NAME.trace.zip, left
# running ($tr) once 400 KiB of text were converted, all its staging was
# written back and several deflating rounds went by: a session that may
# not free anything has had every chance to.
collect_written_back() {
	local name=$1 label=$2
	shift 2
	"$@" -c "$CPU_INI" -p "$demo" -d 600 -o "$TEST_TMP/$name.trace.zip" \
		>"$TEST_TMP/$name.out" 2>&1 </dev/null &
	tr=$!
	on_exit "kill -9 $tr 2>/dev/null"
	wait_staged "$name.trace.zip" perf.data.txt 409600
	check "$label: still collecting, 400 KiB converted" kill -0 "$tr"
	sync "$(staged "$name.trace.zip" perf.data.txt)" "$(staged "$name.trace.zip" perf.data)"
	sleep 3
}

# ---- keep_staging: the staging is for looking at, nothing in it is freed
collect_written_back ks keep_staging "$TRACERIG" --set tracerig.keep_staging=yes
kill -TERM "$tr"
wait "$tr"
check_eq "keep_staging: exit 0" 0 "$?"
ks=$(sed -n 's/^tracerig: staging kept in //p' "$TEST_TMP/ks.out")
check "keep_staging: the staging is kept" test -s "$ks/perf.data.txt"
check_eq "keep_staging: its perf.data.txt is whole" 0 "$(nuls "$ks/perf.data.txt")"
check "keep_staging: so is its perf.data" records_whole "$ks/perf.data"
check "keep_staging: nothing was freed" not_freed "$ks/perf.data.txt"

# ---- without CAP_SYS_NICE: the deflating thread, at nice 19 while
# collecting, may not come back to the session's priority to punch (at
# nice 19 it would hold the file's lock while preempted, and the rings'
# thread writing perf.data would wait): nothing is freed, the log says why
if [ "$can_punch" = 1 ] && setpriv --bounding-set=-sys_nice true 2>/dev/null; then
	collect_written_back nn "no CAP_SYS_NICE" \
		setpriv --bounding-set=-sys_nice -- "$TRACERIG"
	check "no CAP_SYS_NICE: the staged text was not freed" \
		not_freed "$(staged nn.trace.zip perf.data.txt)"
	check "no CAP_SYS_NICE: nor perf.data" not_freed "$(staged nn.trace.zip perf.data)"
	kill -TERM "$tr"
	wait "$tr"
	check_eq "no CAP_SYS_NICE: exit 0" 0 "$?"
	unzip_archive "$TEST_TMP/nn.trace.zip" "$TEST_TMP/nn"
	check_grep "no CAP_SYS_NICE: the log says why nothing was freed" \
		"perf.data.txt: its deflated part stays on disk until packaging: freeing it needs the thread back at the session's priority \\(CAP_SYS_NICE\\)" \
		"$TEST_TMP/nn/tracerig.log"
	check_eq "no CAP_SYS_NICE: the archive's text is whole" 0 "$(nuls "$TEST_TMP/nn/perf.data.txt")"
	check "no CAP_SYS_NICE: so is its perf.data" records_whole "$TEST_TMP/nn/perf.data"
	same_as_offline "$TEST_TMP/nn" "no CAP_SYS_NICE"
else
	skip "without CAP_SYS_NICE nothing is freed" \
		"$([ "$can_punch" = 1 ] && echo "setpriv cannot drop CAP_SYS_NICE here (not root?)" || echo "$TEST_TMP cannot punch holes")"
fi

done_testing

#!/usr/bin/env bash
# Flight mode (mode = flight): a detached session keeps the last 4 s of a
# workload whose hot function changes from phase_a to phase_b at a time it
# reports itself; snapshots by SIGUSR1 and by `tracerig snapshot` hold only
# that window (phase_b, never phase_a, every sample's time inside the
# range the manifest names); keep = 2 leaves two archives; stock perf
# script reads a snapshot's perf.data; the rotating perf.data chunks stay
# bounded over many windows; the stop writes a final snapshot; a record
# session refuses `tracerig snapshot`; a backend without flight support is
# refused when required and left out when optional.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
export TMPDIR="$TEST_TMP"
export TRACERIG_RUNTIME_DIR="$TEST_TMP/run"
command -v cc >/dev/null || skip_all "no C compiler to build the workload"
mkdir -p "$TEST_TMP/w" "$TEST_TMP/archives" "$TEST_TMP/elsewhere"
cc -O0 -fno-omit-frame-pointer -o "$TEST_TMP/w/phases" "$top_srcdir/tests/core/flight/phases.c" ||
	skip_all "cannot build the workload"
on_exit 'for s in "$TRACERIG_RUNTIME_DIR"/*.sock; do [ -S "$s" ] && "$TRACERIG" stop "$(basename "$s" .sock)" >/dev/null 2>&1; done'

adir="$TEST_TMP/archives"
ini="$TEST_TMP/flight.ini"
cat >"$ini" <<'EOF'
[tracerig]
name = flight
mode = flight
window = 4s
keep = 2
required = perf_events

[perf_events]
callchain = fp
EOF

status="$TEST_TMP/phases.status"
"$TEST_TMP/w/phases" "$status" 6 &
wp=$!
on_exit "kill $wp 2>/dev/null"

# The chunks of the session's perf.data: their count, and the highest
# sequence number, noted at every wait (the bound must hold all along).
max_chunks=0
last_chunk=0
note_chunks() {
	local n last
	n=$(ls "$TEST_TMP"/tracerig-flight.trace.zip.staging-*/flight-perf.data.* 2>/dev/null | wc -l)
	last=$(ls "$TEST_TMP"/tracerig-flight.trace.zip.staging-*/ 2>/dev/null |
		sed -n 's/^flight-perf\.data\.0*\([0-9][0-9]*\)$/\1/p' | sort -n | tail -1)
	[ "$n" -gt "$max_chunks" ] && max_chunks=$n
	[ -n "$last" ] && [ "$last" -gt "$last_chunk" ] && last_chunk=$last
	return 0
}
# wait_phase_b SECONDS: until phase_b has run that long, by the
# workload's own report of when it began (CLOCK_MONOTONIC, as the samples).
wait_phase_b() {
	local b
	for _ in $(seq 900); do
		note_chunks
		b=$(sed -n 's/^phase_b //p' "$status")
		if [ -n "$b" ] && python3 -c "import sys, time; sys.exit(time.clock_gettime_ns(time.CLOCK_MONOTONIC) - $b <= $1 * 1e9)"; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}
# wait_archives N: until N archives are in $adir.
wait_archives() {
	for _ in $(seq 600); do
		[ "$(ls "$adir"/flight-*.trace.zip 2>/dev/null | wc -l)" -ge "$1" ] && return 0
		note_chunks
		sleep 0.1
	done
	return 1
}

# check_window NAME DIR TRIGGER: an unpacked snapshot holds the last window.
check_window() {
	local name=$1 dir=$2 trigger=$3 b
	b=$(sed -n 's/^phase_b //p' "$status")
	check_grep "$name: the manifest says $trigger triggered it" "\"trigger\": \"$trigger\"" "$dir/manifest.json"
	check "$name: the manifest's range is the 4 s window" python3 - "$dir/manifest.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["flight"]
print(f)
assert f["to_monotonic_ns"] - f["from_monotonic_ns"] == 4000 * 1000000, f
assert f["window_ms"] == 4000 and f["from_utc"] and f["to_utc"], f
PY
	check "$name: holds perf.data, perf.data.txt, cpu.folded and cpu.pb.gz" \
		test -s "$dir/perf.data" -a -s "$dir/perf.data.txt" -a -s "$dir/cpu.folded" -a -s "$dir/cpu.pb.gz"
	leaf_counts "$dir/perf.data.txt" "$wp" >"$dir.leaves"
	check_eq "$name: phase_b is the workload's hot function" phase_b "$(head -1 "$dir.leaves" | cut -d' ' -f1)"
	check_no_grep "$name: phase_a, hot only before the window, is in no sample" 'phase_a' "$dir/perf.data.txt"
	check_no_grep "$name: nor in cpu.folded" 'phase_a' "$dir/cpu.folded"
	check_grep "$name: cpu.folded has phase_b" ';phase_b ' "$dir/cpu.folded"
	check "$name: every sample's time is in the window, after phase_b began" python3 - "$dir/perf.data.txt" "$dir/manifest.json" "$b" <<'PY'
import json, re, sys
f = json.load(open(sys.argv[2]))["flight"]
lo, hi, b = f["from_monotonic_ns"], f["to_monotonic_ns"], int(sys.argv[3])
head = re.compile(r'^.+?\s+\d+/\d+\s+\[\d+\]\s+(\d+)\.(\d{6}):')
n = 0
for line in open(sys.argv[1], errors="replace"):
    m = head.match(line)
    if not m:
        continue
    t = int(m.group(1)) * 10**9 + int(m.group(2)) * 1000  # microseconds, truncated
    assert lo - 1000 <= t <= hi, f"sample at {t} outside [{lo}, {hi}]"
    assert t >= b - 1000, f"sample at {t} before phase_b began at {b}"
    n += 1
print(n, "samples in", lo, hi)
assert n > 0
PY
	check "$name: cpu.pb.gz totals the window's samples, as perf.data.txt counts them" python3 - "$dir/perf.data.txt" "$dir/manifest.json" <<'PY'
import json, re, sys
n = sum(1 for line in open(sys.argv[1], errors="replace") if re.match(r'^.+?\s+\d+/\d+\s+\[\d+\]\s+\d+\.\d{6}:', line))
pp = [f["pprof"] for f in json.load(open(sys.argv[2]))["files"] if f["name"] == "cpu.pb.gz"][0]
print(n, pp)
assert pp["total"] == n, (n, pp)
PY
	check "$name: cpu.pb.gz is dated by the snapshot's range, not the session's" \
		python3 "$top_srcdir/tests/pprof-dated.py" "$dir/cpu.pb.gz" "$dir/manifest.json"
	if command -v perf >/dev/null; then
		perf script -i "$dir/perf.data" -F comm,pid,tid,time,sym >"$dir.perf" 2>"$dir.perf-err"
		check_eq "$name: stock perf script reads its perf.data" 0 "$?"
		check_eq "$name: perf script sees the samples perf.data.txt has" \
			"$(grep -cE '^\S.* [0-9]+/[0-9]+ ' "$dir/perf.data.txt")" "$(grep -c . "$dir.perf")"
		perf script -i "$dir/perf.data" -F ip,sym >"$dir.perf-sym" 2>/dev/null
		check_grep "$name: perf script names phase_b" 'phase_b' "$dir.perf-sym"
		check_no_grep "$name: and never phase_a" 'phase_a' "$dir.perf-sym"
	else
		skip "$name: stock perf script reads its perf.data" "perf is not installed"
	fi
}

rc=0
"$TRACERIG" start -c "$ini" -p "$wp" -o "$adir" >"$TEST_TMP/start.out" 2>&1 </dev/null || rc=$?
check_eq "a flight session starts detached" 0 "$rc"
pid=$(sed -n 's/.*(PID \([0-9]*\).*/\1/p' "$TEST_TMP/start.out")
"$TRACERIG" status >"$TEST_TMP/status.out" 2>&1
check_grep "status says it is a flight recorder" '^mode: flight \(window 4.0 s' "$TEST_TMP/status.out"
check_grep "status names the archives' directory" "^output: $adir\$" "$TEST_TMP/status.out"

# 1. SIGUSR1, once phase_b has run for more than the window.
check "the workload reaches phase_b and runs it past the window" wait_phase_b 5
kill -USR1 "${pid:-0}"
check "SIGUSR1 writes an archive into the output directory" wait_archives 1
first=$(ls "$adir"/flight-*.trace.zip | head -1)
check "it is named <name>-<UTC time>.trace.zip" \
	sh -c "basename '$first' | grep -Eq '^flight-[0-9]{8}T[0-9]{6}Z(-[0-9]+)?\\.trace\\.zip\$'"
unzip_archive "$first" "$TEST_TMP/s1"
check_window "SIGUSR1 snapshot" "$TEST_TMP/s1" SIGUSR1
check "collection goes on after a snapshot" kill -0 "${pid:-0}"

# 2. `tracerig snapshot` from another directory prints the archive's path.
wait_phase_b 6
rc=0
(cd "$TEST_TMP/elsewhere" && "$TRACERIG" snapshot flight >"$TEST_TMP/snap.out" 2>"$TEST_TMP/snap.err") || rc=$?
check_eq "tracerig snapshot exits 0" 0 "$rc"
second=$(cat "$TEST_TMP/snap.out")
check "it prints the path of the archive it wrote" test -s "$second"
check "the archive is in the session's output directory" test "$(dirname "$second")" = "$adir"
unzip_archive "$second" "$TEST_TMP/s2"
check_window "tracerig snapshot" "$TEST_TMP/s2" "tracerig snapshot"

# 3. keep = 2: a third snapshot removes the first.
rc=0
"$TRACERIG" snapshot >"$TEST_TMP/snap3.out" 2>&1 || rc=$?
check_eq "tracerig snapshot without a name finds the one session" 0 "$rc"
check_eq "keep = 2 leaves two archives after three snapshots" 2 "$(ls "$adir"/flight-*.trace.zip | wc -l)"
check "the oldest went" test ! -e "$first"
check "the newer two stay" test -e "$second" -a -e "$(tail -1 "$TEST_TMP/snap3.out")"

# 4. Disk: over many windows the chunks stay within window/chunk + 2
# (4 s of 1 s chunks) and the oldest are removed.
for _ in $(seq 300); do
	note_chunks
	[ "$last_chunk" -ge 20 ] && break
	sleep 0.2
done
check "the recording rotated through five windows of chunks" test "$last_chunk" -ge 20
check "at most 6 chunks were ever on disk (saw $max_chunks)" test "$max_chunks" -le 6 -a "$max_chunks" -ge 4

# 5. The stop writes a final snapshot and says where.
rc=0
(cd "$TEST_TMP/elsewhere" && "$TRACERIG" stop flight >"$TEST_TMP/stop.out" 2>"$TEST_TMP/stop.err") || rc=$?
check_eq "tracerig stop exits 0" 0 "$rc"
final=$(cat "$TEST_TMP/stop.out")
check "stop prints the final snapshot's path" test -s "$final"
unzip_archive "$final" "$TEST_TMP/s4"
check_window "final snapshot" "$TEST_TMP/s4" stop
check "final snapshot: its window ends when the session did, not after the sources stopped" \
	python3 - "$TEST_TMP/s4/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
f, s = m["flight"], m["session"]
print(f["to_monotonic_ns"], s["window_end_monotonic_ns"])
assert s["window_end_monotonic_ns"] > 0 and f["to_monotonic_ns"] == s["window_end_monotonic_ns"], (f, s)
PY
check_eq "keep = 2 still holds after the stop" 2 "$(ls "$adir"/flight-*.trace.zip | wc -l)"
for _ in $(seq 100); do kill -0 "${pid:-0}" 2>/dev/null || break; sleep 0.1; done
check "no staging is left behind" sh -c "! ls -d '$TEST_TMP'/tracerig-*.staging-* 2>/dev/null"
check "no temporary archive is left behind" test -z "$(ls -A "$adir" | grep -v '^flight-')"

# 6. SIGTERM right after SIGUSR1 (in the middle of its snapshot): the
# session finishes it, then stops with a final snapshot; exit 0.
mkdir -p "$TEST_TMP/term"
TMPDIR="$TEST_TMP" "$TRACERIG" -c "$ini" -p "$wp" -o "$TEST_TMP/term" --set tracerig.keep=0 \
	>"$TEST_TMP/term.out" 2>&1 </dev/null &
tp=$!
wait_for_grep collecting "$TEST_TMP/term.out"
sleep 2
kill -USR1 "$tp"
sleep 0.05
kill -TERM "$tp"
rc=0
wait "$tp" || rc=$?
check_eq "SIGTERM during a snapshot: exit 0" 0 "$rc"
check "the archives are whole (unzip -t)" sh -c "for a in '$TEST_TMP/term'/*.trace.zip; do unzip -tq \"\$a\" >/dev/null || exit 1; done"
check "the final snapshot is among them" sh -c "for a in '$TEST_TMP/term'/*.trace.zip; do unzip -p \"\$a\" manifest.json | grep -q '\"trigger\": \"stop\"' && exit 0; done; exit 1"
check "no temporary archive is left behind" test -z "$(ls -A "$TEST_TMP/term" | grep -v '^flight-')"
kill "$wp" 2>/dev/null

# 7. A recording session refuses `tracerig snapshot`, saying why.
two="$top_srcdir/tests/core/profiles/two.ini"
"$TRACERIG" start -c "$two" -d 0 -o "$TEST_TMP/" >/dev/null 2>&1 </dev/null
rc=0
"$TRACERIG" snapshot two >"$TEST_TMP/rec.out" 2>&1 || rc=$?
check_eq "tracerig snapshot of a record session exits 1" 1 "$rc"
check_grep "and says only a flight recorder takes snapshots" "records \(mode = record\): only a flight recorder" "$TEST_TMP/rec.out"
"$TRACERIG" stop two >/dev/null 2>&1

# 8. Backends without flight support.
printf '[tracerig]\nmode = flight\nrequired = testa\n[testa]\npayload = a\n' >"$TEST_TMP/req.ini"
run_tracerig -c "$TEST_TMP/req.ini" -d 1 -o "$TEST_TMP/"
check_eq "a required backend without flight support fails the session" 1 "$rc"
check_grep "naming the backend" "testa: mode = flight is not supported yet" "$TEST_TMP/out"
run_tracerig --check -c "$TEST_TMP/req.ini"
check_grep "--check says so too" "testa .*NOT USABLE: mode = flight is not supported yet by testa" "$TEST_TMP/out"
mkdir -p "$TEST_TMP/opt"
printf '[tracerig]\nname = opt\nmode = flight\nwindow = 2s\nrequired = perf_events\n[perf_events]\n[testa]\npayload = a\n' >"$TEST_TMP/opt.ini"
run_tracerig -c "$TEST_TMP/opt.ini" -d 2 -o "$TEST_TMP/opt"
check_eq "an optional one is left out: the session runs" 0 "$rc"
check_grep "with a warning naming it" "testa: mode = flight is not supported yet; left out" "$TEST_TMP/out"
check "the final snapshot is written" sh -c "ls '$TEST_TMP/opt'/opt-*.trace.zip >/dev/null"

# 9. A backend that takes part, and fails its final snapshot: as a failed
# flush fails a recording, a required one fails the session (exit 1), an
# optional one is warned about; the snapshot is written either way.
mkdir -p "$TEST_TMP/fs"
printf '[tracerig]\nname = fs\nmode = flight\nwindow = 2s\nrequired = testflight\n[testflight]\npayload = in-the-window\n' \
	>"$TEST_TMP/fs.ini"
run_tracerig -c "$TEST_TMP/fs.ini" -d 1 -o "$TEST_TMP/fs"
check_eq "a backend with flight support: the session exits 0" 0 "$rc"
fs_zip=$(ls "$TEST_TMP/fs"/fs-*.trace.zip 2>/dev/null | head -1)
check "its final snapshot holds the backend's entry" sh -c \
	"unzip -p '$fs_zip' testflight.txt | grep -q '^payload in-the-window\$'"
printf '[tracerig]\nname = ff\nmode = flight\nwindow = 2s\nrequired = testflight\n[testflight]\nfail_in = snapshot\n' \
	>"$TEST_TMP/ff.ini"
mkdir -p "$TEST_TMP/ff"
run_tracerig -c "$TEST_TMP/ff.ini" -d 1 -o "$TEST_TMP/ff"
check_eq "a required backend failing the final snapshot fails the session" 1 "$rc"
check_grep "naming it" "testflight: final snapshot failed" "$TEST_TMP/out"
check "the final snapshot is still written" sh -c "ls '$TEST_TMP/ff'/ff-*.trace.zip >/dev/null"
sed 's/^required = testflight$/required = perf_events\n[perf_events]/' "$TEST_TMP/ff.ini" >"$TEST_TMP/fo.ini"
rm -f "$TEST_TMP/ff"/*
run_tracerig -c "$TEST_TMP/fo.ini" -d 1 -o "$TEST_TMP/ff"
check_eq "an optional one failing it: the session exits 0" 0 "$rc"
check_grep "with a warning naming it" "testflight: final snapshot failed: .*optional backend" "$TEST_TMP/out"
rc=0
"$TRACERIG" -c "$ini" -o "$TEST_TMP/flight.ini" -d 1 >"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
check_eq "flight mode with -o naming a file is refused" 2 "$rc"
check_grep "saying output must be a directory" "must name an existing directory" "$TEST_TMP/out"

done_testing

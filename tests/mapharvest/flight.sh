#!/usr/bin/env bash
# mapharvest in a flight recorder: every snapshot carries the JIT maps as
# they are then (JIT code in the window may have been compiled before it),
# and names the JIT frames with them — also in the final snapshot, after
# the JIT process exited and removed its /tmp/perf-PID.map.  The workload
# (tests/perf_events/dwarf/jit.c) runs code it generated, named only by
# its perf map, between two native functions.
. "$top_srcdir/tests/lib.sh"
need_root
[ -e "$top_builddir/plugins/mapharvest/mapharvest.la" ] || skip_all "mapharvest not built"
[ -e "$top_builddir/plugins/perf_events/perf_events.la" ] || skip_all "perf_events not built"
command -v cc >/dev/null || skip_all "no C compiler to build the workload"
export TMPDIR="$TEST_TMP"
mkdir -p "$TEST_TMP/w" "$TEST_TMP/a"
# -O0: frame pointers in every function, the leaf too, so the JIT frame is
# in every callchain.
cc -O0 -fno-omit-frame-pointer -o "$TEST_TMP/w/jit" \
	"$top_srcdir/tests/perf_events/dwarf/jit.c" || skip_all "cannot build the workload"

cat >"$TEST_TMP/f.ini" <<'EOF'
[tracerig]
name = jf
mode = flight
window = 3s
trigger_crash = no
required = perf_events, mapharvest

[perf_events]
callchain = fp

[mapharvest]
EOF

"$TEST_TMP/w/jit" 8 &
jp=$!
on_exit "kill $jp 2>/dev/null"
for _ in $(seq 100); do [ -s "/tmp/perf-$jp.map" ] && break; sleep 0.05; done
"$TRACERIG" -c "$TEST_TMP/f.ini" -p "$jp" -o "$TEST_TMP/a" >"$TEST_TMP/out" 2>&1 </dev/null &
tp=$!
on_exit "kill -9 $tp 2>/dev/null"
for _ in $(seq 300); do grep -q collecting "$TEST_TMP/out" 2>/dev/null && break; sleep 0.1; done
sleep 2
kill -USR1 "$tp"
for _ in $(seq 300); do [ -n "$(ls "$TEST_TMP/a"/jf-*.trace.zip 2>/dev/null)" ] && break; sleep 0.1; done
first=$(ls "$TEST_TMP/a"/jf-*.trace.zip 2>/dev/null | head -1)
check "SIGUSR1 writes a snapshot" test -n "$first"
unzip_archive "$first" "$TEST_TMP/s1"
check_grep "the snapshot holds the JIT process's perf map" ' jit_code$' "$TEST_TMP/s1/perf-$jp.map"
check_grep "its stacks name the JIT frame between the native ones" \
	";native_outer;jit_code;native_leaf [0-9]+$" "$TEST_TMP/s1/cpu.folded"
check_grep "the manifest lists the map" "\"name\": \"perf-$jp.map\"" "$TEST_TMP/s1/manifest.json"

# The JIT process ends (and removes its map); the stop's snapshot still
# names its frames, from the copy.
wait "$jp"
check "the JIT process removed its own map when it exited" test ! -e "/tmp/perf-$jp.map"
kill -INT "$tp"
rc=0
wait "$tp" || rc=$?
check_eq "the flight session ends with exit 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
final=""
for a in "$TEST_TMP/a"/jf-*.trace.zip; do
	unzip -p "$a" manifest.json 2>/dev/null | grep -q '"trigger": "stop"' && final=$a
done
check "the stop writes a final snapshot" test -n "$final"
unzip_archive "$final" "$TEST_TMP/s2"
check_grep "it holds the exited process's perf map" ' jit_code$' "$TEST_TMP/s2/perf-$jp.map"
check_grep "and names its JIT frames with it" ";native_outer;jit_code;native_leaf [0-9]+$" \
	"$TEST_TMP/s2/cpu.folded"
check "no staging is left behind" sh -c "! ls -d '$TEST_TMP'/tracerig-*.staging-* 2>/dev/null"
done_testing

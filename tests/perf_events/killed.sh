#!/usr/bin/env bash
# tracerig killed mid-collection (kill -9, or a crash elsewhere in the
# process): the perf.data on disk is read by stock perf up to its last
# complete round, with the workload's samples, and the watchdog packages it
# into the archive as it is.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
command -v perf >/dev/null || skip_all "perf is not installed"
export TMPDIR="$TEST_TMP" # staging directories go there

# salvaged ARCHIVE DIR: waits (bounded) for the watchdog's archive, unpacks it.
salvaged() {
	for _ in $(seq 600); do [ -s "$1" ] && break; sleep 0.1; done
	unzip_archive "$1" "$2" 2>/dev/null
}

"$DEMO" --seconds 600 --threads 1 >/dev/null 2>&1 &
demo=$!
on_exit "kill $demo 2>/dev/null; wait $demo 2>/dev/null"
"$TRACERIG" -c "$CPU_INI" -o "$TEST_TMP/k.trace.zip" -p "$demo" -d 600 >"$TEST_TMP/out" 2>&1 </dev/null &
tr=$!
on_exit "kill -9 $tr 2>/dev/null; wait $tr 2>/dev/null"

# Kill once the file on disk has 100 of the demo's samples, however long
# that takes on a loaded machine (2 minutes at most).
data=""
n=0
for _ in $(seq 600); do
	data=$(ls -d "$TEST_TMP"/tracerig-k.trace.zip.staging-*/perf.data 2>/dev/null | head -1)
	if [ -n "$data" ]; then
		n=$(timeout 20 perf script -i "$data" -F pid,ip,sym 2>/dev/null | grep -c ' demo_hot$' || true)
		[ "$n" -ge 100 ] && break
	fi
	kill -0 "$tr" 2>/dev/null || break
	sleep 0.2
done
check "tracerig is still collecting when killed" kill -0 "$tr"
kill -9 "$tr"
wait "$tr" 2>/dev/null
salvaged "$TEST_TMP/k.trace.zip" "$TEST_TMP/k"
data="$TEST_TMP/k/perf.data"
check "the watchdog's archive holds perf.data" test -s "$data"
check_grep "its manifest says the collector was killed" '"why": "it was killed' "$TEST_TMP/k/manifest.json"

timeout 60 perf script -i "$data" -F comm,pid,tid,time,event,ip,sym >"$TEST_TMP/script" 2>"$TEST_TMP/script.err"
check_eq "perf script reads the killed run's perf.data: exit 0" 0 "$?"
check_no_grep "perf script does not call the file unfinished or corrupt" \
	'unexpected|incompatible|properly terminated|[Cc]orrupt|[Ii]nvalid' "$TEST_TMP/script.err"
check "perf script prints at least the 100 demo samples seen before the kill" \
	test "$(grep -Ec "^ *demo-worker +$demo/[0-9]+ .*cpu-clock" "$TEST_TMP/script")" -ge 100
check_grep "the demo's samples have its frames" '^[[:space:]]+[0-9a-f]+ demo_hot$' "$TEST_TMP/script"
timeout 60 perf report -i "$data" --stdio --no-children --sort sym >"$TEST_TMP/report" 2>/dev/null
check_grep "perf report reads it too and names demo_hot" '[0-9.]+%.*demo_hot' "$TEST_TMP/report"

# The header's data size is what is on disk: whole records, nothing past
# the end of the file.
check "the header's data section lies within the file and holds whole records" \
	python3 - "$data" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
magic, size, attr_size, a_off, a_size, d_off, d_size = struct.unpack_from('<8sQQQQQQ', b)
assert magic == b'PERFILE2' and attr_size > 0 and a_size > 0, (attr_size, a_size)
assert a_off + a_size <= d_off and d_off + d_size <= len(b), (a_off, a_size, d_off, d_size, len(b))
off = d_off
while off < d_off + d_size:
    typ, misc, sz = struct.unpack_from('<IHH', b, off)
    assert sz >= 8 and sz % 8 == 0, (off, sz)
    off += sz
assert off == d_off + d_size, (off, d_off + d_size)
PY

# With a tracepoint: perf refuses a file without the tracepoints' formats,
# which tracerig therefore writes before the data.
"$TRACERIG" -c "$CPU_INI" -o "$TEST_TMP/t.trace.zip" -d 600 \
	--set perf_events.events=cpu-clock,sched:sched_switch >"$TEST_TMP/out" 2>&1 </dev/null &
tr=$!
on_exit "kill -9 $tr 2>/dev/null; wait $tr 2>/dev/null"
data=""
for _ in $(seq 600); do
	data=$(ls -d "$TEST_TMP"/tracerig-t.trace.zip.staging-*/perf.data 2>/dev/null | head -1)
	if [ -n "$data" ]; then
		n=$(timeout 20 perf script -i "$data" -F event,trace 2>/dev/null | grep -c 'sched_switch: prev_comm=' || true)
		[ "$n" -ge 10 ] && break
	fi
	kill -0 "$tr" 2>/dev/null || break
	sleep 0.2
done
check "system-wide with sched_switch: still collecting when killed" kill -0 "$tr"
kill -9 "$tr"
wait "$tr" 2>/dev/null
salvaged "$TEST_TMP/t.trace.zip" "$TEST_TMP/t"
data="$TEST_TMP/t/perf.data"
timeout 60 perf script -i "$data" -F comm,pid,time,event,trace >"$TEST_TMP/t-script" 2>"$TEST_TMP/t-script.err"
check_eq "perf script reads the killed run's tracepoints: exit 0" 0 "$?"
check_no_grep "perf script finds the tracepoints' formats" \
	'unexpected|incompatible|properly terminated|missing trace data|[Cc]orrupt|[Ii]nvalid' \
	"$TEST_TMP/t-script.err"
check "perf script decodes the 10 sched_switch payloads seen before the kill" \
	test "$(grep -c 'sched:sched_switch: prev_comm=.* prev_pid=[0-9]* .*==> next_comm=' "$TEST_TMP/t-script")" -ge 10
check_grep "and has the cpu-clock samples" ' cpu-clock' "$TEST_TMP/t-script"
done_testing

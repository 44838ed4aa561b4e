#!/bin/sh
# Off-CPU stacks of code that is gone by the end, in an ebpf-only profile:
# the core records the side-band (a dummy perf event) that perf_events
# would otherwise record, so a library dlopen()ed after the process was
# first seen, and the image a process exec()s, are named although the
# process has exited when the stacks are named
# (tests/ebpf/late/lateblock.c: early_wait, then late_wait in
# liblateblock.so, then exec of afterblock: after_wait).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf

src="$top_srcdir/tests/ebpf/late"
w="$TEST_TMP/work"
mkdir -p "$w"
command -v cc >/dev/null || skip_all "no C compiler to build the workload"
cc -O1 -fno-omit-frame-pointer -o "$w/lateblock" "$src/lateblock.c" -ldl &&
	cc -O1 -fno-omit-frame-pointer -shared -fPIC -o "$w/liblateblock.so" "$src/liblateblock.c" &&
	cc -O1 -fno-omit-frame-pointer -o "$w/afterblock" "$src/afterblock.c" ||
	skip_all "cannot build the workload"

export TMPDIR="$TEST_TMP"
run_tracerig -c "$offcpu_profile" -o "$TEST_TMP/l.trace.zip" -- \
	"$w/lateblock" "$w/liblateblock.so" "$w/afterblock"
check_eq "tracerig traces the launched workload" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
unzip_archive "$TEST_TMP/l.trace.zip" "$TEST_TMP/l"
f="$TEST_TMP/l/offcpu.folded"
check "offcpu.folded is in the archive" test -s "$f"

# Each wait lasts 300 ms or more; 10 ms sleeps make sure of many stacks.
check_grep "waits of the program's own code are named" \
	';main;early_wait;[^;]*nanosleep[^;]*;.*_\[k\] [0-9]+$' "$f"
check_grep "waits in the library loaded late are named, under main" \
	';main;late_wait;[^;]*nanosleep[^;]*;.*_\[k\] [0-9]+$' "$f"
check_grep "waits of the exec'd image are named" \
	';main;after_wait;[^;]*nanosleep[^;]*;.*_\[k\] [0-9]+$' "$f"
late_us=$(fn_total "$f" late_wait 'do_nanosleep')
if [ "${late_us:-0}" -ge 400000 ]; then
	ok "late_wait holds most of its 500 ms"
else
	not_ok "late_wait holds most of its 500 ms" "got ${late_us:-0} us"
fi
# A frame the symbolizer could not name is written "[unknown]": none may
# stand next to the workload's own functions.
check_eq "no frame next to the workload's is unknown" 0 \
	"$(grep -cE '\[unknown\];(early|late|after)_wait;|;(early|late|after)_wait;\[unknown\]' "$f")"

m="$TEST_TMP/l/manifest.json"
check_grep "the manifest says the core recorded the side-band" \
	'"fed_by": *"side-band recorded by the core"' "$m"
check_grep "and counts the records it replayed" '"sideband_replayed": *[1-9]' "$m"
check_grep "and the processes read while alive" '"processes_read_while_alive": *[1-9]' "$m"

# perf_events was to record the side-band but did not start (cycles on a
# machine without a PMU): the core records it instead.  Where cycles work,
# perf_events feeds the model; either way the late library is named.
cat >"$TEST_TMP/p.ini" <<'X'
[tracerig]
name = pfail
required = ebpf
[perf_events]
events = cycles
[ebpf]
min_block_us = 1
X
run_tracerig -c "$TEST_TMP/p.ini" -o "$TEST_TMP/p.trace.zip" -- \
	"$w/lateblock" "$w/liblateblock.so" "$w/afterblock"
check_eq "perf_events optional, ebpf required: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/p.trace.zip" "$TEST_TMP/p"
if python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); sys.exit(0 if [p for p in m["plugins"] if p["name"]=="perf_events" and p["status"]!="ok"] else 1)' "$TEST_TMP/p/manifest.json"; then
	check_grep "perf_events did not start: the core recorded the side-band" \
		'"fed_by": *"side-band recorded by the core"' "$TEST_TMP/p/manifest.json"
else
	check_grep "perf_events started: it fed the model" '"fed_by": *"perf_events"' \
		"$TEST_TMP/p/manifest.json"
fi
check_grep "either way the library loaded late is named" \
	';main;late_wait;[^;]*nanosleep[^;]*;.*_\[k\] [0-9]+$' "$TEST_TMP/p/offcpu.folded"
done_testing

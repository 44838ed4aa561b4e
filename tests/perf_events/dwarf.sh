#!/usr/bin/env bash
# callchain = dwarf: a program and a library built -O2 -fomit-frame-pointer
# (main -> chain_outer -> chain_middle -> lib_inner -> lib_leaf, the last
# two in libchain.so).  With dwarf most samples reach main with the chain
# in order, in perf.data.txt and cpu.folded, and stock perf script, which
# unwinds the archive's perf.data itself, agrees frame for frame.  With fp
# the same program's samples do not reach main (the test can fail).  A
# distro program, python3, reaches its main too.  The samples are unwound
# while collecting, and that gives what unwinding them at conversion does.
# Through JIT code (no CFI) the frame pointer chain goes on to main.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
export TMPDIR="$TEST_TMP"

src="$top_srcdir/tests/perf_events/dwarf"
chain_workload omit omit
if without_libdw; then
	# A build without libdw: the key says so, and that is all it can do.
	run_tracerig -c "$top_srcdir/conf/profiles/cpu-dwarf.ini" -o "$TEST_TMP/n.trace.zip" -- "$w/omit/chain" 0.1
	check_eq "without libdw, callchain = dwarf is refused" 1 "$rc"
	check_grep "... saying why" "callchain = dwarf is not available in this build" "$TEST_TMP/out"
	done_testing
	exit
fi

# stacks TXT PID ROOT [NAMES...]: how many of PID's samples (perf script
# text, ours or perf's) have a frame named ROOT, and how many have NAMES as
# consecutive frames, innermost first.  Prints "samples reach_root chain".
stacks() {
	python3 - "$@" <<'PY'
import re, sys
path, want, root, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
head = re.compile(r'(\d+)/(\d+)')
frame = re.compile(r'^\s+[0-9a-f]+ (.*?) \(')
blocks, cur = [], None
for line in open(path, errors='replace'):
    if not line.strip():
        cur = None
        continue
    if not line.startswith('\t'):
        m = head.search(line)
        cur = [] if m and m.group(1) == want else None
        if cur is not None:
            blocks.append(cur)
        continue
    f = frame.match(line)
    if f and cur is not None:
        cur.append(f.group(1))
def has_chain(b):
    return any(b[i:i + len(names)] == names for i in range(len(b)))
print(len(blocks), sum(root in b for b in blocks), sum(has_chain(b) for b in blocks) if names else 0)
PY
}

chain_names="lib_leaf lib_inner chain_middle chain_outer main"

# busiest_pid TXT: the PID with the most samples.
busiest_pid() {
	sed -n 's/^.*[[:space:]]\([0-9]\{1,\}\)\/[0-9]\{1,\}[[:space:]]\{1,\}\[[0-9]\{3\}\].*/\1/p' "$1" |
		sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }'
}

# trace NAME PROFILE COMMAND...: traces the command into $TEST_TMP/NAME
# (unpacked), with the options in $trace_opts too; sets txt to its
# perf.data.txt and pid to its busiest PID.
trace_opts=()
trace() {
	local name=$1 profile=$2
	shift 2
	run_tracerig -c "$profile" "${trace_opts[@]}" -o "$TEST_TMP/$name.trace.zip" -- "$@"
	check_eq "$name: the workload is traced: exit 0" 0 "$rc"
	unzip_archive "$TEST_TMP/$name.trace.zip" "$TEST_TMP/$name"
	txt="$TEST_TMP/$name/perf.data.txt"
	pid=$(busiest_pid "$txt")
}

# ---- dwarf
trace d "$top_srcdir/conf/profiles/cpu-dwarf.ini" "$w/omit/chain" 2
read -r n reach chain <<<"$(stacks "$txt" "$pid" main $chain_names)"
echo "# dwarf: $n samples of $pid, $reach reach main, $chain with the whole chain in order"
check "dwarf: the workload has samples" test "${n:-0}" -ge 100
check "dwarf: most samples reach main ($reach of $n)" test $((reach * 10)) -ge $((n * 8))
check "dwarf: most samples hold the chain lib_leaf..main in order ($chain of $n)" \
	test $((chain * 10)) -ge $((n * 8))
check_grep "cpu.folded: the chain, outermost first, across program and library" \
	"^chain-$pid;.*;main;chain_outer;chain_middle;lib_inner;lib_leaf [0-9]+$" "$TEST_TMP/d/cpu.folded"
check "the manifest counts the unwound samples" python3 -c '
import json, sys
p = [p for p in json.load(open(sys.argv[1]))["plugins"] if p["name"] == "perf_events"][0]
c = p["counters"]
assert c["unwound_samples"] >= 100 and c["unwound_frames"] > 5 * c["unwound_samples"] // 2, c' \
	"$TEST_TMP/d/manifest.json"

# Unwound while collecting, the samples' frames are those unwinding each
# sample at conversion finds: bench/perf_events/convert, which unwinds
# every sample of a perf.data when converting it, writes the same
# perf.data.txt from the archive's perf.data.
convert="$top_builddir/bench/perf_events/convert"
# counters ARCHIVE_DIR: "unwound_samples unwound_while_collecting unwind_queue_full"
counters() {
	python3 -c '
import json, sys
p = [p for p in json.load(open(sys.argv[1]))["plugins"] if p["name"] == "perf_events"][0]
c = p["counters"]
print(c["unwound_samples"], c["unwound_while_collecting"], c["unwind_queue_full"])' "$1/manifest.json"
}
# same_as_conversion ARCHIVE_DIR: its perf.data.txt is what the conversion
# alone writes from its perf.data.
same_as_conversion() {
	"$convert" "$1/perf.data" "$1/converted.txt" "$1/converted.folded" >/dev/null &&
		cmp "$1/perf.data.txt" "$1/converted.txt"
}
read -r uw_n uw_bg uw_full <<<"$(counters "$TEST_TMP/d")"
echo "# $uw_n samples unwound, $uw_bg of them while collecting, $uw_full left by a full queue"
check "samples were unwound while collecting ($uw_bg of $uw_n)" test "${uw_bg:-0}" -gt 0
check "each either while collecting or, the queue full, when converting" \
	test $((uw_bg + uw_full)) -eq "${uw_n:-0}"
check "perf.data.txt is what unwinding every sample when converting gives" \
	same_as_conversion "$TEST_TMP/d"

# Stock perf unwinds the same samples from the archive's perf.data.
if command -v perf >/dev/null; then
	perf script -i "$TEST_TMP/d/perf.data" --no-inline -F pid,tid,time,ip,sym,dso \
		>"$TEST_TMP/perf-script" 2>/dev/null
	read -r pn preach pchain <<<"$(stacks "$TEST_TMP/perf-script" "$pid" main $chain_names)"
	echo "# perf script: $pn samples, $preach reach main, $pchain with the chain"
	check "perf script unwinds the archive's perf.data: most samples reach main" \
		test $((preach * 10)) -ge $((pn * 8)) -a "$pn" -eq "$n"
	check "perf script's chain is ours ($pchain and $chain samples)" test "$pchain" -eq "$chain"
	check "every frame perf script names, perf.data.txt names the same" \
		same_frames_as_perf "$txt" "$TEST_TMP/d/perf.data" "$pid"
	check "perf report reads it: lib_leaf called from lib_inner" \
		sh -c "perf report --stdio --no-children -i '$TEST_TMP/d/perf.data' 2>/dev/null |
			grep -A3 'lib_leaf\$' | grep -q lib_inner"
else
	skip "perf script agrees" "perf is not installed"
fi

# A queue too small for the samples: those it cannot take are unwound when
# converting, none is lost, and the frames are the same.
trace_opts=(--set perf_events.unwind_queue_bytes=65536)
trace q "$top_srcdir/conf/profiles/cpu-dwarf.ini" "$w/omit/chain" 1
trace_opts=()
read -r n reach chain <<<"$(stacks "$txt" "$pid" main $chain_names)"
read -r uw_n uw_bg uw_full <<<"$(counters "$TEST_TMP/q")"
echo "# small queue: $uw_n samples unwound, $uw_bg while collecting, $uw_full left by a full queue"
check "small queue: some samples found it full ($uw_full)" test "${uw_full:-0}" -gt 0
check "small queue: they were unwound when converting" test $((uw_bg + uw_full)) -eq "$uw_n" -a "$n" -eq "$uw_n"
check "small queue: most samples reach main ($reach of $n)" test $((reach * 10)) -ge $((n * 8))
check "small queue: perf.data.txt is what unwinding every sample when converting gives" \
	same_as_conversion "$TEST_TMP/q"

# ---- mixed stacks: JIT code (anonymous memory named by a perf map, no
# CFI, a frame pointer) between native frames without frame pointers.
# Where the CFI ends, the frame pointer chain goes on: the stacks do not
# stop at the JIT frame but reach main through it.
check "jit: the workload builds" cc -O2 -fomit-frame-pointer -o "$w/jit" "$src/jit.c"
trace jit "$top_srcdir/conf/profiles/cpu-dwarf.ini" "$w/jit" 2
read -r n reach chain <<<"$(stacks "$txt" "$pid" main native_leaf jit_code native_outer main)"
echo "# jit: $n samples, $reach reach main, $chain with native_leaf jit_code native_outer main"
check "jit: the workload has samples" test "${n:-0}" -ge 100
check "jit: most samples go on through the JIT frame to main, in order ($chain of $n)" \
	test $((chain * 10)) -ge $((n * 8))
check_grep "jit: cpu.folded: main, the native caller, the JIT frame, the native leaf" \
	"^jit-$pid;.*;main;native_outer;jit_code;native_leaf [0-9]+$" "$TEST_TMP/jit/cpu.folded"

# ---- fp: the same program without frame pointers loses its callers.
trace f "$CPU_INI" "$w/omit/chain" 1
read -r n reach chain <<<"$(stacks "$txt" "$pid" main $chain_names)"
echo "# fp: $n samples, $reach reach main"
check "fp: most samples do not reach main ($reach of $n)" test $((reach * 10)) -lt $((n * 2))

# ---- a distro program, built without frame pointers
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
trace python3 "$top_srcdir/conf/profiles/cpu-dwarf.ini" "$py" -c '
import hashlib, time, zlib
end = time.monotonic() + 2
data = bytes(range(256)) * 64
while time.monotonic() < end:
    zlib.compress(hashlib.sha256(data).digest() * 512)'
# Debian's python3 has no symbol for main, which tail-calls Py_BytesMain:
# the outermost frame above libc is __libc_start_call_main.
read -r n reach chain <<<"$(stacks "$txt" "$pid" __libc_start_call_main)"
echo "# python3: $n samples, $reach reach __libc_start_call_main"
check "python3: most samples reach its main ($reach of $n)" test $((reach * 10)) -ge $((n * 7))
read -r n reach chain <<<"$(stacks "$txt" "$pid" Py_RunMain)"
check "python3: most samples reach Py_RunMain ($reach of $n)" test $((reach * 10)) -ge $((n * 7))

done_testing

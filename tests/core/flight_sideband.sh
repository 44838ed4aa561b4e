#!/usr/bin/env bash
# Flight mode names what started long after the recording did, in a
# snapshot cut from chunks whose predecessors are gone (issue 13: a new
# chunk's side-band is replayed from the state the recording kept, not
# read from /proc again).  A workload started before a system-wide flight
# session (window 2 s, chunks of 0.5 s) waits until the first chunk was
# removed, then forks a process that dlopen()s a library (no exec: its
# program's mapping is only what the fork copied, its name its parent's)
# and forks and execs a new program whose thread, named sbspin, dlopen()s
# it too; both run the library's sb_hot_fn.  Once every chunk that held
# those forks, the exec and the dlopens is gone, a snapshot's perf.data,
# read by stock perf script, and its perf.data.txt name sb_hot_fn, the
# callers in the programs, and both processes' names.  What the test waits
# for is chunk files and the workload's own reports, never a duration.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
export TMPDIR="$TEST_TMP"
export TRACERIG_RUNTIME_DIR="$TEST_TMP/run"
command -v cc >/dev/null || skip_all "no C compiler to build the workload"
src="$top_srcdir/tests/core/flight"
w="$TEST_TMP/w"
mkdir -p "$w" "$TEST_TMP/archives"
cflags="-O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls"
cc $cflags -shared -fPIC -o "$w/libsbhot.so" "$src/sbhot.c" &&
	cc $cflags -o "$w/sblaunch" "$src/sblaunch.c" -ldl &&
	cc $cflags -pthread -o "$w/sbexeced" "$src/sbexeced.c" -ldl ||
	skip_all "cannot build the workload"
on_exit '"$TRACERIG" stop sideband >/dev/null 2>&1'

adir="$TEST_TMP/archives"
ini="$TEST_TMP/sideband.ini"
cat >"$ini" <<'EOF'
[tracerig]
name = sideband
mode = flight
window = 2s
required = perf_events

[perf_events]
callchain = fp
EOF

status="$TEST_TMP/status"
go="$TEST_TMP/go"
"$w/sblaunch" "$status" "$go" "$w/libsbhot.so" "$w/sbexeced" &
lp=$!
on_exit "kill $lp \$(sed -n 's/^\(forked\|execed\) //p' '$status' 2>/dev/null) 2>/dev/null"

# The sequence numbers of the chunks on disk, lowest and highest.
chunk_seqs() {
	ls "$TEST_TMP"/tracerig-sideband.trace.zip.staging-*/ 2>/dev/null |
		sed -n 's/^flight-perf\.data\.0*\([0-9][0-9]*\)$/\1/p' | sort -n
}
lowest() { chunk_seqs | head -1; }
highest() { chunk_seqs | tail -1; }
# wait_for WHAT: until `WHAT` succeeds (at most 3 minutes).
wait_for() {
	for _ in $(seq 1800); do
		eval "$1" && return 0
		sleep 0.1
	done
	return 1
}
status_pid() { sed -n "s/^$1 //p" "$status" 2>/dev/null | head -1; }

rc=0
"$TRACERIG" start -c "$ini" -o "$adir" >"$TEST_TMP/start.out" 2>&1 </dev/null || rc=$?
check_eq "a system-wide flight session starts" 0 "$rc"
check "the first chunk is removed (the recording's own start is gone)" \
	wait_for '[ "$(lowest)" -gt 1 ] 2>/dev/null'
touch "$go"
check "the workload forks, execs and runs the dlopened library in both processes" \
	wait_for '[ -n "$(status_pid hot)" ] && [ -n "$(status_pid forkhot)" ]'
forked=$(status_pid forked)
execed=$(status_pid execed)
seen=$(highest)
echo "# forked $forked, execed $execed; chunk $seen was being written"
check "every chunk that held the forks, the exec and the dlopens is removed" \
	wait_for '[ "$(lowest)" -gt $((seen + 1)) ] 2>/dev/null'

# One snapshot, or another when stock perf script aborts on its file (perf
# 6.1 on a newer kernel, now and then: util/build-id.c).
for attempt in 1 2 3; do
	rc=0
	"$TRACERIG" snapshot sideband >"$TEST_TMP/snap.out" 2>"$TEST_TMP/snap.err" || rc=$?
	[ "$rc" = 0 ] || break
	snap=$(cat "$TEST_TMP/snap.out")
	unzip_archive "$snap" "$TEST_TMP/s"
	command -v perf >/dev/null || break
	prc=0
	perf script -i "$TEST_TMP/s/perf.data" -F comm,pid,tid,ip,sym >"$TEST_TMP/perf.txt" \
		2>"$TEST_TMP/perf.err" || prc=$?
	[ "$prc" -ge 128 ] || break
	echo "# snapshot $attempt: stock perf script died (status $prc):"
	tail -2 "$TEST_TMP/perf.err" | sed 's/^/#   /'
done
check_eq "tracerig snapshot exits 0" 0 "$rc"

# chains FILE PID: "comm leaf caller" of PID's samples in perf script's
# text (-F comm,pid,tid,ip,sym, with callchains), most frequent first.
chains() {
	python3 - "$1" "$2" <<'PY'
import collections, re, sys
head = re.compile(r'^\s*(.+?)\s+(\d+)/(\d+)\s*$')
counts, cur, frames = collections.Counter(), None, []
def flush():
    if cur and cur[1] == sys.argv[2] and frames:
        counts[(cur[0], frames[0], frames[1] if len(frames) > 1 else "-")] += 1
for line in open(sys.argv[1], errors="replace"):
    m = head.match(line)
    if m and not line.startswith("\t"):
        flush()
        cur, frames = (m.group(1), m.group(2)), []
    elif line.strip():
        parts = line.split(None, 1)
        frames.append(parts[1].strip() if len(parts) > 1 else "?")
flush()
for (comm, leaf, caller), n in counts.most_common():
    print(comm, leaf, caller, n)
PY
}

if command -v perf >/dev/null; then
	check_eq "stock perf script reads the snapshot" 0 "${prc:-1}"
	chains "$TEST_TMP/perf.txt" "$forked" >"$TEST_TMP/forked.chains"
	chains "$TEST_TMP/perf.txt" "$execed" >"$TEST_TMP/execed.chains"
	sed 's/^/# forked: /' "$TEST_TMP/forked.chains" | head -5
	sed 's/^/# execed: /' "$TEST_TMP/execed.chains" | head -5
	# The caller is the program's (spin_forked, or main where the compiler
	# made the call a jump): named only through the program's mapping.
	check_eq "perf script: the forked process, named as its parent, runs the dlopened sb_hot_fn, called from its program (mapped by the fork's copy)" \
		1 "$(head -1 "$TEST_TMP/forked.chains" | grep -cE '^sblaunch sb_hot_fn (spin_forked|main) ')"
	check_eq "perf script: the exec'd program's thread sbspin runs the dlopened sb_hot_fn, called from the new program" \
		1 "$(head -1 "$TEST_TMP/execed.chains" | grep -cE '^sbspin sb_hot_fn (spin_thread|run) ')"
else
	skip "stock perf script names the late processes" "perf is not installed"
fi

leaf_counts "$TEST_TMP/s/perf.data.txt" "$forked" >"$TEST_TMP/forked.leaves"
leaf_counts "$TEST_TMP/s/perf.data.txt" "$execed" >"$TEST_TMP/execed.leaves"
check_eq "perf.data.txt: sb_hot_fn is the forked process's hot function" sb_hot_fn \
	"$(head -1 "$TEST_TMP/forked.leaves" | cut -d' ' -f1)"
check_eq "perf.data.txt: and the exec'd program's" sb_hot_fn \
	"$(head -1 "$TEST_TMP/execed.leaves" | cut -d' ' -f1)"
check_grep "perf.data.txt names the exec'd program's thread sbspin" "^sbspin  *$execed/" "$TEST_TMP/s/perf.data.txt"
check_grep "and the forked process as its parent, sblaunch" "^sblaunch  *$forked/$forked " "$TEST_TMP/s/perf.data.txt"

rc=0
"$TRACERIG" stop sideband >"$TEST_TMP/stop.out" 2>&1 || rc=$?
check_eq "tracerig stop exits 0" 0 "$rc"
check_no_grep "new chunks never fell back to reading /proc for want of memory" \
	"out of memory for the processes' side-band" "$TEST_TMP/s/tracerig.log"
done_testing

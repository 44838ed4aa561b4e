#!/usr/bin/env bash
# Every managed frame of a real .NET 10 process named, whichever
# DOTNET_PerfMapEnabled it runs with: JIT-compiled methods with their
# optimization tier, ReadyToRun framework methods (named by the jitdump
# only), the runtime's stubs, a P/Invoke into native code, all through the
# runtime's W^X double mapping (on by default).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/dotnet/lib-dotnet.sh"
need_plugins perf_events mapharvest
dotnet_app hot
HOT_DLL=$DOTNET_APP
printf '[tracerig]\nname = frames\n[perf_events]\n[mapharvest]\n' >"$TEST_TMP/p.ini"

# trace_hot LABEL [VAR=VALUE...]: the workload launched by tracerig, for 5 s
# of work (in HOT_MODES, default cpu), with those variables in its
# environment; the archive unpacked into $TEST_TMP/LABEL, the workload's
# PID in HOT_PID.
trace_hot() {
	local label=$1; shift
	rc=0
	# shellcheck disable=SC2086
	env -u DOTNET_PerfMapEnabled -u DOTNET_PerfMapStubGranularity "$@" TMPDIR="$TEST_TMP" \
		timeout 120 "$TRACERIG" -c "$TEST_TMP/p.ini" -o "$TEST_TMP/$label.trace.zip" \
		-- dotnet "$HOT_DLL" 5 ${HOT_MODES:-cpu} >"$TEST_TMP/$label.out" 2>&1 </dev/null || rc=$?
	check_eq "$label: tracerig exits 0" 0 "$rc"
	unzip_archive "$TEST_TMP/$label.trace.zip" "$TEST_TMP/$label"
	HOT_PID=$(awk '/^ready /{print $2}' "$TEST_TMP/$label.out")
	[ -n "$HOT_PID" ] || not_ok "$label: the workload ran" "$(tail -20 "$TEST_TMP/$label.out")"
	on_exit "rm -f /tmp/perf-$HOT_PID.map /tmp/jit-$HOT_PID.dump"
}

# named LABEL WHAT REGEX: a frame of the workload's samples matches.
named() {
	check_grep "$1: $2" "$3" "$TEST_TMP/$1/perf.data.txt"
}

# The goal: at most 1% of the workload's samples with an unnamed managed
# frame (measured 0.2% to 0.7% over 5 s of work, about 5000 to 7000
# samples, all in code the runtime never reported, early in the run).
# check_unnamed holds tracerig to every frame the runtime reported, and
# the rest to a bound machine load does not reach (lib-dotnet.sh).

# --- tracerig's own choice: maps, jitdump, stubs one by one
trace_hot default
txt=$TEST_TMP/default/perf.data.txt
named default "a generic method's lambda through LINQ" '\[Hot\] Hot\.Work::GenericSum'
named default "an async state machine" 'Hot\.Work\+<AsyncChain>d__[0-9]+::MoveNext'
named default "the leaf method, with its tier" '\[Hot\] Hot\.Work::SpinLeaf\(int32\)\[(QuickJitted|OptimizedTier1|Tier1|InstrumentedTier[A-Za-z]*|Optimized)\]'
named default "ReadyToRun framework code, from the jitdump" '\[System\.Text\.Json\] System\.Text\.Json\..*\[PreJIT\]'
named default "ReadyToRun CoreLib code" '\[System\.Private\.CoreLib\] .*\[PreJIT\]'
named default "a runtime stub" ' stub [A-Za-z]+<[A-Za-z]+>'
named default "a compiled Regex" 'Regex[0-9]*_Scan|RegexInterpreter|System\.Text\.RegularExpressions\.'
check "default: native code reached through P/Invoke is called from the managed method" \
	awk '/^[^\t]/ { c = 0 } / hot_native_checksum .*libhotnative\.so/ { c = 1 } c && /Hot\.Work::NativeChecksum/ { found = 1 } END { exit !found }' "$txt"
check_unnamed default "$txt" "$HOT_PID" "$TEST_TMP/default" 3
check_grep "default: the launched command was given DOTNET_PerfMapStubGranularity=2" \
	'jit-[0-9]+\.dump' <(unzip -l "$TEST_TMP/default.trace.zip")
check_no_grep "default: no jitdump cut short" 'stops inside a record' "$TEST_TMP/default/tracerig.log"

# --- DOTNET_PerfMapEnabled=1 set by the user, stub granularity left alone:
# tracerig still gives the granularity (the user did not set it).
trace_hot one DOTNET_PerfMapEnabled=1
named one "ReadyToRun framework code" '\[System\.Text\.Json\] .*\[PreJIT\]'
check_unnamed PerfMapEnabled=1 "$TEST_TMP/one/perf.data.txt" "$HOT_PID" "$TEST_TMP/one" 3

# --- =2: jitdump only; no perf map is written, the jitdump names it all.
trace_hot two DOTNET_PerfMapEnabled=2
check "PerfMapEnabled=2: no perf map in the archive" \
	sh -c "! unzip -l '$TEST_TMP/two.trace.zip' | grep -q 'perf-[0-9]*\\.map'"
named two "JIT code from the jitdump alone" '\[Hot\] Hot\.Work::SpinLeaf'
named two "ReadyToRun code from the jitdump" '\[System\.Text\.Json\] .*\[PreJIT\]'
# Jitdump only: 0.3% to 0.5% measured.  It was 2% until the recording's
# mapping of the jitdump had it read at once: until then, the code newer
# than mapharvest's staged copy came out unnamed for a whole conversion
# step (no perf map to fall back on).
check_unnamed PerfMapEnabled=2 "$TEST_TMP/two/perf.data.txt" "$HOT_PID" "$TEST_TMP/two" 3

# --- =3: perf map only.  The runtime never writes ReadyToRun methods into
# its perf map, so those frames cannot be named; JIT code is, and the log
# says why the rest is not.
trace_hot three DOTNET_PerfMapEnabled=3
check "PerfMapEnabled=3: no jitdump in the archive" \
	sh -c "! unzip -l '$TEST_TMP/three.trace.zip' | grep -q 'jit-[0-9]*\\.dump'"
named three "JIT code from the perf map" '\[Hot\] Hot\.Work::SpinLeaf'
# No jitdump, so the runtime names no ReadyToRun method: they are named
# from their images (lib/r2r), as the jitdump would name them.
check_grep "PerfMapEnabled=3: the log says ReadyToRun methods are named from their images" \
	"pid $HOT_PID: DOTNET_PerfMapEnabled=3 .*ReadyToRun.*named from their images" \
	"$TEST_TMP/three/tracerig.log"
named three "ReadyToRun framework code, from its image" \
	'\[System\.Private\.CoreLib\] System\..*\[PreJIT\] \(/tmp/perf-[0-9]+\.map\)$'
check_unnamed PerfMapEnabled=3 "$TEST_TMP/three/perf.data.txt" "$HOT_PID" "$TEST_TMP/three" 3

# --- exceptions thrown and caught, gen0 and gen2 collections, lock
# contention, thread-pool growth: the runtime's own machinery at work
# (fewer samples: much of it waits).
HOT_MODES="cpu exceptions gc contention threadpool" trace_hot modes
named modes "the method that throws and catches" '\[Hot\] Hot\.Work::ThrowAndCatch'
named modes "the allocating method" '\[Hot\] Hot\.Work::Allocate'
named modes "the contended lock's holder" '\[Hot\] Hot\.Work::Contend'
named modes "thread-pool work items" 'System\.Threading\.ThreadPoolWorkQueue::Dispatch|PortableThreadPool\+WorkerThread'
check_grep "modes: the workload collected gen2" 'gen2=[1-9]' "$TEST_TMP/modes.out"
check_unnamed modes "$TEST_TMP/modes/perf.data.txt" "$HOT_PID" "$TEST_TMP/modes" 3

# --- in a container made with unshare (own mount and PID namespaces, a
# private /tmp): launched through it, the runtime writes /tmp/perf-1.map in
# its own /tmp; the archive holds it under the host PID, and the workload's
# methods are named as they were on the host.
app=$(mktemp -d /dev/shm/tracerig-hot.XXXXXX)
on_exit "rm -rf '$app'"
cp -R "$(dirname "$HOT_DLL")/." "$app/"
rc=0
env -u DOTNET_PerfMapEnabled -u DOTNET_PerfMapStubGranularity -u TMPDIR \
	timeout 120 "$TRACERIG" -c "$TEST_TMP/p.ini" -o "$TEST_TMP/ct.trace.zip" \
	-- unshare --mount --pid --fork --kill-child \
	sh -c 'mount -t tmpfs tmpfs /tmp && exec dotnet "$0/Hot.dll" 5' "$app" \
	>"$TEST_TMP/ct.out" 2>&1 </dev/null || rc=$?
check_eq "container: tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/ct.trace.zip" "$TEST_TMP/ct"
check_grep "container: the runtime is PID 1 in its namespace" '^ready 1$' "$TEST_TMP/ct.out"
ctpid=$(sed -n 's/^perf-\([0-9]*\)\.map$/\1/p' <(cd "$TEST_TMP/ct" && ls) | head -1)
check "container: its perf map and jitdump are stored under its host PID" \
	test -n "$ctpid" -a "$ctpid" != 1 -a -s "$TEST_TMP/ct/jit-$ctpid.dump"
check "container: the harvested jitdump's records say the host PID" \
	python3 -c 'import struct, sys; d = open(sys.argv[1], "rb").read(); sys.exit(struct.unpack_from("<I", d, 20)[0] != int(sys.argv[2]))' \
	"$TEST_TMP/ct/jit-$ctpid.dump" "$ctpid"
# Those in at least 20 frames on the host: sampling alone cannot miss them.
grep -o 'Hot\.Work::[A-Za-z]*' "$TEST_TMP/default/perf.data.txt" | sort | uniq -c |
	awk '$1 >= 20 { print $2 }' >"$TEST_TMP/host-methods"
grep -o 'Hot\.Work::[A-Za-z]*' "$TEST_TMP/ct/perf.data.txt" | sort -u >"$TEST_TMP/ct-methods"
check_eq "container: the workload's methods named as on the host ($(wc -l <"$TEST_TMP/host-methods"))" \
	"" "$(comm -23 "$TEST_TMP/host-methods" "$TEST_TMP/ct-methods")"
check_unnamed container "$TEST_TMP/ct/perf.data.txt" "$ctpid" "$TEST_TMP/ct" 3

# --- the same runtime whose jitdump writer gives up (granularity 0, as a
# user may have set): the log says so and what to do.
trace_hot cut DOTNET_PerfMapEnabled=1 DOTNET_PerfMapStubGranularity=0
check_grep "a jitdump the runtime stopped writing is reported, with the fix" \
	"pid $HOT_PID: jit-$HOT_PID\\.dump stops inside a record .*DOTNET_PerfMapStubGranularity=2" \
	"$TEST_TMP/cut/tracerig.log"
check_grep "and counted in the manifest" '"jitdumps_cut_short": *1' "$TEST_TMP/cut/manifest.json"
done_testing

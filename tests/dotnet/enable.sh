#!/usr/bin/env bash
# No restart needed: a .NET 10 process started with no DOTNET_ variable gets
# its perf map and jitdump switched on through its diagnostics socket when
# collection starts, and off at the end (the files it wrote for us removed);
# a process that had them on is left alone.  The same for a process in its
# own mount and PID namespaces with a private /tmp.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/dotnet/lib-dotnet.sh"
need_plugins perf_events mapharvest
dotnet_app hot
HOT_DLL=$DOTNET_APP
printf '[tracerig]\nname = en\n[perf_events]\n[mapharvest]\n' >"$TEST_TMP/p.ini"

# --- started without DOTNET_PerfMapEnabled
hot_start 60
pid=$HOT_PID
on_exit "rm -f /tmp/perf-$pid.map /tmp/jit-$pid.dump"
check "no perf map before the session" test ! -e "/tmp/perf-$pid.map"
run_tracerig --check -c "$TEST_TMP/p.ini" -p "$pid"
check_grep "--check names the runtime and what tracerig will do" \
	"note: pid $pid: \\.NET [0-9]+\\.[0-9]+\\.[0-9]+ \\(Hot\\), perf maps off: tracerig will switch the perf map and jitdump on" \
	"$TEST_TMP/out"
run_tracerig -c "$TEST_TMP/p.ini" -p "$pid" -d 3 -o "$TEST_TMP/a.trace.zip"
check_eq "tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
check_grep "the log says the maps were switched on" \
	"pid $pid: \\.NET [0-9.]+ started without DOTNET_PerfMapEnabled: perf map and jitdump switched on" \
	"$TEST_TMP/a/tracerig.log"
check_grep "and off again" "pid $pid: perf map and jitdump switched off again" "$TEST_TMP/a/tracerig.log"
check_grep "the manifest counts it" '"dotnet_maps_enabled": 1' "$TEST_TMP/a/manifest.json"
check "the archive holds its perf map and jitdump" \
	test -s "$TEST_TMP/a/perf-$pid.map" -a -s "$TEST_TMP/a/jit-$pid.dump"
check_grep "JIT-compiled methods are named" '\[Hot\] Hot\.Work::SpinLeaf' "$TEST_TMP/a/perf.data.txt"
# Stubs made before the switch are not reported again by the runtime, and
# its jitdump writer stops at the first stub block it cannot copy (the stub
# granularity that avoids it is read at startup only): JIT code is named,
# ReadyToRun code only as far as the jitdump got, and the log says so.
# Measured: 2.2% of samples with an unnamed JIT frame (code the runtime
# compiled before the switch and does not report again, hot in a loop that
# never left it), against all of them without the switch (below).
set -- $(managed_stats "$TEST_TMP/a/perf.data.txt" "$pid")
check_share "at most 10% of samples with an unnamed JIT frame" \
	"$(jit_unnamed "$TEST_TMP/a/perf.data.txt" "$pid")" "$1" 5
if grep -q '"jitdumps_cut_short"' "$TEST_TMP/a/manifest.json"; then
	check_grep "a jitdump the runtime cut short is reported" \
		"pid $pid: jit-$pid\\.dump stops inside a record" "$TEST_TMP/a/tracerig.log"
else
	check_grep "with a whole jitdump, ReadyToRun methods are named" \
		'\[System\.Text\.Json\] .*\[PreJIT\]' "$TEST_TMP/a/perf.data.txt"
fi
check "the files it wrote for us are removed from its /tmp" \
	test ! -e "/tmp/perf-$pid.map" -a ! -e "/tmp/jit-$pid.dump"
check "the runtime closed its jitdump (maps are off)" \
	sh -c "! ls -l /proc/$pid/fd 2>/dev/null | grep -q 'jit-$pid\\.dump'"
check "the process runs on" kill -0 "$pid"

# --- dotnet_enable = no leaves it alone
printf '[tracerig]\nname = en\n[perf_events]\n[mapharvest]\ndotnet_enable = no\n' >"$TEST_TMP/no.ini"
run_tracerig -c "$TEST_TMP/no.ini" -p "$pid" -d 1 -o "$TEST_TMP/no.trace.zip"
check_eq "dotnet_enable = no: tracerig exits 0" 0 "$rc"
check "dotnet_enable = no: no perf map was written" test ! -e "/tmp/perf-$pid.map"
unzip_archive "$TEST_TMP/no.trace.zip" "$TEST_TMP/no"
set -- $(managed_stats "$TEST_TMP/no/perf.data.txt" "$pid")
unnamed=$(jit_unnamed "$TEST_TMP/no/perf.data.txt" "$pid")
# A quarter, not a half: the workload's share of JIT code against the
# runtime's own (GC, the JIT compiler) moves with load (157 of 330 on a
# loaded machine); with the switch on, at most 5% (above).
if [ "$1" -gt 0 ] && [ $((unnamed * 4)) -ge "$1" ]; then
	ok "dotnet_enable = no: a quarter of the samples or more have an unnamed JIT frame ($unnamed of $1): the switch is what names them"
else
	not_ok "dotnet_enable = no: a quarter of the samples or more have an unnamed JIT frame" "$unnamed of $1"
fi
kill "$pid"

# --- started with DOTNET_PerfMapEnabled=1: left as it is
HOT_ENV="DOTNET_PerfMapEnabled=1 DOTNET_PerfMapStubGranularity=2" hot_start 60
pid=$HOT_PID
on_exit "rm -f /tmp/perf-$pid.map /tmp/jit-$pid.dump"
run_tracerig --check -c "$TEST_TMP/p.ini" -p "$pid"
check_grep "--check: maps already on are harvested as they are" \
	"note: pid $pid: \\.NET [0-9.]+ \\(Hot\\), perf maps on \\(DOTNET_PerfMapEnabled=1\\): harvested as they are" \
	"$TEST_TMP/out"
run_tracerig -c "$TEST_TMP/p.ini" -p "$pid" -d 2 -o "$TEST_TMP/b.trace.zip"
unzip_archive "$TEST_TMP/b.trace.zip" "$TEST_TMP/b"
check_no_grep "maps already on are not switched" 'dotnet_maps_enabled' "$TEST_TMP/b/manifest.json"
check "and the runtime's own files stay" test -e "/tmp/perf-$pid.map"
kill "$pid"

# --- in a container: own mount and PID namespaces, private /tmp
container_hot "$TEST_TMP/c.out" 60
hostpid=$CONTAINED_PID
if [ -z "$hostpid" ]; then
	not_ok "the containerised workload started" "$(cat "$TEST_TMP/c.out")"
	done_testing; exit 1
fi
check "its /tmp is its own (no socket of it in the host's /tmp)" \
	sh -c "! ls /tmp/dotnet-diagnostic-1-* >/dev/null 2>&1 || true"
run_tracerig -c "$TEST_TMP/p.ini" -p "$hostpid" -d 3 -o "$TEST_TMP/c.trace.zip"
check_eq "container: tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/c.trace.zip" "$TEST_TMP/c"
check_grep "container: maps switched on through the socket in its root" \
	"pid $hostpid: \\.NET [0-9.]+ started without DOTNET_PerfMapEnabled" "$TEST_TMP/c/tracerig.log"
check "container: its maps are stored under the host PID" \
	test -s "$TEST_TMP/c/perf-$hostpid.map" -a -s "$TEST_TMP/c/jit-$hostpid.dump"
check_grep "container: its JIT frames are named" '\[Hot\] Hot\.Work::SpinLeaf' "$TEST_TMP/c/perf.data.txt"
set -- $(managed_stats "$TEST_TMP/c/perf.data.txt" "$hostpid")
check_share "container: at most 10% of samples with an unnamed JIT frame" \
	"$(jit_unnamed "$TEST_TMP/c/perf.data.txt" "$hostpid")" "$1" 5
check "container: the files are removed from its own /tmp" \
	test ! -e "/proc/$hostpid/root/tmp/perf-1.map" -a ! -e "/proc/$hostpid/root/tmp/jit-1.dump"
done_testing

#!/usr/bin/env bash
# The archive opened by PerfView's own parser: TraceEvent 4.0.0, through the
# classes PerfView uses for a .trace.zip (tests/dotnet/apps/perfview), on
# what tracerig recorded of the real .NET workload with profiles/dotnet.ini:
# every sample read, managed frames named in the stacks it builds, the
# workload's hot methods on top; a system-wide archive read whole;
# lttngTrace/ through CtfTraceEventSource; the BPF sampler's synthesised
# perf.data.txt (ebpf oncpu = yes, callchain = cfi) read the same way.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/dotnet/lib-dotnet.sh"
need_plugins perf_events mapharvest
dotnet_app perfview
PV=$DOTNET_APP
dotnet_app hot
HOT_DLL=$DOTNET_APP

# field KEYWORD FILE: the first field after KEYWORD on its line.
field() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }

# --- the .NET profile, as a user runs it
cp "$top_srcdir/conf/profiles/dotnet.ini" "$TEST_TMP/dotnet.ini"
rc=0
env -u DOTNET_PerfMapEnabled TMPDIR="$TEST_TMP" timeout 120 "$TRACERIG" -c "$TEST_TMP/dotnet.ini" \
	-o "$TEST_TMP/a.trace.zip" -- dotnet "$HOT_DLL" 4 >"$TEST_TMP/a.out" 2>&1 </dev/null || rc=$?
check_eq "dotnet.ini: tracerig exits 0" 0 "$rc"
pid=$(awk '/^ready /{print $2}' "$TEST_TMP/a.out")
on_exit "rm -f /tmp/perf-$pid.map /tmp/jit-$pid.dump"
prc=0
dotnet "$PV" stacks "$TEST_TMP/a.trace.zip" --no-stacks --top 3000 --grep 'Hot\.Work::' \
	--grep '\[PreJIT\]' >"$TEST_TMP/pv.out" 2>"$TEST_TMP/pv.err" || prc=$?
check_eq "LinuxPerfScriptStackSource reads the archive (perf-PID.map included)" 0 "$prc"
[ "$prc" = 0 ] || sed 's/^/# /' "$TEST_TMP/pv.err" | head -5
archive=$(field archive_samples "$TEST_TMP/pv.out")
cpus=$(field archive_cpus "$TEST_TMP/pv.out")
samples=$(field samples "$TEST_TMP/pv.out")
# TraceEvent 4.0.0 emits a sample when the next one on its CPU arrives
# (its metric is the gap): the last of each CPU is never emitted.
check_eq "every sample read (the archive's $archive, less TraceEvent's last one per CPU)" \
	"$((archive - cpus))" "$samples"
hot=$(awk '$1 == "grep" && $3 == "Hot\\.Work::" { print $2 }' "$TEST_TMP/pv.out")
if [ "${hot:-0}" -gt 0 ] && [ $((hot * 4)) -ge "$samples" ]; then
	ok "the workload's methods are named in its stacks ($hot of $samples samples)"
else
	not_ok "the workload's methods are named in its stacks" "${hot:-0} of $samples samples"
fi
check_grep "with their tier, as PerfView shows it" \
	'^match [0-9]+ Hot!\[(QuickJitted|OptimizedTier1|Optimized)\]Hot\.Work::' "$TEST_TMP/pv.out"
check_grep "ReadyToRun framework methods are named" \
	'^frame [0-9]+ System\.Text\.Json!\[PreJIT\]System\.Text\.Json\.' "$TEST_TMP/pv.out"
# The hottest managed methods, their tiers added up: tiering splits a method
# into entries (AddAll at OptimizedTier1 and OptimizedTier1OSR; a tier
# written before the name or after the signature).  The profile is flat
# (AddAll ~150 samples of ~5,800, the regex's IndexOfAnyCore ~120, JSON
# readers ~70): one framework method came first once on a loaded 2-core
# machine, so the workload's own must be among the three hottest.
top_managed=$(awk '$1 == "top" && ($3 ~ /^Hot!/ || $3 ~ /^System\./) {
		m = $0; sub(/^top [0-9]+ /, "", m)
		sub(/!\[[A-Za-z0-9]+\]/, "!", m); sub(/\[[A-Za-z0-9]+\]$/, "", m)
		n[m] += $2
	} END { for (m in n) print n[m], m }' "$TEST_TMP/pv.out" | sort -rn | head -n 3)
printf '%s\n' "$top_managed" | sed 's/^/# /'
check "one of the three hottest managed methods is the workload's own" \
	sh -c "printf '%s\n' \"\$1\" | grep -Eq '^[0-9]+ Hot!Hot\.(Work|Accumulator|Program)'" sh "$top_managed"
unnamed_jit=$(awk '$1 == "top" && $3 ~ /^unknown!\/tmp\/perf-/ { n += $2 } END { print n + 0 }' "$TEST_TMP/pv.out")
check_share "at most 2% of samples end in unnamed JIT code" "$unnamed_jit" "$samples" 2
check_grep "the process is named, with its PID" "^process $pid [0-9]+ dotnet" "$TEST_TMP/pv.out"

# The runtime's events over EventPipe (dotnet.ini's eventpipe backend):
# the process's .nettrace beside the samples, read by EventPipeEventSource.
if [ -e "$top_builddir/plugins/eventpipe/eventpipe.la" ]; then
	rm -rf "$TEST_TMP/a" && mkdir "$TEST_TMP/a" && unzip -q "$TEST_TMP/a.trace.zip" -d "$TEST_TMP/a"
	nrc=0
	dotnet "$PV" nettrace "$TEST_TMP/a/dotnet.$pid.nettrace" >"$TEST_TMP/nt.out" 2>&1 || nrc=$?
	check_eq "EventPipeEventSource reads dotnet.$pid.nettrace" 0 "$nrc"
	check "with the runtime's GC and JIT events" sh -c "grep -q '^event [1-9][0-9]* Microsoft-Windows-DotNETRuntime/GC/Start\$' '$TEST_TMP/nt.out' && grep -q '^event [1-9][0-9]* Microsoft-Windows-DotNETRuntime/Method/LoadVerbose\$' '$TEST_TMP/nt.out'"
else
	skip "EventPipeEventSource reads the .nettrace" "eventpipe not built"
fi

# The LTTng part: CtfTraceEventSource where there is a trace; where the
# runtime's provider could not load (as here), an archive with no CTF,
# which TraceEvent says rather than inventing events.
crc=0
dotnet "$PV" ctf "$TEST_TMP/a.trace.zip" --no-tracelog >"$TEST_TMP/ctf.out" 2>&1 || crc=$?
if unzip -l "$TEST_TMP/a.trace.zip" | grep -q 'lttngTrace/.*/metadata$'; then
	check_eq "CtfTraceEventSource reads lttngTrace/" 0 "$crc"
else
	check_eq "no CTF in the archive: TraceEvent finds none (exit 3)" 3 "$crc"
fi

# --- the BPF sampler (ebpf oncpu = yes, callchain = cfi): no perf_events,
# perf.data.txt synthesised from the kernel's samples, read the same way.
if [ ! -e "$top_builddir/plugins/ebpf/ebpf.la" ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
	skip "the BPF sampler's perf.data.txt" "the ebpf backend is not built, or no BTF"
else
	printf '[tracerig]\nname = bpfcpu\nrequired = ebpf\n[ebpf]\ncallchain = cfi\noncpu = yes\n[mapharvest]\n' \
		>"$TEST_TMP/bpf.ini"
	rc=0
	env -u DOTNET_PerfMapEnabled TMPDIR="$TEST_TMP" timeout 120 "$TRACERIG" -c "$TEST_TMP/bpf.ini" \
		-o "$TEST_TMP/b.trace.zip" -- dotnet "$HOT_DLL" 3 >"$TEST_TMP/b.out" 2>&1 </dev/null || rc=$?
	bpid=$(awk '/^ready /{print $2}' "$TEST_TMP/b.out")
	[ -n "$bpid" ] && on_exit "rm -f /tmp/perf-$bpid.map /tmp/jit-$bpid.dump"
	if [ "$rc" != 0 ] && grep -q "callchain = cfi is not available" "$TEST_TMP/b.out"; then
		skip "the BPF sampler's perf.data.txt" "callchain = cfi is not available in this build"
	else
		check_eq "ebpf oncpu: tracerig exits 0" 0 "$rc"
		prc=0
		dotnet "$PV" stacks "$TEST_TMP/b.trace.zip" --no-stacks --top 50 --grep 'Hot\.Work::' \
			>"$TEST_TMP/bpf.out" 2>"$TEST_TMP/bpf.err" || prc=$?
		check_eq "ebpf oncpu: LinuxPerfScriptStackSource reads the archive" 0 "$prc"
		check_grep "ebpf oncpu: from perf.data.txt" '^entry perf\.data\.txt$' "$TEST_TMP/bpf.out"
		archive=$(field archive_samples "$TEST_TMP/bpf.out")
		manifest=$(unzip -p "$TEST_TMP/b.trace.zip" manifest.json |
			grep -oE '"oncpu_script_samples": *[0-9]+' | grep -oE '[0-9]+$')
		check_eq "ebpf oncpu: perf.data.txt holds the manifest's samples" "$manifest" "$archive"
		samples=$(field samples "$TEST_TMP/bpf.out")
		check_eq "ebpf oncpu: every sample read (less TraceEvent's last one per CPU)" \
			"$((archive - $(field archive_cpus "$TEST_TMP/bpf.out")))" "$samples"
		hot=$(awk '$1 == "grep" && $3 == "Hot\\.Work::" { print $2 }' "$TEST_TMP/bpf.out")
		# How many samples land in the work itself depends on how much CPU
		# the 3 s run got beside the runtime's start (20% to 63% seen): the
		# naming is held by the frames the runtime reported, every one named.
		check "ebpf oncpu: the workload's methods are named in its stacks (${hot:-0} of $samples samples)" \
			test "${hot:-0}" -gt 0
		unzip_archive "$TEST_TMP/b.trace.zip" "$TEST_TMP/bx"
		check_unnamed "ebpf oncpu" "$TEST_TMP/bx/perf.data.txt" "$bpid" "$TEST_TMP/bx" 3
		check_grep "ebpf oncpu: with their tier, as PerfView shows it" \
			'^match [0-9]+ Hot!\[(QuickJitted|OptimizedTier1|Optimized)\]Hot\.Work::' "$TEST_TMP/bpf.out"
		check_grep "ebpf oncpu: the process is named, with its PID" "^process $bpid [0-9]+ .*dotnet" \
			"$TEST_TMP/bpf.out"
	fi
fi

# --- system-wide, while tasks come and go.  A sample taken in a task's last
# moments carries PID -1, which TraceEvent reads only written printf's way
# ("   -1"): tests/perf_events/test_textbuf holds that, since no workload
# here makes such samples on demand.
printf '[tracerig]\nname = sw\n[perf_events]\n' >"$TEST_TMP/sw.ini"
(for _ in $(seq 3000); do /bin/true; done) &
storm=$!
run_tracerig -c "$TEST_TMP/sw.ini" -d 2 -o "$TEST_TMP/sw.trace.zip"
wait "$storm"
check_eq "system-wide: tracerig exits 0" 0 "$rc"
prc=0
dotnet "$PV" stacks "$TEST_TMP/sw.trace.zip" --no-stacks --top 1 >"$TEST_TMP/sw.out" 2>"$TEST_TMP/sw.err" || prc=$?
check_eq "system-wide: TraceEvent reads it" 0 "$prc"
check_eq "system-wide: every sample read" \
	"$(( $(field archive_samples "$TEST_TMP/sw.out") - $(field archive_cpus "$TEST_TMP/sw.out") ))" \
	"$(field samples "$TEST_TMP/sw.out")"
done_testing

#!/usr/bin/env bash
# tracerig beside perfcollect's own pipeline, on the same run of a real .NET
# 10 process started as perfcollect asks (DOTNET_PerfMapEnabled=1,
# DOTNET_EnableEventLog=1): `perf record -k 1 -g -F 999 -p PID`, then
# `perf inject --jit` and `perf script`, while tracerig records the same
# process.  Every frame perf names, tracerig names too, and tracerig leaves
# no more samples with an unnamed managed frame than perf does.
# test-lock: exclusive (stock perf: perf 6.1 aborts, util/build-id.c:1010, on
# perf.data recorded while another test's tracerig has BPF programs loaded)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/dotnet/lib-dotnet.sh"
need_plugins perf_events mapharvest
command -v perf >/dev/null 2>&1 || skip_all "needs perf (apt-get install linux-perf)"
perf version >/dev/null 2>&1 || skip_all "perf does not run here"
dotnet_app hot
HOT_DLL=$DOTNET_APP

HOT_ENV="DOTNET_PerfMapEnabled=1 DOTNET_EnableEventLog=1" hot_start 60
pid=$HOT_PID
on_exit "rm -f /tmp/perf-$pid.map /tmp/jit-$pid.dump /tmp/jitted-$pid-*.so"
printf '[tracerig]\nname = pc\n[perf_events]\n[mapharvest]\n' >"$TEST_TMP/p.ini"
mkdir "$TEST_TMP/perf"
perf record -q -k 1 -g -F 999 -p "$pid" -o "$TEST_TMP/perf/perf.data" -- sleep 4 \
	>"$TEST_TMP/perf/record.out" 2>&1 &
perf_pid=$!
run_tracerig -c "$TEST_TMP/p.ini" -p "$pid" -d 4 -o "$TEST_TMP/a.trace.zip"
wait "$perf_pid"
check_eq "tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
(cd "$TEST_TMP/perf" && perf inject --jit -i perf.data -o perf.jit.data && \
	perf script -i perf.jit.data) >"$TEST_TMP/perf/perf.txt" 2>"$TEST_TMP/perf/script.err"
check "perf recorded and converted the same process" test -s "$TEST_TMP/perf/perf.txt"

# The frames perf names at least 15 times, as "name (object)" (perf's
# +0xOFFSET goes, tracerig writes none): with about 5000 samples on each
# side, sampling alone leaves such a frame out of the other recording with
# a chance of about e^-15 (at 3 times, a kernel function of the write path
# was missed once in the sanitizer pass).
awk '/^\t/ && !/ \[unknown\] / { $1 = ""; sub(/^ /, ""); sub(/\+0x[0-9a-f]+ \(/, " ("); print }' \
	"$TEST_TMP/perf/perf.txt" | sort | uniq -c | awk '$1 >= 15 { $1 = ""; sub(/^ /, ""); print }' \
	>"$TEST_TMP/perf-named"
awk -v pid="$pid" "$PID_OF"'/^[^\t]/ { mine = pid_of($0) == pid; next }
	mine && /^\t/ { $1 = ""; sub(/^ /, ""); print }' "$TEST_TMP/a/perf.data.txt" | sort -u \
	>"$TEST_TMP/tracerig-named"
missing=$(comm -23 "$TEST_TMP/perf-named" "$TEST_TMP/tracerig-named")
check_eq "every frame perf names ($(wc -l <"$TEST_TMP/perf-named")), tracerig names too" "" "$missing"

# Managed frames: perf names JIT code through perf-PID.map only for
# anonymous memory, and .NET's W^X double mapping is a memfd.
perf_samples=$(grep -c '^[^	]' "$TEST_TMP/perf/perf.txt")
perf_unnamed=$(awk '/^[^\t]/ { bad = 0; next }
	!bad && / \[unknown\] \((\/memfd:doublemapper.*|\/tmp\/perf-[0-9]+\.map|.*jitted-[0-9]+-[0-9]+\.so|.*\.dll)\)$/ { bad = 1; n++ }
	END { print n + 0 }' "$TEST_TMP/perf/perf.txt")
set -- $(managed_stats "$TEST_TMP/a/perf.data.txt" "$pid")
if [ "$1" -gt 0 ] && [ "$perf_samples" -gt 0 ] && [ $(($2 * perf_samples)) -le $((perf_unnamed * $1)) ]; then
	ok "no more samples with an unnamed managed frame than perf ($2 of $1, perf $perf_unnamed of $perf_samples)"
else
	not_ok "no more samples with an unnamed managed frame than perf" \
		"tracerig $2 of $1, perf $perf_unnamed of $perf_samples"
fi
done_testing

#!/bin/sh
# The archive's profiles open in speedscope, as users open them: speedscope's
# own page (npm package, pinned in tests/clients/package-lock.json) in
# headless Chromium, the file loaded through #profileURL= and through the
# Browse button.  perf.data.txt (perf script text) of a CPU run of the demo
# and of a multi-threaded wall-clock run, cpu.folded, offcpu.folded and
# wall.folded must import without error and show the workloads' functions
# in speedscope's function table.  perf.data.txt with its samples reversed
# must be refused ("Timestamps received out of order", issue 10): the check
# sees an import error when there is one.
. "$top_srcdir/tests/lib.sh"
need_root
. "$top_srcdir/tests/clients/lib-clients.sh"
need_clients

DEMO="$top_builddir/demo/tracerig-demo"
workload="$top_builddir/tests/ebpf/workload"

# opens_in_speedscope NAME FILE [speedscope.js options] FUNCTION...
opens_in_speedscope() {
	local name=$1 out
	shift
	if out=$(speedscope "$@" 2>&1); then
		ok "$name"
		echo "#   $out"
	else
		not_ok "$name" "$out"
	fi
}

if [ -x "$DEMO" ] && [ -e "$top_builddir/plugins/perf_events/perf_events.la" ]; then
	run_tracerig -c "$top_srcdir/conf/profiles/cpu.ini" -o "$TEST_TMP/c.trace.zip" -- \
		"$DEMO" --seconds 1 --threads 2
	check_eq "tracerig records the demo" 0 "$rc"
	[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
	unzip_archive "$TEST_TMP/c.trace.zip" "$TEST_TMP/c"
	# speedscope must show each of the demo's functions the file holds:
	# which ones a short run sampled is the recording's business (other
	# tests check it), not the viewer's.
	in_file=""
	for fn in demo_hot demo_warm demo_cool demo_run_slice demo_worker; do
		grep -qw "$fn" "$TEST_TMP/c/perf.data.txt" && in_file="$in_file $fn"
	done
	echo "# the demo's functions in perf.data.txt:$in_file"
	check "perf.data.txt holds the demo's hot function" grep -qw demo_hot "$TEST_TMP/c/perf.data.txt"
	# shellcheck disable=SC2086
	opens_in_speedscope "perf.data.txt opens (#profileURL=), the demo's functions in its table" \
		"$TEST_TMP/c/perf.data.txt" $in_file
	opens_in_speedscope "perf.data.txt opens with the Browse button" \
		"$TEST_TMP/c/perf.data.txt" --import browse demo_hot
	opens_in_speedscope "cpu.folded opens, the demo's functions in its table" \
		"$TEST_TMP/c/cpu.folded" demo_hot demo_warm demo_cool demo_run_slice

	awk 'BEGIN { RS = "" } { block[NR] = $0 } END { for (i = NR; i >= 1; i--) print block[i] "\n" }' \
		"$TEST_TMP/c/perf.data.txt" >"$TEST_TMP/reversed.perf.data.txt"
	if out=$(speedscope --expect-error "$TEST_TMP/reversed.perf.data.txt" 2>&1) &&
	   printf '%s\n' "$out" | grep -q 'out of order'; then
		ok "samples out of time order are refused (the check sees import errors)"
	else
		not_ok "samples out of time order are refused (the check sees import errors)" "$out"
	fi
else
	skip "CPU profile in speedscope" "the demo or the perf_events backend is not built"
fi

# A multi-threaded program, on and off the CPU: each file the wall profile
# writes (perf_events' and the ebpf backend's).
if [ -x "$workload" ] && [ -e "$top_builddir/plugins/ebpf/ebpf.la" ] &&
   [ -e "$top_builddir/plugins/perf_events/perf_events.la" ] && [ -r /sys/kernel/btf/vmlinux ]; then
	run_tracerig -c "$top_srcdir/conf/profiles/wall.ini" -o "$TEST_TMP/w.trace.zip" -- "$workload" -s 300
	check_eq "tracerig records the ebpf workload on and off the CPU" 0 "$rc"
	[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
	unzip_archive "$TEST_TMP/w.trace.zip" "$TEST_TMP/w"
	opens_in_speedscope "offcpu.folded opens, the blocking functions in its table" \
		"$TEST_TMP/w/offcpu.folded" blocked_in_sleep blocked_in_pipe_read blocked_on_mutex
	opens_in_speedscope "wall.folded opens, on- and off-CPU functions in its table" \
		"$TEST_TMP/w/wall.folded" spin_on_cpu blocked_in_sleep '[off-cpu]' '[on-cpu]'
	opens_in_speedscope "the threaded workload's perf.data.txt opens" \
		"$TEST_TMP/w/perf.data.txt" spin_on_cpu
	# tracerig convert --to speedscope: speedscope's own format, every view
	# of the archive in one file.
	mkdir -p "$TEST_TMP/conv"
	rc=0
	"$TRACERIG" convert --to speedscope -o "$TEST_TMP/conv" "$TEST_TMP/w.trace.zip" \
		>"$TEST_TMP/conv.out" 2>&1 || rc=$?
	check_eq "tracerig convert --to speedscope exits 0" 0 "$rc"
	json="$TEST_TMP/conv/w.speedscope.json"
	if out=$(speedscope_schema "$json" 2>&1); then
		ok "the speedscope JSON validates against speedscope's file-format schema"
		echo "#   $out"
	else
		not_ok "the speedscope JSON validates against speedscope's file-format schema" "$out"
	fi
	for view in cpu offcpu wall; do
		check_grep "it holds the $view profile" "\"name\": \"$view\"" "$json"
	done
	opens_in_speedscope "the speedscope JSON opens, on- and off-CPU functions in its table" \
		"$json" spin_on_cpu blocked_in_sleep blocked_in_pipe_read
else
	skip "off-CPU and wall profiles in speedscope" \
		"tests/ebpf/workload, the ebpf or perf_events backend, or the kernel's BTF is missing"
fi
done_testing

#!/usr/bin/env bash
# The archive's own pprof entries, checked with Google's pprof: cpu.pb.gz
# (perf_events), offcpu.pb.gz (ebpf) and wall.pb.gz (the core's wall view)
# hold the samples their folded files and perf.data.txt hold, labelled by
# process and thread, every location in its mapping with the object's build
# id; the manifest lists each with its counts; [tracerig] pprof = no leaves
# them out.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-pprof.sh"
need_demo_pprof

# manifest_pprof MANIFEST ENTRY FIELD: the entry's pprof.FIELD in the file list
manifest_pprof() {
	jq -r --arg n "$2" --arg f "$3" '.files[] | select(.name == $n) | .pprof[$f] // "none"' "$1"
}
# mapping_build_id RAW PATH: the build id pprof -raw lists on PATH's mapping
# ("N: 0xstart/0xlimit/0xoffset PATH BUILDID [FN]")
mapping_build_id() {
	awk -v path="$2" '/^Mappings/ { on = 1; next } on && $3 == path { print $4; exit }' "$1"
}
# folded_sum FILE: the weights of a folded file, summed
folded_sum() { awk '{ s += $NF } END { printf "%.0f", s }' "$1"; }
# pprof_ns FILE: a profile's total in nanoseconds
pprof_ns() {
	"$PPROF" -top -unit=ns "$1" 2>/dev/null | sed -n 's/.*of \([0-9]*\)ns total.*/\1/p'
}

# ---- cpu.pb.gz: two processes of the demo, traced by PID
start_two_demos
run_tracerig -c "$top_srcdir/conf/profiles/cpu.ini" -p "$one,$two" -d 2 -o "$TEST_TMP/two.trace.zip"
check_eq "tracerig records two demos" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
unzip_archive "$TEST_TMP/two.trace.zip" "$TEST_TMP/two"
txt="$TEST_TMP/two/perf.data.txt"
pb="$TEST_TMP/two/cpu.pb.gz"
check "the archive holds cpu.pb.gz, gzipped" gzip -t "$pb"
check_cpu_pprof "$txt" "$pb" "$one"
# cpu.ini samples at 999 Hz: one sample stands for 1e9 / 999 ns.
"$PPROF" -raw "$pb" >"$TEST_TMP/raw" 2>&1
check_grep "the period is one sample at the profile's frequency" '^PeriodType: cpu nanoseconds$' "$TEST_TMP/raw"
check_grep "... 1e9 / 999 ns" '^Period: 1001001$' "$TEST_TMP/raw"
check_dated "cpu.pb.gz" "$pb" "$TEST_TMP/two/manifest.json"
# pprof takes the first mapping for the profile's binary: the program, as
# in what `tracerig convert` writes, not [kernel.kallsyms] or libc.
"$PPROF" -top "$pb" >"$TEST_TMP/top" 2>&1
check_grep "pprof takes the demo for the profile's binary" '^File: tracerig-demo$' "$TEST_TMP/top"

# The container label: the cgroup the process is in, the unified
# hierarchy's path unless that is "/" and a v1 hierarchy's is not.
cg=$(awk -F: '$1 == "0" && $2 == "" { u = $3; next }
	$3 != "" && (v == "" || (v == "/" && $3 != "/")) { v = $3 }
	END { print (u != "" && (u != "/" || v == "" || v == "/")) ? u : v }' "/proc/$one/cgroup")
got=$("$PPROF" -tags -tagfocus="pid=$one" "$pb" 2>/dev/null | awk '/^ *cgroup:/ { on = 1; next } on && /%\)/ { sub(/^.*%\): /, ""); print; exit }')
if [ -n "$cg" ] && [ "$got" = "$cg" ]; then
	ok "samples carry the cgroup label of their process ($cg)"
else
	not_ok "samples carry the cgroup label of their process" "/proc/$one/cgroup: $cg" "pprof -tags: $got"
fi

# Mappings: the object's path and build id, as the ELF notes and perf say.
demo_path=$(readlink -f "$DEMO")
want=$(readelf -n "$demo_path" | awk '/Build ID:/ { print $3; exit }')
got=$(mapping_build_id "$TEST_TMP/raw" "$demo_path")
if [ -n "$want" ] && [ "$got" = "$want" ]; then
	ok "the demo's mapping carries its build id ($want)"
else
	not_ok "the demo's mapping carries its build id" "readelf -n: $want" "pprof -raw: $got" \
		"$(sed -n '/^Mappings/,$p' "$TEST_TMP/raw")"
fi
libc=$(awk '/^Mappings/ { on = 1; next } on && $3 ~ /\/libc\.so/ { print $3; exit }' "$TEST_TMP/raw")
if [ -n "$libc" ]; then
	want=$(readelf -n "$libc" | awk '/Build ID:/ { print $3; exit }')
	check_eq "libc's mapping carries its build id" "$want" "$(mapping_build_id "$TEST_TMP/raw" "$libc")"
else
	skip "libc's mapping carries its build id" "no sample in libc"
fi
if command -v perf >/dev/null && grep -q '^[0-9]*: .* \[kernel.kallsyms\]' "$TEST_TMP/raw"; then
	want=$(perf buildid-list -k 2>/dev/null)
	check_eq "the kernel's mapping carries the build id perf buildid-list -k gives" "$want" \
		"$(mapping_build_id "$TEST_TMP/raw" "[kernel.kallsyms]")"
else
	skip "the kernel's mapping carries its build id" "no perf, or no kernel frame sampled"
fi
check_grep "the locations hold the names tracerig resolved ([FN])" '^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ .*tracerig-demo [0-9a-f]+ \[FN\]' "$TEST_TMP/raw"
m="$TEST_TMP/two/manifest.json"
check_eq "the manifest lists cpu.pb.gz with the samples it totals" "$total" "$(manifest_pprof "$m" cpu.pb.gz total)"
stacks=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /^ *[0-9]+ +[0-9]+: / { n++ } END { print n + 0 }' "$TEST_TMP/raw")
check_eq "... and how many pprof samples (stacks and labels) it has" "$stacks" "$(manifest_pprof "$m" cpu.pb.gz samples)"

# ---- [tracerig] pprof = no
run_tracerig -c "$top_srcdir/conf/profiles/cpu.ini" --set tracerig.pprof=no -p "$one" -d 1 -o "$TEST_TMP/off.trace.zip"
check_eq "tracerig records with pprof = no" 0 "$rc"
unzip_archive "$TEST_TMP/off.trace.zip" "$TEST_TMP/off"
check_eq "pprof = no: no .pb.gz entry" "" "$(cd "$TEST_TMP/off" && ls -- *.pb.gz 2>/dev/null)"
check "... perf.data.txt and cpu.folded are still there" test -s "$TEST_TMP/off/perf.data.txt" -a -s "$TEST_TMP/off/cpu.folded"
check_eq "... and the manifest lists no pprof entry" 0 "$(jq '[.files[] | select(.pprof)] | length' "$TEST_TMP/off/manifest.json")"
kill "$one" "$two" 2>/dev/null

# ---- offcpu.pb.gz and wall.pb.gz
if [ -e "$top_builddir/plugins/ebpf/ebpf.la" ] && [ -r /sys/kernel/btf/vmlinux ] &&
	[ -x "$top_builddir/tests/ebpf/workload" ]; then
	workload="$top_builddir/tests/ebpf/workload"
	run_tracerig -c "$top_srcdir/conf/profiles/offcpu.ini" -o "$TEST_TMP/o.trace.zip" -- \
		"$workload" -t "$TEST_TMP/o.times"
	check_eq "tracerig traces the ebpf workload off the CPU" 0 "$rc"
	unzip_archive "$TEST_TMP/o.trace.zip" "$TEST_TMP/o"
	opb="$TEST_TMP/o/offcpu.pb.gz"
	check "the archive holds offcpu.pb.gz, gzipped" gzip -t "$opb"
	# offcpu.folded is in microseconds, each line its intervals' nanoseconds
	# rounded (and left out when that is 0): the profile holds what was
	# measured, so the two agree within half a microsecond per stack.
	us=$(folded_sum "$TEST_TMP/o/offcpu.folded")
	ns=$(pprof_ns "$opb")
	n=$(manifest_pprof "$TEST_TMP/o/manifest.json" offcpu.pb.gz samples)
	diff=$(( ns - us * 1000 ))
	if [ -n "$ns" ] && [ "$us" -gt 0 ] && [ "${diff#-}" -le $(( n * 500 )) ]; then
		ok "offcpu.pb.gz totals offcpu.folded ($ns ns for $us us over $n stacks)"
	else
		not_ok "offcpu.pb.gz totals offcpu.folded" "offcpu.folded: $us us" "offcpu.pb.gz: $ns ns, $n stacks"
	fi
	check_eq "the manifest lists offcpu.pb.gz with its nanoseconds" "$ns" \
		"$(manifest_pprof "$TEST_TMP/o/manifest.json" offcpu.pb.gz total)"
	for fn in blocked_in_sleep blocked_in_pipe_read; do
		want=$(awk -v fn="$fn" '{ n = split($0, f, ";"); for (i = 1; i <= n; i++) if (f[i] == fn) { s += $NF; break } } END { printf "%.0f", s }' "$TEST_TMP/o/offcpu.folded")
		got=$("$PPROF" -top -unit=ns -nodefraction=0 -focus="^$fn\$" "$opb" 2>/dev/null | sed -n 's/.*accounting for \([0-9]*\)ns,.*/\1/p')
		diff=$(( ${got:-0} - want * 1000 ))
		if [ "$want" -gt 0 ] && [ "${diff#-}" -le $(( n * 500 )) ]; then
			ok "$fn has offcpu.folded's time in offcpu.pb.gz"
		else
			not_ok "$fn has offcpu.folded's time in offcpu.pb.gz" "offcpu.folded: $want us" "pprof: $got ns"
		fi
	done
	"$PPROF" -raw "$opb" >"$TEST_TMP/oraw" 2>&1
	wl=$(readlink -f "$workload")
	want=$(readelf -n "$wl" | awk '/Build ID:/ { print $3; exit }')
	check_eq "the workload's mapping carries its build id" "$want" "$(mapping_build_id "$TEST_TMP/oraw" "$wl")"
	pid=$(awk '$1 == "pid" { print $2 }' "$TEST_TMP/o.times")
	check_grep "off-CPU samples carry the pid label" "pid:\\[$pid\\]" "$TEST_TMP/oraw"
	check_dated "offcpu.pb.gz" "$opb" "$TEST_TMP/o/manifest.json"

	run_tracerig -c "$top_srcdir/conf/profiles/wall.ini" -d 2 -o "$TEST_TMP/w.trace.zip" -- \
		"$DEMO" --seconds 2 --threads 2
	check_eq "tracerig records the demo on and off the CPU" 0 "$rc"
	unzip_archive "$TEST_TMP/w.trace.zip" "$TEST_TMP/w"
	check "the archive holds wall.pb.gz, gzipped" gzip -t "$TEST_TMP/w/wall.pb.gz"
	us=$(folded_sum "$TEST_TMP/w/wall.folded")
	ns=$(pprof_ns "$TEST_TMP/w/wall.pb.gz")
	n=$(manifest_pprof "$TEST_TMP/w/manifest.json" wall.pb.gz samples)
	diff=$(( ${ns:-0} - us * 1000 ))
	if [ -n "$ns" ] && [ "$us" -gt 0 ] && [ "${diff#-}" -le $(( n * 500 )) ]; then
		ok "wall.pb.gz totals wall.folded ($ns ns for $us us over $n stacks)"
	else
		not_ok "wall.pb.gz totals wall.folded" "wall.folded: $us us" "wall.pb.gz: $ns ns, $n stacks"
	fi
	"$PPROF" -top -nodecount=1000 -nodefraction=0 "$TEST_TMP/w/wall.pb.gz" >"$TEST_TMP/wtop" 2>&1
	check_grep "wall.pb.gz marks on-CPU leaves" '\[on-cpu\]$' "$TEST_TMP/wtop"
	check_grep "... and off-CPU ones" '\[off-cpu\]$' "$TEST_TMP/wtop"
	check_eq "the manifest lists wall.pb.gz with its nanoseconds" "$ns" \
		"$(manifest_pprof "$TEST_TMP/w/manifest.json" wall.pb.gz total)"
	for e in cpu.pb.gz offcpu.pb.gz; do
		check "the wall profile's archive holds $e too" gzip -t "$TEST_TMP/w/$e"
	done
	# Its samples are those of cpu.pb.gz and offcpu.pb.gz, so its locations
	# keep their mappings: the demo's with its build id, the kernel's.
	wpb="$TEST_TMP/w/wall.pb.gz"
	"$PPROF" -raw "$wpb" >"$TEST_TMP/wraw" 2>&1
	want=$(readelf -n "$demo_path" | awk '/Build ID:/ { print $3; exit }')
	check_eq "wall.pb.gz maps the demo's frames to its object and build id" "$want" \
		"$(mapping_build_id "$TEST_TMP/wraw" "$demo_path")"
	want=$(mapping_build_id "$TEST_TMP/oraw" "[kernel.kallsyms]")
	if [ -n "$want" ]; then
		check_eq "... the kernel's to [kernel.kallsyms] with the kernel's, as offcpu.pb.gz does" \
			"$want" "$(mapping_build_id "$TEST_TMP/wraw" "[kernel.kallsyms]")"
	else
		not_ok "offcpu.pb.gz maps kernel frames to [kernel.kallsyms] with a build id" \
			"$(sed -n '/^Mappings/,$p' "$TEST_TMP/oraw")"
	fi
	check_grep "... and its locations the names tracerig resolved ([FN])" \
		'^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ .*tracerig-demo [0-9a-f]+ \[FN\]' "$TEST_TMP/wraw"
	# Every demo function has the time pprof gives it in cpu.pb.gz and
	# offcpu.pb.gz together: the same samples, weighed as measured.
	for fn in demo_hot demo_run_slice; do
		cpu_ns=$("$PPROF" -top -unit=ns -sample_index=cpu -nodefraction=0 -focus="^$fn\$" "$TEST_TMP/w/cpu.pb.gz" 2>/dev/null | sed -n 's/.*accounting for \([0-9]*\)ns,.*/\1/p')
		off_ns=$("$PPROF" -top -unit=ns -nodefraction=0 -focus="^$fn\$" "$TEST_TMP/w/offcpu.pb.gz" 2>/dev/null | sed -n 's/.*accounting for \([0-9]*\)ns,.*/\1/p')
		got=$("$PPROF" -top -unit=ns -nodefraction=0 -focus="^$fn\$" "$wpb" 2>/dev/null | sed -n 's/.*accounting for \([0-9]*\)ns,.*/\1/p')
		check_eq "$fn: wall.pb.gz's time is cpu.pb.gz's and offcpu.pb.gz's" \
			"$(( ${cpu_ns:-0} + ${off_ns:-0} ))" "${got:-none}"
	done
	check_dated "wall.pb.gz" "$wpb" "$TEST_TMP/w/manifest.json"
else
	skip "offcpu.pb.gz and wall.pb.gz" "the ebpf backend or its workload is not built, or the kernel has no BTF"
fi

done_testing

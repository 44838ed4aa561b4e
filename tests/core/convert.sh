#!/usr/bin/env bash
# tracerig convert: an archive's stacks as pprof (checked with Google's own
# pprof), folded stacks and speedscope JSON, from tracerig's archives and
# from a perfcollect-layout archive made with perf record + perf script + zip.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lib-pprof.sh"
need_demo_pprof

# ---- two processes of the demo, traced by PID
start_two_demos
mkdir -p "$TEST_TMP/run" && cd "$TEST_TMP/run"
run_tracerig -c "$top_srcdir/conf/profiles/cpu.ini" -p "$one,$two" -d 2 -o "$TEST_TMP/two.trace.zip"
kill "$one" "$two" 2>/dev/null
check_eq "tracerig records two demos" 0 "$rc"
unzip_archive "$TEST_TMP/two.trace.zip" "$TEST_TMP/two"
txt="$TEST_TMP/two/perf.data.txt"

# Default: pprof, into the working directory, named after the archive.
rc=0
"$TRACERIG" convert "$TEST_TMP/two.trace.zip" >"$TEST_TMP/conv.out" 2>&1 || rc=$?
check_eq "convert exits 0" 0 "$rc"
check_eq "convert names what it wrote" "./two.cpu.pb.gz" "$(cat "$TEST_TMP/conv.out")"
pb="$TEST_TMP/run/two.cpu.pb.gz"
check "cpu.pb.gz is gzip" sh -c "gzip -t '$pb'"
check_cpu_pprof "$txt" "$pb" "$one"
"$PPROF" -top "$pb" >"$TEST_TMP/top" 2>&1
check_grep "pprof takes the demo for the profile's binary" '^File: tracerig-demo$' "$TEST_TMP/top"
"$PPROF" -raw "$pb" >"$TEST_TMP/raw" 2>&1
check_grep "locations carry the demo's object as their mapping" "tracerig-demo" "$TEST_TMP/raw"
# Dated as the archive's own cpu.pb.gz: the session's window.
check_dated "the converted cpu.pb.gz" "$pb" "$TEST_TMP/two/manifest.json"
own=$(pprof_time_ns "$TEST_TMP/two/cpu.pb.gz") got=$(pprof_time_ns "$pb")
if [ -n "$own" ] && [ -n "$got" ] && [ $(( got - own )) -gt -1000 ] && [ $(( got - own )) -lt 1000 ]; then
	ok "... to the microsecond of the archive's own ($got, $own)"
else
	not_ok "the converted cpu.pb.gz has the archive's own time" "archive: $own" "convert: $got"
fi

# Folded stacks: as many samples as perf.data.txt.
mkdir -p "$TEST_TMP/folded"
rc=0
"$TRACERIG" convert --to folded -o "$TEST_TMP/folded" "$TEST_TMP/two.trace.zip" >/dev/null 2>&1 || rc=$?
check_eq "convert --to folded exits 0" 0 "$rc"
check_eq "the folded samples are perf.data.txt's" "$total" \
	"$(awk '{ s += $NF } END { print s + 0 }' "$TEST_TMP/folded/two.cpu.folded")"
check_grep "folded stacks are rooted at the process" "^[^;]*-$one;start_thread;demo_worker" "$TEST_TMP/folded/two.cpu.folded"

# ---- off-CPU: offcpu.pb.gz totals what offcpu.folded says
if [ -e "$top_builddir/plugins/ebpf/ebpf.la" ] && [ -r /sys/kernel/btf/vmlinux ]; then
	run_tracerig -c "$top_srcdir/conf/profiles/wall.ini" -d 2 -o "$TEST_TMP/w.trace.zip" -- \
		"$DEMO" --seconds 2 --threads 2
	check_eq "tracerig records the demo on and off the CPU" 0 "$rc"
	unzip_archive "$TEST_TMP/w.trace.zip" "$TEST_TMP/w"
	"$TRACERIG" convert -o "$TEST_TMP/folded" "$TEST_TMP/w.trace.zip" >"$TEST_TMP/wconv.out" 2>&1
	check_grep "offcpu.pb.gz is written" "w.offcpu.pb.gz" "$TEST_TMP/wconv.out"
	check_grep "wall.pb.gz is written" "w.wall.pb.gz" "$TEST_TMP/wconv.out"
	us=$(awk '{ s += $NF } END { printf "%.0f", s }' "$TEST_TMP/w/offcpu.folded")
	ns=$("$PPROF" -top -unit=ns "$TEST_TMP/folded/w.offcpu.pb.gz" 2>/dev/null | sed -n 's/.*of \([0-9]*\)ns total.*/\1/p')
	check_eq "offcpu.pb.gz totals offcpu.folded (in ns)" "${us}000" "$ns"
	"$PPROF" -top -nodecount=1000 -nodefraction=0 "$TEST_TMP/folded/w.offcpu.pb.gz" >"$TEST_TMP/offtop" 2>&1
	check_grep "off-CPU stacks name the demo's functions" 'demo_(hot|warm|cool|run_slice|worker)' "$TEST_TMP/offtop"
	for e in offcpu wall; do
		check_dated "the converted $e.pb.gz" "$TEST_TMP/folded/w.$e.pb.gz" "$TEST_TMP/w/manifest.json"
	done
else
	skip "off-CPU pprof" "the ebpf backend is not built or the kernel has no BTF"
fi

# ---- a perfcollect archive: NAME.trace/perf.data.txt, written by stock
# `perf script` as perfcollect runs it, zipped.  The perf.data is tracerig's:
# this machine's stock `perf record` writes files its own `perf script`
# aborts on (the perf-must-match-the-kernel problem tracerig exists for).
if command -v perf >/dev/null && command -v zip >/dev/null; then
	mkdir -p "$TEST_TMP/pc/sample.trace"
	(cd "$TEST_TMP/pc" && perf script -i "$TEST_TMP/two/perf.data" \
		-F comm,pid,tid,cpu,time,event,ip,sym,dso >sample.trace/perf.data.txt 2>/dev/null &&
		zip -qr sample.trace.zip sample.trace)
	check "perf script + zip make a perfcollect archive" test -s "$TEST_TMP/pc/sample.trace.zip"
	rc=0
	"$TRACERIG" convert -o "$TEST_TMP/pc" "$TEST_TMP/pc/sample.trace.zip" >"$TEST_TMP/pc.out" 2>&1 || rc=$?
	check_eq "convert takes the perfcollect archive" 0 "$rc"
	check_grep "it says the CPU time is unknown without periods" "no cpu-clock period" "$TEST_TMP/pc.out"
	# The perfcollect archive's pprof:
	check_leaf_samples "$TEST_TMP/pc/sample.trace/perf.data.txt" "$TEST_TMP/pc/sample.cpu.pb.gz" \
		demo_hot demo_cool
	# No manifest: the samples' timestamps give the span, nothing the date.
	span=$(awk '/^[^ \t]/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i + 0
		if (!n++ || t < lo) lo = t; if (t > hi) hi = t } } END { printf "%.6f", hi - lo }' \
		"$TEST_TMP/pc/sample.trace/perf.data.txt")
	read -r got tol < <(pprof_duration_s "$TEST_TMP/pc/sample.cpu.pb.gz"; echo)
	if [ -n "$got" ] && awk -v a="$got" -v b="$span" -v t="$tol" 'BEGIN { exit !(b > 0.5 && a - b <= t && a - b >= -t) }'; then
		ok "its duration is the span of perf.data.txt's timestamps ($got s for $span s)"
	else
		not_ok "its duration is the span of perf.data.txt's timestamps" "perf.data.txt: $span s" "pprof -raw: ${got:-none}"
	fi
	check_eq "... and it has no date (perf's clock is not tied to the epoch there)" "" \
		"$(pprof_time_ns "$TEST_TMP/pc/sample.cpu.pb.gz")"
else
	skip "a perfcollect archive converts" "perf or zip is not installed"
fi

# ---- folded-only archives, rooted as tracerig writes them now
# ("comm-PID;tcomm-TID") and as it did before ("comm-PID" in cpu.folded,
# "comm" in offcpu.folded): pid and tid become pprof labels where the root
# has them, and no root frame becomes a function.
mkdir -p "$TEST_TMP/roots/new" "$TEST_TMP/roots/old"
printf '%s\n' 'app-42;worker-43;main;run;spin 7' 'app-42;app-42;main;idle 3' \
	>"$TEST_TMP/roots/new/cpu.folded"
printf '%s\n' 'app-42;worker-43;main;run;wait;schedule_[k] 2500' >"$TEST_TMP/roots/new/offcpu.folded"
printf '%s\n' 'app-42;main;run;spin 7' 'app-42;main;idle 3' >"$TEST_TMP/roots/old/cpu.folded"
printf '%s\n' 'app;main;run;wait;schedule_[k] 2500' >"$TEST_TMP/roots/old/offcpu.folded"
for v in new old; do
	(cd "$TEST_TMP/roots/$v" && zip -q "../$v.trace.zip" cpu.folded offcpu.folded)
	rc=0
	"$TRACERIG" convert -o "$TEST_TMP/roots" "$TEST_TMP/roots/$v.trace.zip" >/dev/null 2>&1 || rc=$?
	check_eq "$v roots: convert exits 0" 0 "$rc"
	check_eq "$v roots: spin keeps its 7 samples" 7 "$(pprof_flat "$TEST_TMP/roots/$v.cpu.pb.gz" spin)"
	check_eq "$v roots: idle keeps its 3" 3 "$(pprof_flat "$TEST_TMP/roots/$v.cpu.pb.gz" idle)"
	"$PPROF" -top -nodecount=1000 -nodefraction=0 "$TEST_TMP/roots/$v.cpu.pb.gz" >"$TEST_TMP/roots/$v.top" 2>&1
	"$PPROF" -top -nodecount=1000 -nodefraction=0 "$TEST_TMP/roots/$v.offcpu.pb.gz" >>"$TEST_TMP/roots/$v.top" 2>&1
	check_no_grep "$v roots: no root frame is a function" 'app|worker' "$TEST_TMP/roots/$v.top"
	check_grep "$v roots: the off-CPU leaf" ' schedule$' "$TEST_TMP/roots/$v.top"
	"$PPROF" -tags "$TEST_TMP/roots/$v.cpu.pb.gz" >"$TEST_TMP/roots/$v.tags" 2>&1
	check_grep "$v roots: the pid label" '100%\): 42$' "$TEST_TMP/roots/$v.tags"
	check_grep "$v roots: the process name label" '%\): app$' "$TEST_TMP/roots/$v.tags"
done
got=$("$PPROF" -top -sample_index=samples -nodefraction=0 -tagfocus=tid=43 "$TEST_TMP/roots/new.cpu.pb.gz" 2>/dev/null |
	sed -n 's/.*accounting for \([0-9]*\),.*/\1/p')
check_eq "new roots: the tid label keeps the thread's 7 samples" 7 "$got"
check_no_grep "old roots: no tid label (the root had none)" 'tid:' "$TEST_TMP/roots/old.tags"
"$PPROF" -raw "$TEST_TMP/roots/new.cpu.pb.gz" >"$TEST_TMP/roots/new.raw" 2>&1
check_no_grep "without a manifest or timestamps, no date or duration" '^(Time|Duration):' "$TEST_TMP/roots/new.raw"

# ---- events named with modifiers, as perf writes them on a machine without a
# PMU (cpu-clock:ppp:): their period is still nanoseconds of CPU time.
mkdir -p "$TEST_TMP/mod/m.trace"
printf 'app 7/7 [000] 1.000001:    1000000 cpu-clock:ppp:\n\t1000 hot (/x)\n\napp 7/7 [000] 1.001001:    1000000 cpu-clock:ppp:\n\t1000 hot (/x)\n\n' \
	>"$TEST_TMP/mod/m.trace/perf.data.txt"
(cd "$TEST_TMP/mod" && zip -qr m.zip m.trace)
rc=0
"$TRACERIG" convert -o "$TEST_TMP/mod" "$TEST_TMP/mod/m.zip" >"$TEST_TMP/mod.out" 2>&1 || rc=$?
check_eq "cpu-clock:ppp: samples convert" 0 "$rc"
check_no_grep "their period is read (no 'no cpu-clock period')" "no cpu-clock period" "$TEST_TMP/mod.out"
if [ -n "${PPROF:-}" ]; then
	"$PPROF" -raw "$TEST_TMP/mod/m.cpu.pb.gz" >"$TEST_TMP/mod.raw" 2>&1
	check_grep "the pprof holds their 2 ms of CPU time" '^ +2 +2000000: ' "$TEST_TMP/mod.raw"
fi

# ---- hostile and wrong input
mkdir -p "$TEST_TMP/evil/x.trace"
printf 'evil\nname 1/1 [000] 1.000001: 1000 cpu-clock:\n\t1000 a;b\033[31m (/x;y)\n\nname 1/1 [000] 1.000002: 1000 cpu-clock:\n\t2000 nodso\n\n' \
	>"$TEST_TMP/evil/x.trace/perf.data.txt"
printf 'p;q;r\tx 5\n' >"$TEST_TMP/evil/offcpu.folded"
(cd "$TEST_TMP/evil" && zip -qr evil.zip x.trace && zip -q evil2.zip offcpu.folded)
rc=0
"$TRACERIG" convert --to folded -o "$TEST_TMP/evil" "$TEST_TMP/evil/evil.zip" >/dev/null 2>&1 || rc=$?
check_eq "a hostile perfcollect-layout archive converts" 0 "$rc"
check_eq "its frame names cannot forge frames or escape sequences" \
	"name-1;a:b?[31m 1|name-1;nodso 1" "$(paste -sd'|' "$TEST_TMP/evil/evil.cpu.folded")"
rc=0
"$TRACERIG" convert --to folded -o "$TEST_TMP/evil" "$TEST_TMP/evil/evil2.zip" >/dev/null 2>&1 || rc=$?
check_eq "a hostile tracerig-layout archive converts" 0 "$rc"
check_eq "nor lines in offcpu" "p;q;r?x 5" "$(cat "$TEST_TMP/evil/evil2.offcpu.folded")"
rc=0
"$TRACERIG" convert "$txt" >"$TEST_TMP/bad.out" 2>&1 || rc=$?
check_eq "a file that is no archive fails" 1 "$rc"
check_grep "and says so" "Not a zip archive" "$TEST_TMP/bad.out"
rc=0
"$TRACERIG" convert -o "$TEST_TMP/nope" "$TEST_TMP/two.trace.zip" >"$TEST_TMP/bad.out" 2>&1 || rc=$?
check_eq "an output directory that does not exist is a usage error" 2 "$rc"
rc=0
"$TRACERIG" convert --to svg "$TEST_TMP/two.trace.zip" >"$TEST_TMP/bad.out" 2>&1 || rc=$?
check_eq "an unknown format is a usage error" 2 "$rc"
check_grep "that names the formats" "pprof, folded or speedscope" "$TEST_TMP/bad.out"

done_testing

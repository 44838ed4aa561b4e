#!/usr/bin/env bash
# `tracerig report ARCHIVE`: the manifest basics, the top functions by self
# and total samples, the per-process split and off-CPU time, from a
# hand-written archive with known counts; clear errors for what is not an
# archive.  And the demo workload those numbers come from in real runs.
. "$top_srcdir/tests/lib.sh"

command -v zip >/dev/null || skip_all "needs zip(1) to build the fixture archives"

fx="$TEST_TMP/fx"
mkdir -p "$fx"

# 10 samples: self demo_hot 6, demo_warm 3, demo_cool 1.  pid 4242 has 7
# (6 as demo-worker, 1 as its main thread), pid 5151 "my app" (a comm with a
# space) has 3.  One stack recurses through demo_hot: still one per sample.
cat >"$fx/perf.data.txt" <<'EOF'
demo-worker  4242/4243 [001] 12345.678901:     1000000 cpu-clock: 
	    55d0c0a1b2c3 demo_hot+0x12 (/opt/demo/tracerig-demo)
	    55d0c0a1b400 demo_run_slice+0x20 (/opt/demo/tracerig-demo)
	    55d0c0a1b500 demo_worker+0x1c (/opt/demo/tracerig-demo)
	    7f0000001000 start_thread+0x2f3 (/usr/lib/x86_64-linux-gnu/libc.so.6)

demo-worker  4242/4243 [001] 12345.679901:     1000000 cpu-clock: 
	    55d0c0a1b2c3 demo_hot+0x12 (/opt/demo/tracerig-demo)
	    55d0c0a1b2f0 demo_hot+0x40 (/opt/demo/tracerig-demo)
	    55d0c0a1b400 demo_run_slice+0x20 (/opt/demo/tracerig-demo)
	    55d0c0a1b500 demo_worker+0x1c (/opt/demo/tracerig-demo)

demo-worker  4242/4244 [002] 12345.680901:     1000000 cpu-clock: 
	    55d0c0a1b2c3 demo_hot+0x12 (/opt/demo/tracerig-demo)
	    55d0c0a1b400 demo_run_slice+0x20 (/opt/demo/tracerig-demo)
	    55d0c0a1b500 demo_worker+0x1c (/opt/demo/tracerig-demo)

demo-worker  4242/4244 [002] 12345.681901:     1000000 cpu-clock: 
	    55d0c0a1b2c3 demo_hot+0x12 (/opt/demo/tracerig-demo)
	    55d0c0a1b400 demo_run_slice+0x20 (/opt/demo/tracerig-demo)
	    55d0c0a1b500 demo_worker+0x1c (/opt/demo/tracerig-demo)

demo-worker  4242/4243 [001] 12345.682901:     1000000 cpu-clock: 
	    55d0c0a1b2c3 demo_hot+0x12 (/opt/demo/tracerig-demo)
	    55d0c0a1b400 demo_run_slice+0x20 (/opt/demo/tracerig-demo)
	    55d0c0a1b500 demo_worker+0x1c (/opt/demo/tracerig-demo)

demo-worker  4242/4243 [001] 12345.683901:     1000000 cpu-clock: 
	    55d0c0a1b3a0 demo_warm+0x8 (/opt/demo/tracerig-demo)
	    55d0c0a1b400 demo_run_slice+0x30 (/opt/demo/tracerig-demo)
	    55d0c0a1b500 demo_worker+0x1c (/opt/demo/tracerig-demo)

tracerig-demo  4242/4242 [000] 12345.684901:     1000000 cpu-clock: 
	    55d0c0a1b3a0 demo_warm+0x8 (/opt/demo/tracerig-demo)
	    55d0c0a1b600 main+0x99 (/opt/demo/tracerig-demo)

my app  5151/5151 [003] 12345.685901:     1000000 cpu-clock: 
	    7f1000002000 demo_hot (/usr/lib/libapp.so)
	    7f1000003000 ns::run(int, char const*)+0x10 (/usr/lib/libapp.so)
	    ffffffffffffffff [unknown] ([unknown])

my app  5151/5152 [003] 12345.686901:     1000000 cpu-clock: 
	    7f1000004000 demo_warm+0x1 (/usr/lib/libapp.so)
	    7f1000003000 ns::run(int, char const*)+0x10 (/usr/lib/libapp.so)

my app  5151/5152 [000] 12345.687901:     1000000 cpu-clock: 
	    7f1000005000 demo_cool+0x2 (/usr/lib/libapp.so)
	    7f1000003000 ns::run(int, char const*)+0x10 (/usr/lib/libapp.so)

EOF
# (demo_hot of pid 5151 is first in its stack: 6 self samples in all.)

cat >"$fx/manifest.json" <<'EOF'
{"manifest_version":1,
 "tool":{"name":"tracerig","version":"0.1","plugin_abi":1,"command_line":["tracerig","-c","cpu"]},
 "host":{"hostname":"fixture-host","kernel":"6.1.0-test","kernel_version":"#1 SMP","arch":"x86_64","cpus_online":4},
 "profile":{"path":"/etc/tracerig/profiles/cpu.ini","sections":{"tracerig":{"name":"democpu","duration":"3s"}}},
 "clock":{"source":"CLOCK_MONOTONIC","start_monotonic_ns":1,"start_realtime_ns":2,"realtime_minus_monotonic_ns":1,"end_monotonic_ns":3,"start_utc":"2024-05-01T10:00:00Z"},
 "session":{"duration_ms_requested":3000,"duration_ms":3012,"ended_by":"duration"},
 "targets":{"system_wide":false,"pids":[4242,5151],"cgroup":null,"observed_processes":2},
 "plugins":[
  {"name":"perf_events","version":"0.1","kind":"source","file":"/x/perf_events.so","required":true,"status":"ok","counters":{"samples":10,"lost":0}},
  {"name":"ebpf","version":"0.1","kind":"source","file":"/x/ebpf.so","required":false,"status":"skipped","failed_in":"start","error":"Operation not permitted","counters":{}},
  {"name":"zip","version":"0.1","kind":"packager","file":"/x/zip.so","required":true,"status":"ok","counters":{}}],
 "files":[{"name":"perf.data.txt","size":1}]}
EOF

# Off-CPU: 3000 us in demo_sleep (kernel frames below it do not count as the
# leaf), 1000 us in demo_lock, 2000 us in a kernel thread (no function of a
# program to list: its process is).
cat >"$fx/offcpu.folded" <<'EOF'
demo-worker;demo_worker;demo_sleep;do_nanosleep_[k];schedule_[k] 2000
demo-worker;demo_worker;demo_lock;futex_wait_[k] 1000
demo-worker;main;demo_sleep;schedule_[k] 1000
kworker/0:1;worker_thread_[k];schedule_[k] 2000
EOF

(cd "$fx" && zip -q "$TEST_TMP/full.trace.zip" perf.data.txt manifest.json offcpu.folded)
run_tracerig report "$TEST_TMP/full.trace.zip"
cp "$TEST_TMP/out" "$TEST_TMP/full.out"
r="$TEST_TMP/full.out"
check_eq "report of a full archive exits 0" 0 "$rc"
check_grep "names the session from the profile" '^  name +democpu \(profile /etc/tracerig/profiles/cpu\.ini\)$' "$r"
check_grep "names the host" '^  host +fixture-host$' "$r"
check_grep "names the kernel" '^  kernel +Linux 6\.1\.0-test x86_64, 4 CPUs$' "$r"
check_grep "gives the duration" '^  duration +3\.012 s, started 2024-05-01T10:00:00Z, ended by duration$' "$r"
check_grep "gives the targets" '^  targets +pids 4242,5151; 2 processes observed$' "$r"
check_grep "a backend that ran: ok, with its counters" '^    perf_events +ok +required +samples 10, lost 0$' "$r"
check_grep "a backend that did not: skipped, where and why" '^    ebpf +skipped +optional \(start: Operation not permitted\)$' "$r"
check_grep "counts the samples and names the event" '^CPU samples: 10 in perf\.data\.txt \(cpu-clock 10\)$' "$r"

# The self table: lines between its title and the next blank line.
table() { sed -n "/$1/,/^\$/p" "$r" | sed '1,2d;/^$/d' | sed 's/  */ /g;s/^ //'; }
check_eq "self: demo_hot 60%, demo_warm 30%, demo_cool 10%, nothing else" \
	"6 60.0% demo_hot
3 30.0% demo_warm
1 10.0% demo_cool" "$(table '^Top .* by self samples')"
check_eq "total: each function once per sample, recursion included" \
	"6 60.0% demo_hot
6 60.0% demo_run_slice
6 60.0% demo_worker
3 30.0% demo_warm
3 30.0% ns::run(int, char const*)
1 10.0% [unknown]
1 10.0% demo_cool
1 10.0% main
1 10.0% start_thread" "$(table '^Top .* by total samples')"
check_eq "processes: split by pid, named by the busiest thread name" \
	"7 70.0% demo-worker 4242 (and thread names: tracerig-demo)
3 30.0% my app 5151" "$(table '^Processes')"
check_grep "off-CPU: the total blocked time" '^Off-CPU time: 0\.006 s blocked in 4 stacks \(offcpu\.folded\)$' "$r"
check_eq "off-CPU: leaf functions (innermost user frame) by blocked time; no kernel frame" \
	"3.000 50.0% demo_sleep
2.000 33.3% [kernel only] kworker/0:1
1.000 16.7% demo_lock" "$(table '^Top .* leaf functions by blocked time')"
check_no_grep "a report of a good archive has no warnings" '^tracerig' "$r"

# tracerig's own folded stacks, when the archive has them, are what the
# report reads: the same 10 samples as cpu.folded writes them (comm-PID
# root, outermost frame first), next to a perf.data.txt of one other sample
# that must not count.
mkdir -p "$TEST_TMP/folded"
cat >"$TEST_TMP/folded/cpu.folded" <<'EOF'
demo-worker-4242;start_thread;demo_worker;demo_run_slice;demo_hot 1
demo-worker-4242;demo_worker;demo_run_slice;demo_hot;demo_hot 1
demo-worker-4242;demo_worker;demo_run_slice;demo_hot 3
demo-worker-4242;demo_worker;demo_run_slice;demo_warm 1
tracerig-demo-4242;main;demo_warm 1
my app-5151;[unknown];ns::run(int, char const*);demo_hot 1
my app-5151;ns::run(int, char const*);demo_warm 1
my app-5151;ns::run(int, char const*);demo_cool 1
EOF
printf 'other 9/9 [000] 1.000001: 1 cpu-clock:\n\t    1000 not_this (/x)\n\n' \
	>"$TEST_TMP/folded/perf.data.txt"
cp "$fx/manifest.json" "$TEST_TMP/folded/"
(cd "$TEST_TMP/folded" && zip -q "$TEST_TMP/folded.trace.zip" manifest.json cpu.folded perf.data.txt)
run_tracerig report "$TEST_TMP/folded.trace.zip"
cp "$TEST_TMP/out" "$TEST_TMP/folded.out"
check_eq "cpu.folded: exits 0" 0 "$rc"
check_grep "cpu.folded: counts its samples, not perf.data.txt's" '^CPU samples: 10 in cpu\.folded$' "$TEST_TMP/folded.out"
for t in '^Top .* by self samples' '^Top .* by total samples' '^Processes'; do
	r="$TEST_TMP/full.out"
	expected=$(table "$t")
	r="$TEST_TMP/folded.out"
	check "perf.data.txt has the table: $t" test -n "$expected"
	check_eq "cpu.folded: the same table as perf.data.txt's: $t" "$expected" "$(table "$t")"
done
check_no_grep "cpu.folded: perf.data.txt is not read" 'not_this|other' "$TEST_TMP/folded.out"

# The same samples and off-CPU stacks rooted as tracerig writes them now,
# process then thread ("comm-PID;tcomm-TID", docs/ARCHITECTURE.md): the
# same tables, the root frames neither functions nor leaves.  The archives
# above have the roots written before ("comm-PID", "comm") and must read
# as they did.
mkdir -p "$TEST_TMP/roots"
cat >"$TEST_TMP/roots/cpu.folded" <<'EOF'
tracerig-demo-4242;demo-worker-4243;start_thread;demo_worker;demo_run_slice;demo_hot 1
tracerig-demo-4242;demo-worker-4243;demo_worker;demo_run_slice;demo_hot;demo_hot 1
tracerig-demo-4242;demo-worker-4244;demo_worker;demo_run_slice;demo_hot 3
tracerig-demo-4242;demo-worker-4244;demo_worker;demo_run_slice;demo_warm 1
tracerig-demo-4242;tracerig-demo-4242;main;demo_warm 1
my app-5151;my app-5151;[unknown];ns::run(int, char const*);demo_hot 1
my app-5151;my app-5151;ns::run(int, char const*);demo_warm 1
my app-5151;my app-5151;ns::run(int, char const*);demo_cool 1
EOF
cat >"$TEST_TMP/roots/offcpu.folded" <<'EOF'
tracerig-demo-4242;demo-worker-4243;demo_worker;demo_sleep;do_nanosleep_[k];schedule_[k] 2000
tracerig-demo-4242;demo-worker-4244;demo_worker;demo_lock;futex_wait_[k] 1000
tracerig-demo-4242;tracerig-demo-4242;main;demo_sleep;schedule_[k] 1000
kworker/0:1-77;kworker/0:1-77;worker_thread_[k];schedule_[k] 2000
EOF
cp "$TEST_TMP/folded/perf.data.txt" "$fx/manifest.json" "$TEST_TMP/roots/"
(cd "$TEST_TMP/roots" && zip -q "$TEST_TMP/roots.trace.zip" manifest.json cpu.folded offcpu.folded perf.data.txt)
run_tracerig report "$TEST_TMP/roots.trace.zip"
cp "$TEST_TMP/out" "$TEST_TMP/roots.out"
check_eq "process;thread roots: exits 0" 0 "$rc"
check_grep "process;thread roots: counts cpu.folded's samples" '^CPU samples: 10 in cpu\.folded$' "$TEST_TMP/roots.out"
for t in '^Top .* by self samples' '^Top .* by total samples' '^Processes' \
	'^Top .* leaf functions by blocked time'; do
	r="$TEST_TMP/full.out"
	expected=$(table "$t")
	r="$TEST_TMP/roots.out"
	check_eq "process;thread roots: the same table as before: $t" "$expected" "$(table "$t")"
done
check_grep "process;thread roots: the same blocked total" \
	'^Off-CPU time: 0\.006 s blocked in 4 stacks \(offcpu\.folded\)$' "$TEST_TMP/roots.out"
check_no_grep "process;thread roots: no root frame is taken for a function" \
	'demo-worker-424|tracerig-demo-4242' "$TEST_TMP/roots.out"

run_tracerig report "$TEST_TMP/full.trace.zip" --top 2
check_eq "--top 2 after the archive: exits 0" 0 "$rc"
r="$TEST_TMP/out"
check_eq "--top 2 keeps the two first functions" "6 60.0% demo_hot
3 30.0% demo_warm" "$(table '^Top 2 functions by self samples')"

# An archive without samples says so plainly.
(cd "$fx" && zip -q "$TEST_TMP/nosamples.trace.zip" manifest.json)
run_tracerig report "$TEST_TMP/nosamples.trace.zip"
check_eq "no samples: exits 0" 0 "$rc"
check_grep "no samples: says there is no perf.data.txt" '^CPU samples: none \(the archive has no perf\.data\.txt' "$TEST_TMP/out"
check_grep "no samples: says so plainly" '^No samples in this archive' "$TEST_TMP/out"
: >"$fx/perf.data.txt"
(cd "$fx" && zip -q "$TEST_TMP/empty.trace.zip" manifest.json perf.data.txt)
run_tracerig report "$TEST_TMP/empty.trace.zip"
check_grep "an empty perf.data.txt: no samples" '^CPU samples: none \(perf\.data\.txt has no samples\)' "$TEST_TMP/out"

# A huge line (a 20 MiB frame list, a few KiB compressed) is skipped with a
# warning, not held in memory; the stacks around it still count.
mkdir -p "$TEST_TMP/huge"
cp "$fx/manifest.json" "$TEST_TMP/huge/"
{
	printf 'demo;main;demo_sleep;schedule_[k] 3000\n'
	head -c $((20 << 20)) /dev/zero | tr '\0' 'a'
	printf ' 5\n'
	printf 'demo;main;demo_lock;schedule_[k] 1000\n'
} >"$TEST_TMP/huge/offcpu.folded"
(cd "$TEST_TMP/huge" && zip -q -9 "$TEST_TMP/huge.trace.zip" manifest.json offcpu.folded)
run_tracerig report "$TEST_TMP/huge.trace.zip"
check_eq "a 20 MiB line: exits 0" 0 "$rc"
check_grep "a 20 MiB line: skipped, with a warning" \
	'^tracerig: report: offcpu.folded: 1 line\(s\) longer than 16 MiB skipped' "$TEST_TMP/out"
check_grep "a 20 MiB line: the other stacks count" \
	'^Off-CPU time: 0\.004 s blocked in 2 stacks \(offcpu\.folded\)$' "$TEST_TMP/out"

# What is not an archive.
echo "not a zip" >"$TEST_TMP/text.trace.zip"
run_tracerig report "$TEST_TMP/text.trace.zip"
check_eq "not a zip: exit 1" 1 "$rc"
check_grep "not a zip: says why" "^tracerig: report: cannot open $TEST_TMP/text\\.trace\\.zip: Not a zip archive" "$TEST_TMP/out"
run_tracerig report "$TEST_TMP/missing.trace.zip"
check_eq "missing file: exit 1" 1 "$rc"
check_grep "missing file: says why" "^tracerig: report: cannot open $TEST_TMP/missing\\.trace\\.zip: No such file or directory" "$TEST_TMP/out"
run_tracerig report
check_eq "no archive named: exit 2" 2 "$rc"
run_tracerig report "$TEST_TMP/full.trace.zip" --top 0
check_eq "--top 0: exit 2" 2 "$rc"

# ---- the demo workload
demo="$top_builddir/demo/tracerig-demo"
if [ ! -x "$demo" ]; then
	skip "demo: runs" "demo/tracerig-demo is not built"
else
	rc=0
	"$demo" --seconds 0.3 --threads 2 >"$TEST_TMP/demo.out" 2>&1 || rc=$?
	check_eq "demo: --seconds 0.3 --threads 2 exits 0" 0 "$rc"
	check_grep "demo: prints its pid, threads and duration" '^tracerig-demo: pid [0-9]+, 2 threads, 0\.3 s$' "$TEST_TMP/demo.out"
	if command -v nm >/dev/null; then
		check_eq "demo: the functions are in .dynsym" "demo_cool demo_hot demo_warm" \
			"$(nm -D --defined-only "$demo" | awk '$2 == "T" && /demo_(hot|warm|cool)$/ { print $3 }' | sort | xargs)"
		check_eq "demo: the functions are in .symtab" "demo_cool demo_hot demo_warm" \
			"$(nm --defined-only "$demo" | awk '$2 == "T" && /demo_(hot|warm|cool)$/ { print $3 }' | sort | xargs)"
	else
		skip "demo: the functions are in .dynsym and .symtab" "no nm"
	fi
	# The worker threads are named.
	"$demo" --seconds 1 --threads 3 2>/dev/null &
	pid=$!
	on_exit "kill $pid 2>/dev/null"
	names=""
	for _ in $(seq 50); do
		names=$(cat /proc/$pid/task/*/comm 2>/dev/null | grep -c '^demo-worker$' || true)
		[ "$names" = 3 ] && break
		sleep 0.02
	done
	check_eq "demo: three threads named demo-worker" 3 "$names"
	wait "$pid"
	rc=0
	timeout 10 "$demo" --seconds 0.2 --threads 1 --fork >/dev/null 2>&1 || rc=$?
	check_eq "demo: --fork waits for its child and exits 0" 0 "$rc"
	for args in "--threads 0" "--seconds soon" "--split 50,50" "--split 50,30,30" "--bogus" "--seconds"; do
		rc=0
		# shellcheck disable=SC2086
		"$demo" $args >"$TEST_TMP/demo.out" 2>&1 || rc=$?
		check_eq "demo: bad arguments ($args) exit 3" 3 "$rc"
	done
	check_grep "demo: bad arguments print the usage" '^Usage: tracerig-demo' "$TEST_TMP/demo.out"
fi

done_testing

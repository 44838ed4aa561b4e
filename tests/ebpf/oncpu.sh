#!/bin/sh
# ebpf oncpu = yes (conf/profiles/cpu-cfi.ini): on-CPU samples taken by a
# BPF program on a cpu-clock perf event, their user stacks walked in the
# kernel by callchain = cfi's tables, give whole stacks of code built
# without frame pointers, running through Debian's libc (no frame pointers
# either), and the chains perf's --call-graph dwarf gives.  The workload
# (tests/ebpf/oncpu/burn.c, -O2 -fomit-frame-pointer) burns CPU in a qsort
# comparator, from a thread and from main, and in a thread's own chain.
#
# Nothing depends on load: the work is fixed (ROUNDS sorts of the same
# data, the same spins), and a clock sampling CPU time takes about as many
# samples of it however busy the machine is; thresholds are shares of the
# workload's samples (90 % of the comparator's whole, from the thread
# start or main) and a floor far below what the work takes (about 1,000
# samples at 999 Hz).  Half a second of warm-up: a process's first
# samples, before its tables are loaded, keep one frame (counted).
# test-lock: exclusive (stock perf: perf 6.1 aborts, util/build-id.c:1010, on
# perf.data recorded while another test's tracerig has BPF programs loaded)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf
burn="$top_builddir/tests/ebpf/oncpu/burn"
[ -x "$burn" ] || skip_all "tests/ebpf/oncpu/burn is not built"
profile="$top_srcdir/conf/profiles/cpu-cfi.ini"
rounds=60
least=100

root='^burn-[0-9]+;burn-[0-9]+;'
sort_chain='sort_caller;my_sorter;[^;]*qsort[^;]*;([^;]+;)*my_compare'
# Whole: two frames above the thread function (libc's thread start), or
# _start's way down to main.
thread_whole="${root}[^;]+;[^;]+;sort_thread;$sort_chain\$"
main_whole="${root}_start;([^;]+;)*main;$sort_chain\$"
spin_whole="${root}[^;]+;[^;]+;spin_thread;spin_caller;spin_leaf\$"

# user_lines FOLDED [KERNEL]: the workload's lines, "root;frames COUNT" ->
# "root;frames<TAB>COUNT", without their kernel frames unless KERNEL is 1.
user_lines() {
	grep -E "$root" "$1" | awk -v kernel="${2:-0}" '{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";"); s = ""
		for (i = 1; i <= k; i++) if (kernel || f[i] !~ /_\[k\]$/) s = s (s == "" ? "" : ";") f[i]
		print s "\t" n
	}' | sed -E 's/@[^;	]*//g'
}
# share LINES LEAF_RE WHOLE_RE MAIN: of the samples whose innermost user
# frame matches LEAF_RE (of the main thread when MAIN is 1, of the others
# when 0), "per cent (floor) whose stack matches WHOLE_RE, those, all".
share() {
	awk -F'\t' -v leaf="$2" -v re="$3" -v main="$4" '{
		k = split($1, f, ";"); split(f[1], p, "-"); split(f[2], t, "-")
		if ((p[2] == t[2]) != main || f[k] !~ leaf) next
		all += $2
		if ($1 ~ re) whole += $2
	} END { printf "%d %d %d\n", all ? int(whole * 100 / all) : 0, whole, all }' "$1"
}
at_least() {
	if [ "${2:-0}" -ge "$3" ]; then ok "$1"; else not_ok "$1" "got ${2:-0}, expected at least $3"; fi
}
# whole_share NAME LINES LEAF_RE WHOLE_RE MAIN: 90 % of those samples whole.
whole_share() {
	set -- "$1" $(share "$2" "$3" "$4" "$5")
	at_least "$1: samples" "$4" "$least"
	if [ "$2" -ge 90 ]; then
		ok "$1: $3 of $4 samples (${2} %) have the whole chain"
	else
		not_ok "$1: 90 % of the samples have the whole chain" "$3 of $4 (${2} %)"
	fi
}

# callchain = dwarf copies stacks to unwind them in user space: not for
# samples taken in the kernel.
printf '[tracerig]\nname = bad\n[ebpf]\ncallchain = dwarf\noncpu = yes\n' >"$TEST_TMP/bad.ini"
run_tracerig -c "$TEST_TMP/bad.ini" -d 1 -o "$TEST_TMP/bad.trace.zip"
check_eq "oncpu with callchain = dwarf: a profile error (exit 2)" 2 "$rc"
check_grep "said at the key" "\\[ebpf\\] callchain: oncpu samples walk user stacks in the kernel" \
	"$TEST_TMP/out"

run_tracerig -c "$profile" -o "$TEST_TMP/t.zip" -- "$burn" -n "$rounds" -w 500
if grep -q "callchain = cfi is not available in this build" "$TEST_TMP/out"; then
	skip_all "callchain = cfi is not available in this build (no libdw)"
fi
check_eq "tracerig -c cpu-cfi.ini traces the workload" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
unzip_archive "$TEST_TMP/t.zip" "$TEST_TMP/t"
f="$TEST_TMP/t/oncpu.folded"
m="$TEST_TMP/t/manifest.json"
check "oncpu.folded is in the archive" test -s "$f"
check "oncpu.svg is in the archive" test -s "$TEST_TMP/t/oncpu.svg"
check "oncpu.pb.gz is in the archive" test -s "$TEST_TMP/t/oncpu.pb.gz"
check "offcpu.folded still is" test -s "$TEST_TMP/t/offcpu.folded"
check_grep "wall.folded has the on-CPU samples" "^burn-[0-9]+;.*\\[on-cpu\\] [0-9]+\$" \
	"$TEST_TMP/t/wall.folded"
user_lines "$f" >"$TEST_TMP/user"
samples=$(awk -F'\t' '{ s += $2 } END { print s + 0 }' "$TEST_TMP/user")
at_least "the workload's samples" "$samples" "$((3 * least))"
counted=$(python3 -c 'import json, sys
p = [p for p in json.load(open(sys.argv[1]))["plugins"] if p["name"] == "ebpf"][0]["counters"]
print(p.get("oncpu_samples", -1) - p.get("oncpu_samples_lost_map_full", 0))' "$m")
total=$(awk '{ s += $NF } END { print s + 0 }' "$f")
check_eq "the manifest's oncpu_samples are oncpu.folded's" "$counted" "$total"
check_grep "the manifest counts the walks" '"cfi_walks": *[1-9]' "$m"

# perf.data.txt: every sample as perf script prints it, the same ones as
# oncpu.folded (the kernel sends each one's time, thread and stack ids).
d="$TEST_TMP/t/perf.data.txt"
check "perf.data.txt is in the archive" test -s "$d"
headers=$(grep -cE '^[^	 ].* +[0-9]+/[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: +[0-9]+ cpu-clock: $' "$d")
check_eq "perf.data.txt: a perf script header per sample, as many as oncpu.folded's" \
	"$total" "$headers"
check_grep "the manifest counts them" "\"oncpu_script_samples\": *$total," "$m"
# Written at the flush, and followed by the core's deflating as it was
# written (how much it deflated before the packager took over depends on
# the machine; the checks above read the archive's text whole).
streamed=$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
print([f for f in m["files"] if f["name"] == "perf.data.txt"][0].get("deflated_before_packaging", "none"))' "$m")
check "perf.data.txt was deflated as it was written ($streamed of $(stat -c %s "$d") bytes before packaging)" \
	test "$streamed" != none -a "$streamed" -le "$(stat -c %s "$d")"
# script_stacks SCRIPT KERNEL: the workload's samples as "PID-TID;frames
# outermost first<TAB>count", their kernel frames named as oncpu.folded
# names them (NAME_[k]) when KERNEL is 1, left out (as user_lines does)
# when 0.  Kernel frames are those at kernel addresses, whatever their
# object: a sample can land in a BPF program ("[bpf]") or a module as well
# as in [kernel.kallsyms].  A frame perf script calls "[unknown]
# (/lib/libc.so.6)" is "[libc.so.6]" in oncpu.folded, as stackcollapse-perf
# names it.
script_stacks() {
	awk -v kernel="$2" 'BEGIN { RS = "" } $1 == "burn" {
		n = split($0, l, "\n"); split(l[1], h, " +"); s = ""
		for (i = n; i > 1; i--) {
			split(l[i], w, " ")
			kern = length(w[1]) == 16 && substr(w[1], 1, 4) == "ffff"
			if (kern && !kernel) continue
			f = l[i]; sub(/^[ \t]*[0-9a-f]+ /, "", f)
			if (f ~ /^\[unknown\] \(/) {
				sub(/^\[unknown\] \(/, "", f); sub(/\)$/, "", f)
				if (f !~ /^\[/) { sub(/.*\//, "", f); f = "[" f "]" }
			} else {
				sub(/ \([^()]*\)$/, "", f)
			}
			s = s ";" f (kern ? "_[k]" : "")
		}
		split(h[2], pt, "/"); print pt[1] "-" pt[2] s
	}' "$1" | sed -E 's/@[^;]*//g' | sort | uniq -c | awk '{ print $2 "\t" $1 }' | sort
}
# per_thread LINES: "root;frames<TAB>count" lines as "PID-TID;frames<TAB>count".
per_thread() {
	awk -F'\t' '{ split($1, f, ";"); split(f[1], p, "-"); split(f[2], t, "-")
		r = $1; sub(/^[^;]*;[^;]*/, "", r); c[p[2] "-" t[2] r] += $2 }
		END { for (k in c) print k "\t" c[k] }' "$1" | sort
}
# same_stacks WHAT FOLDED SCRIPT: one check that both hold the same stacks.
same_stacks() {
	if cmp -s "$2" "$3"; then
		ok "perf.data.txt's $1, per thread, are oncpu.folded's ($(wc -l <"$2") stacks)"
	else
		not_ok "perf.data.txt's $1, per thread, are oncpu.folded's" "$(diff "$2" "$3" | head -8)"
	fi
}
script_stacks "$d" 0 >"$TEST_TMP/script.user"
per_thread "$TEST_TMP/user" >"$TEST_TMP/folded.user"
same_stacks "user stacks" "$TEST_TMP/folded.user" "$TEST_TMP/script.user"
# Kernel frames too: an on-CPU sample's kernel stack starts where the timer
# interrupted, so even one that landed in the off-CPU probe (tracerig's own
# cost) keeps the probe's frames in both.
user_lines "$f" 1 >"$TEST_TMP/whole"
per_thread "$TEST_TMP/whole" >"$TEST_TMP/folded.whole"
script_stacks "$d" 1 >"$TEST_TMP/script.whole"
same_stacks "stacks with their kernel frames" "$TEST_TMP/folded.whole" "$TEST_TMP/script.whole"
whole=$(grep -cE ';_start;([^;]+;)*main;sort_caller;my_sorter;[^;]*qsort[^;]*;([^;]+;)*my_compare	' \
	"$TEST_TMP/script.user")
at_least "perf.data.txt: main's comparator stacks reach _start" "$whole" 1
# Its times are the session clock's (CLOCK_MONOTONIC): inside the run's
# window, in order but for CPUs a few microseconds apart.
python3 - "$d" "$m" >"$TEST_TMP/times" <<'PY'
import json, re, sys
times = [int(a) * 10**9 + int(b) * 1000 for a, b in
         re.findall(r"^\S.*\] +(\d+)\.(\d{6}): ", open(sys.argv[1]).read(), re.M)]
c = json.load(open(sys.argv[2]))["clock"]
inside = all(c["start_monotonic_ns"] - 1000 <= t <= c["end_monotonic_ns"] for t in times)
ordered = all(b >= a - 1000000 for a, b in zip(times, times[1:]))
print(len(times), int(inside), int(ordered))
PY
check_eq "perf.data.txt's times: all inside the run, in order" "$total 1 1" "$(cat "$TEST_TMP/times")"
report=$("$TRACERIG" report "$TEST_TMP/t.zip" 2>&1 | grep '^CPU samples:')
check_eq "tracerig report reads them" "CPU samples: $total in perf.data.txt (cpu-clock $total)" "$report"

whole_share "sort_thread's comparator" "$TEST_TMP/user" '^my_compare$' "$thread_whole" 0
whole_share "main's comparator" "$TEST_TMP/user" '^my_compare$' "$main_whole" 1
whole_share "spin_thread's leaf" "$TEST_TMP/user" '^spin_leaf$' "$spin_whole" 0

# chains STACKS: the distinct comparator chains, from the thread function
# (or main) down to my_compare, of stacks as "outer;...;inner" lines.
chains() {
	sed -nE "s/^(.*;)?((sort_thread|main);$sort_chain)\$/\\2/p" "$1" | sort -u
}
if ! command -v perf >/dev/null; then
	skip "perf: tracerig finds the comparator chains perf finds" "perf is not installed"
elif ! perf record -q -o "$TEST_TMP/perf.data" -F 999 --call-graph dwarf -- \
	"$burn" -n "$rounds" >"$TEST_TMP/perf.out" 2>&1; then
	skip "perf: tracerig finds the comparator chains perf finds" \
		"perf record failed: $(tail -1 "$TEST_TMP/perf.out")"
else
	perf script -i "$TEST_TMP/perf.data" --no-inline -F comm,tid,ip,sym >"$TEST_TMP/perf.script" \
		2>"$TEST_TMP/perf.err"
	perf_stacks "$TEST_TMP/perf.script" >"$TEST_TMP/perf.stacks"
	chains "$TEST_TMP/perf.stacks" >"$TEST_TMP/p.chains"
	sed -E 's/^[^;]*;[^;]*;//; s/	.*//' "$TEST_TMP/user" >"$TEST_TMP/t.stacks"
	chains "$TEST_TMP/t.stacks" >"$TEST_TMP/t.chains"
	missing=$(comm -23 "$TEST_TMP/p.chains" "$TEST_TMP/t.chains")
	if [ -s "$TEST_TMP/p.chains" ] && [ -z "$missing" ]; then
		ok "perf: tracerig finds the $(wc -l <"$TEST_TMP/p.chains") comparator chains perf finds ($(wc -l <"$TEST_TMP/t.chains") in all)"
	else
		not_ok "perf: tracerig finds the comparator chains perf finds" \
			"perf's ($(wc -l <"$TEST_TMP/p.chains")) that tracerig lacks:" "$missing"
	fi
fi
# A staging disk with room for everything but perf.data.txt (sized from
# the run above: its other entries and half of its perf.data.txt): the
# cut perf.data.txt is left out and said, everything else is archived,
# and the exit status says a backend failed.  Without streaming: the
# core frees what it has deflated of the text as it goes, and whether
# that keeps up with the writing depends on the machine's load.
room=$(python3 -c 'import json, sys
f = {e["name"]: e["size"] for e in json.load(open(sys.argv[1]))["files"]}
print((sum(f.values()) - f["perf.data.txt"] // 2) // 1024)' "$m")
mkdir -p "$TEST_TMP/small" "$TEST_TMP/fullout"
rc=0
STAGE="$TEST_TMP/small" unshare -m bash -c 'mount -t tmpfs -o size="$1"k tmpfs "$STAGE" || exit 99
	shift; TMPDIR="$STAGE" "$@"' - "$room" "$TRACERIG" -c "$profile" --set tracerig.stream=no \
	-o "$TEST_TMP/fullout/f.zip" -- "$burn" -n "$rounds" -w 500 >"$TEST_TMP/full.out" 2>&1 </dev/null || rc=$?
check_eq "perf.data.txt on a full staging disk: exit 1 (a backend failed)" 1 "$rc"
check_grep "said, with what is kept" \
	"^tracerig: ebpf: flush failed: cannot write perf\\.data\\.txt: No space left on device \\(left out of the archive; oncpu\\.folded has every sample\\)$" \
	"$TEST_TMP/full.out"
check_eq "the archive has the rest, and no cut perf.data.txt" "manifest.json oncpu.folded" \
	"$(unzip -Z1 "$TEST_TMP/fullout/f.zip" 2>/dev/null | grep -E '^(manifest\.json|oncpu\.folded|perf\.data\.txt)$' | sort | xargs)"
# Without perf.data.txt, report and convert take oncpu.folded's samples.
fsamples=$(unzip -p "$TEST_TMP/fullout/f.zip" oncpu.folded | awk '{ s += $NF } END { print s + 0 }')
check_eq "report: the CPU samples of oncpu.folded" "CPU samples: $fsamples in oncpu.folded" \
	"$("$TRACERIG" report "$TEST_TMP/fullout/f.zip" 2>&1 | grep '^CPU samples:')"
mkdir -p "$TEST_TMP/conv"
"$TRACERIG" convert "$TEST_TMP/fullout/f.zip" --to folded -o "$TEST_TMP/conv" >/dev/null 2>&1
check_eq "convert: its cpu stacks are oncpu.folded's" "$fsamples" \
	"$(awk '{ s += $NF } END { print s + 0 }' "$TEST_TMP/conv/f.cpu.folded" 2>/dev/null)"
# With it, perf.data.txt's, not both.
"$TRACERIG" convert "$TEST_TMP/t.zip" --to folded -o "$TEST_TMP/conv" >/dev/null 2>&1
check_eq "convert: from perf.data.txt, oncpu.folded not added again" "$total" \
	"$(awk '{ s += $NF } END { print s + 0 }' "$TEST_TMP/conv/t.cpu.folded" 2>/dev/null)"

run_tracerig -c "$profile" --set ebpf.oncpu_script=no -o "$TEST_TMP/noscript.zip" -- "$burn" -n 2
check_eq "oncpu_script = no: exit 0" 0 "$rc"
check "oncpu_script = no: no perf.data.txt" sh -c "! unzip -l '$TEST_TMP/noscript.zip' | grep -q 'data\.txt'"
check "oncpu_script = no: oncpu.folded still" sh -c "unzip -l '$TEST_TMP/noscript.zip' | grep -q oncpu.folded"

# With perf_events in the same session, the wall view takes one source of
# on-CPU time (perf_events', flushed first), not both: the same CPU time
# would count twice.
if [ -e "$top_builddir/plugins/perf_events/perf_events.la" ]; then
	printf '[tracerig]\nname = both\n[perf_events]\nfrequency = 99\n[ebpf]\ncallchain = cfi\noncpu = yes\n' \
		>"$TEST_TMP/both.ini"
	run_tracerig -c "$TEST_TMP/both.ini" -o "$TEST_TMP/both.trace.zip" -- "$burn" -n 5
	check_eq "perf_events and the sampler together: exit 0" 0 "$rc"
	unzip_archive "$TEST_TMP/both.trace.zip" "$TEST_TMP/both"
	check_grep "the wall view's log says which on-CPU time it took" \
		"wall view: on-CPU time from perf_events's cpu\\.folded; ebpf's oncpu\\.folded is not added" \
		"$TEST_TMP/both/tracerig.log"
	check_grep "and the wall view reads cpu.folded only, for on-CPU time" \
		'wall\.folded: [0-9]+ lines of cpu\.folded \(on-CPU' "$TEST_TMP/both/tracerig.log"
	check_no_grep "not oncpu.folded" 'wall\.folded: [0-9]+ lines of oncpu\.folded' \
		"$TEST_TMP/both/tracerig.log"
	# perf.data.txt is perf_events' (its event list is its own); the BPF
	# samples go beside it, where PerfView's readers find *.data.txt too.
	check "the sampler's perf script text is oncpu.data.txt" test -s "$TEST_TMP/both/oncpu.data.txt"
	check_grep "and the log says why" "perf\\.data\\.txt is another backend's: the on-CPU BPF samples are in oncpu\\.data\\.txt" \
		"$TEST_TMP/both/tracerig.log"
	check_eq "perf.data.txt has perf_events' samples (99 Hz)" "" \
		"$(grep -E ' cpu-clock: $' "$TEST_TMP/both/perf.data.txt" | grep -v ' 10101010 cpu-clock: $' | head -1)"
else
	skip "perf_events and the sampler together" "perf_events is not built"
fi
done_testing

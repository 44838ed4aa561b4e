#!/usr/bin/env bash
# ebpf benchmark: what tracing off-CPU time costs per context switch.
# Two processes pinned to one CPU ping-pong a byte over pipes (every hand-off
# is a context switch; bench/ebpf/pingpong.c), side by side in one run:
#   - nothing attached;
#   - tracerig -c offcpu (every interval, kernel + user stacks, system-wide);
#   - tracerig -c offcpu with sample_period_us=1000 (the low-overhead mode);
#   - tracerig -c offcpu-dwarf (callchain = dwarf: user registers and 8 KiB
#     of user stack copied at switch-out, unwound in user space), every
#     interval and with sample_period_us=1000;
#   - tracerig -c offcpu-cfi (callchain = cfi: user stacks walked in the
#     kernel by tables compiled from the objects' CFI, no copy);
#   - libbpf-tools' offcputime (Debian libbpf-tools), system-wide, same work.
# Prints a Markdown section: nanoseconds per context switch (median of REPS
# runs of ROUNDS round trips) and the cost added by each tracer, and the
# BPF program's own run time per run (kernel.bpf_stats_enabled), steadier
# on a shared machine than the workload's time.
#
#   bash bench/ebpf/run.sh [BUILDDIR]      (as root)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-${BUILD:-.}}" && pwd)
ROUNDS=${ROUNDS:-100000}
REPS=${REPS:-5}
bench=bench/ebpf
load=$(cut -d' ' -f1 /proc/loadavg)
. "$top/bench/ebpf/lib.sh"
need_offcputime
${CC:-cc} -O2 -o "$tmp/pingpong" "$top/bench/ebpf/pingpong.c"

# samples CONFIG: REPS runs of the workload, ns per switch appended to $tmp/CONFIG
samples() {
	for _ in $(seq "$REPS"); do "$tmp/pingpong" "$ROUNDS" 0; done >>"$tmp/$1"
}
median() { sort -n "$tmp/$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# stop_tracer: Ctrl-C, as a user would
stop_tracer() {
	kill -INT "$tracer"
	wait "$tracer" || true
	tracer=""
	sleep 1 # let the CPU settle before the next configuration
}
# tracerig_args CONFIG: the profile and settings of a tracerig configuration
tracerig_args() {
	case $1 in
	full) echo "-c $top/conf/profiles/offcpu.ini" ;;
	sampled) echo "-c $top/conf/profiles/offcpu.ini --set ebpf.sample_period_us=1000" ;;
	dwarf) echo "-c $top/conf/profiles/offcpu-dwarf.ini" ;;
	dwarf_sampled) echo "-c $top/conf/profiles/offcpu-dwarf.ini --set ebpf.sample_period_us=1000" ;;
	cfi) echo "-c $top/conf/profiles/offcpu-cfi.ini" ;;
	esac
}
# prog_cost CONFIG NAME: the run time and runs of the attached BPF program
# NAME (bpf_stats), appended to $tmp/CONFIG.bpf as "ns runs"
prog_cost() {
	bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name") == sys.argv[1] and p.get("run_cnt"):
        print(p["run_time_ns"], p["run_cnt"])
        break' "$2" >>"$tmp/$1.bpf" || true
}
# ns_per_run CONFIG: the BPF program's mean run time over CONFIG's runs
ns_per_run() {
	[ -s "$tmp/$1.bpf" ] || { echo "—"; return; }
	awk '{ t += $1; n += $2 } END { if (n) printf "%.0f", t / n; else printf "?" }' "$tmp/$1.bpf" 2>/dev/null || echo "?"
}
sysctl -q -w kernel.bpf_stats_enabled=1 >/dev/null 2>&1 || true
n_tr=0
run_config() {
	case $1 in
	base) samples base; return ;;
	offcputime)
		"$offcputime" 600 >"$tmp/o.out" 2>&1 &
		tracer=$!
		prog=sched_switch
		wait_prog "$prog" ;;
	*)
		n_tr=$((n_tr + 1))
		# shellcheck disable=SC2046 # the arguments are words
		"$tracerig" $(tracerig_args "$1") -d 600 -o "$tmp/$1.$n_tr.trace.zip" >"$tmp/t.out" 2>&1 &
		tracer=$!
		wait_prog 'offcpu_switch_[a-z]*'
		# System-wide, cfi first loads the tables of every process
		# running; a service traced is one that was running.
		sleep 2
		prog=$(bpftool prog show 2>/dev/null | sed -n 's/.* name \(offcpu_switch_[a-z]*\) .*/\1/p' | head -1) ;;
	esac
	samples "$1"
	prog_cost "$1" "$prog"
	stop_tracer
}

# Each configuration twice, in mirrored order, so that drift over the run
# (frequency, other load) does not favour one of them.
for c in base full sampled dwarf dwarf_sampled cfi offcputime \
	offcputime cfi dwarf_sampled dwarf sampled full base; do
	run_config "$c"
done
base=$(median base) tr_full=$(median full) tr_sampled=$(median sampled) oc=$(median offcputime)
tr_dwarf=$(median dwarf) tr_dwarf_sampled=$(median dwarf_sampled) tr_cfi=$(median cfi)

a=$(ls "$tmp"/full.*.trace.zip | head -1)
unzip -p "$a" tracerig.log >"$tmp/a.log" 2>/dev/null || true
unzip -p "$a" manifest.json >"$tmp/a.json" 2>/dev/null || true
tr_hook=$(sed -n 's/.*hooked with \([a-z_/]*\).*/\1/p' "$tmp/a.log" | head -1)
switches=$(sed -n 's/.*"switches": *\([0-9]*\).*/\1/p' "$tmp/a.json" | head -1)
dropped=$(grep -o '"[a-z]*_stacks_dropped": *[0-9]*' "$tmp/a.json" | awk -F': *' '{ s += $2 } END { print s + 0 }')
# counter NAME: its value in the (first) dwarf archive's manifest
unzip -p "$(ls "$tmp"/dwarf.*.trace.zip | head -1)" manifest.json >"$tmp/d.json" 2>/dev/null || true
counter() { sed -n "s/.*\"$1\": *\([0-9]*\).*/\1/p" "$tmp/d.json" | head -1; }
d_sent=$(counter dwarf_copies_sent) d_ring=$(counter dwarf_copies_lost_ring_full)
d_slot=$(counter dwarf_copies_lost_no_slot) d_cut=$(counter dwarf_stacks_cut_short)
# share_main CONFIG: of pingpong's blocked time in CONFIG's first archive,
# the percentage whose user stack reaches main (the caller of read/write)
share_main() {
	unzip -p "$(ls "$tmp"/"$1".*.trace.zip | head -1)" offcpu.folded 2>/dev/null |
		awk '/^pingpong/ { all += $NF; if ($0 ~ /;main;/) m += $NF }
			END { if (all) printf "%.1f", 100 * m / all; else printf "?" }'
}
unzip -p "$(ls "$tmp"/cfi.*.trace.zip | head -1)" manifest.json >"$tmp/c.json" 2>/dev/null || true
ccounter() { sed -n "s/.*\"$1\": *\([0-9]*\).*/\1/p" "$tmp/c.json" | head -1; }
c_walks=$(ccounter cfi_walks) c_cut=$(ccounter cfi_stacks_cut_short)
c_none=$(ccounter cfi_stacks_no_table) c_lost=$(ccounter user_stacks_dropped)

row() { awk -v n="$1" -v v="$2" -v b="$base" 'BEGIN { printf "| %s | %.0f | %+.0f |\n", n, v, v - b }'; }
echo "## ebpf: cost per context switch"
echo
echo "Two processes pinned to one CPU hand a byte back and forth over pipes"
echo "($ROUNDS round trips; median of 2 x $REPS runs, configurations in mirrored"
echo "order); every tracer system-wide, recording kernel and user stacks."
echo "tracerig hooked \`${tr_hook:-?}\`."
echo
echo '    bash bench/ebpf/run.sh'
echo
echo "| configuration | ns per context switch | added ns | BPF ns per run | blocked time reaching main |"
echo "|---|---|---|---|---|"
row() {
	awk -v n="$1" -v v="$2" -v b="$base" -v r="$(ns_per_run "$3")" -v m="$4" \
		'BEGIN { printf "| %s | %.0f | %+.0f | %s | %s |\n", n, v, v - b, r, m }'
}
row "no tracing" "$base" none "—"
row "tracerig \`-c offcpu\` (every interval)" "$tr_full" full "$(share_main full) %"
row "tracerig \`-c offcpu\`, \`sample_period_us=1000\`" "$tr_sampled" sampled "$(share_main sampled) %"
row "tracerig \`-c offcpu-dwarf\` (every interval)" "$tr_dwarf" dwarf "$(share_main dwarf) %"
row "tracerig \`-c offcpu-dwarf\`, \`sample_period_us=1000\`" "$tr_dwarf_sampled" dwarf_sampled "$(share_main dwarf_sampled) %"
row "tracerig \`-c offcpu-cfi\` (every interval)" "$tr_cfi" cfi "$(share_main cfi) %"
row "libbpf-tools \`offcputime\`" "$oc" offcputime "(not aggregated by caller)"
echo
echo "tracerig saw ${switches:-?} context switches and lost ${dropped:-?} stacks (its stack table:"
echo "16384 entries, stored by content hash, so stacks are lost only when it is full;"
echo "offcputime's stack map holds 1024 and drops a stack whose bucket is taken)."
echo "The \"no tracing\" time moves between runs of this shared machine (946 ns on an"
echo "earlier day): compare the rows of one run.  The sampling mode takes the stacks"
echo "of a thread with probability min(1, its mean recent blocked time / 1 ms) and"
echo "weights what it keeps by the inverse, so totals stay right."
echo
echo "offcpu-dwarf copies the user registers and 8 KiB of user stack at each captured"
echo "switch-out and unwinds them in user space while collecting: in its every-interval"
echo "run ${d_sent:-?} copies were sent, ${d_ring:-?} lost to a full ring, ${d_slot:-?} found no"
echo "slot, and ${d_cut:-?} stacks were cut short by the copy's size.  Per interval"
echo "it reads up to 8 KiB of user stack and copies it twice more (into the thread's"
echo "slot, into the ring): every interval costs $(awk -v d="$tr_dwarf" -v f="$tr_full" -v b="$base" \
	'BEGIN { if (f > b) printf "%.1f", (d - b) / (f - b); else printf "?" }') times what fp adds here, and"
echo "copies the unwinding in user space has no room for count, with their time, as"
echo "user stacks lost.  Sampled, only the captured intervals pay for the copy."
echo
echo "offcpu-cfi walks the same stacks in the BPF program by tables compiled from"
echo "the objects' CFI: in its run ${c_walks:-?} stacks were walked, ${c_none:-?} kept their"
echo "innermost frame only (the process's tables not loaded yet), ${c_cut:-?} were cut"
echo "short at code mapped after the tables were loaded, and ${c_lost:-?} user stacks were"
echo "lost to a full stack table.  \"BPF ns per run\" is the sched_switch program's own"
echo "run time per run from kernel.bpf_stats_enabled (for tracerig, every switch on"
echo "the machine, traced or not; offcputime's program likewise)."
echo
echo "The load average was $load when the run started (other jobs on the machine"
echo "make every row slower alike)."

# Helpers for the ebpf integration tests (sourced after tests/lib.sh).
workload="$top_builddir/tests/ebpf/workload"
offcpu_profile="$top_srcdir/conf/profiles/offcpu.ini"

need_ebpf() {
	need_root
	[ -e "$top_builddir/plugins/ebpf/ebpf.la" ] || skip_all "the ebpf backend is not built"
	[ -r /sys/kernel/btf/vmlinux ] || skip_all "the kernel exposes no BTF"
	[ -x "$workload" ] || skip_all "tests/ebpf/workload is not built"
}

# fn_total FOLDED FUNCTION [KERNEL_FRAME_REGEX]: microseconds of the lines
# that have FUNCTION as a frame (and a kernel frame matching the regex).
fn_total() {
	awk -v fn="$2" -v kre="${3:-}" '
	{
		w = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		n = split(line, f, ";"); has = 0; k = (kre == "")
		for (i = 1; i <= n; i++) {
			if (f[i] == fn) has = 1
			if (kre != "" && f[i] ~ kre) k = 1
		}
		if (has && k) s += w
	}
	END { printf "%d\n", s }' "$1"
}

# measured_us TIMES FUNCTION: what the workload's thread measured inside
# FUNCTION (workload -t TIMES), in microseconds.
measured_us() { awk -v fn="$2" '$1 == fn { print $2 }' "$1"; }

# check_within NAME PLAN_MS ACTUAL_US MEASURED_US [LOST_MS]: the traced
# time is at least the plan (-2 %) and at most what the thread measured
# itself (+1 ms of rounding).  Both bounds hold whatever the load: a
# blocked interval lies inside the call that the thread timed, and a
# thread waits only once the one it waits for is asleep
# (tests/ebpf/blockers.c).  LOST_MS comes off the plan: intervals the
# session reported lost (lost_ms).
check_within() {
	if awk -v e="$2" -v a="$3" -v m="${4:-0}" -v l="${5:-0}" 'BEGIN { exit !(m > 0 && a >= (e - l) * 1000 * 0.98 && a <= m + 1000) }'; then
		ok "$1"
	else
		not_ok "$1" "expected at least $2 ms (-2%${5:+, less $5 ms of lost intervals}) and at most the measured $(( ${4:-0} / 1000 )) ms, got $(( ${3:-0} / 1000 )) ms"
	fi
}

# lost_ms MANIFEST CALL_MS: what the intervals a session lost without
# guessing (intervals_lost_return_unseen: the thread got its CPU back from
# a task this kernel hides from every tracer, so the interval's end is
# unknown) may have taken of a function whose calls last CALL_MS: each
# lost interval at most one call.  0 when none was lost.
lost_ms() {
	python3 -c 'import json, sys
p = [p for p in json.load(open(sys.argv[1]))["plugins"] if p["name"] == "ebpf"][0]
print(p["counters"].get("intervals_lost_return_unseen", 0) * int(sys.argv[2]))' "$1" "$2"
}

# calls_over_us TIMES FUNCTION MIN_US: the total of FUNCTION's calls (each
# one's time, "calls:FUNCTION" of workload -t) that the thread measured at
# MIN_US or longer, in microseconds.  A loaded machine stretches a 2 ms
# sleep (the thread waits for a CPU after its wake-up, and the interval
# lasts until it runs); only such calls can hold an interval of MIN_US.
calls_over_us() {
	awk -v fn="calls:$2" -v min="$3" '
	$1 == fn { for (i = 2; i <= NF; i++) if ($i >= min) s += $i }
	END { printf "%d\n", s }' "$1"
}

# check_cut_below NAME MIN_US ACTUAL_US TIMES FUNCTION: a min_block cut at
# MIN_US kept of FUNCTION (ACTUAL_US) at most the calls the thread measured
# at MIN_US or longer (+1 ms of rounding): 0 on an idle machine, and far
# less than every call's time (what a cut that drops nothing would keep) on
# a loaded one.
check_cut_below() {
	local over
	over=$(calls_over_us "$4" "$5" "$2")
	if awk -v a="$3" -v o="$over" 'BEGIN { exit !(a <= o + 1000) }'; then
		ok "$1"
	else
		not_ok "$1" "kept $(( ${3:-0} / 1000 )) ms, but the calls measured at $(( $2 / 1000 )) ms or longer took $(( over / 1000 )) ms in all" \
			"$(grep "^calls:$5 " "$4")"
	fi
}

# perf script's samples: "comm tid" then "ip sym" lines, innermost first;
# printed outermost first, user frames only, symbol versions dropped.
perf_stacks() {
	awk 'BEGIN { RS = "" }
	{
		n = split($0, l, "\n"); s = ""
		for (i = n; i >= 2; i--) {
			sub(/^[ \t]+/, "", l[i])
			ip = l[i]; sub(/ .*/, "", ip)
			if (ip ~ /^ffffffff/) continue
			sym = l[i]; sub(/^[^ ]+ /, "", sym)
			s = s (s == "" ? "" : ";") sym
		}
		print s
	}' "$1" | sed -E 's/@[^;]*//g'
}

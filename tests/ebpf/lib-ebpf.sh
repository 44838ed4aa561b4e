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

# check_within NAME PLAN_MS ACTUAL_US MEASURED_US: the traced time is at
# least the plan (-2 %) and at most what the thread measured itself (+1 ms
# of rounding).  Both bounds hold whatever the load: a blocked interval
# lies inside the call that the thread timed, and a thread waits only once
# the one it waits for is asleep (tests/ebpf/blockers.c).
check_within() {
	if awk -v e="$2" -v a="$3" -v m="${4:-0}" 'BEGIN { exit !(m > 0 && a >= e * 1000 * 0.98 && a <= m + 1000) }'; then
		ok "$1"
	else
		not_ok "$1" "expected at least $2 ms (-2%) and at most the measured $(( ${4:-0} / 1000 )) ms, got $(( ${3:-0} / 1000 )) ms"
	fi
}

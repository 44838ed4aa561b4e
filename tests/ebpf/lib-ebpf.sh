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

# check_near NAME EXPECTED_MS ACTUAL_US PLUS_PERCENT: within -2 % / +PLUS %.
check_near() {
	if awk -v e="$2" -v a="$3" -v p="$4" 'BEGIN { a /= 1000; exit !(a >= e * 0.98 && a <= e * (1 + p / 100)) }'; then
		ok "$1"
	else
		not_ok "$1" "expected $2 ms (-2%/+$4%), got $(( ${3:-0} / 1000 )) ms"
	fi
}

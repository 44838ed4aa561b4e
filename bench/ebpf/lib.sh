# What the ebpf benchmarks share (sourced with top, build and the bench's
# name set): the tools (offcputime through need_offcputime), a scratch
# directory, and waiting for BPF programs.
tracerig=${TRACERIG:-$build/tracerig}
export TRACERIG_PLUGIN_PATH=${TRACERIG_PLUGIN_PATH:-$build/plugins}
[ -x "$tracerig" ] || { echo "$bench: $tracerig is missing (build first)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$bench: run as root" >&2; exit 1; }
command -v bpftool >/dev/null || PATH=$PATH:/usr/sbin

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracerig-${bench//\//-}.XXXXXX")
tracer=""
cleanup() {
	[ -n "$tracer" ] && kill -KILL "$tracer" 2>/dev/null
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# need_offcputime: sets offcputime (OFFCPUTIME, or libbpf-tools'), or
# exits; called only by the benches that compare with it, so that the
# others run without libbpf-tools.
need_offcputime() {
	offcputime=${OFFCPUTIME:-/usr/sbin/offcputime}
	[ -x "$offcputime" ] ||
		{ echo "$bench: needs $offcputime (apt-get install libbpf-tools)" >&2; exit 1; }
}

# wait_prog NAME: until a BPF program of that name is attached
wait_prog() {
	for _ in $(seq 100); do
		bpftool prog show 2>/dev/null | grep -q " name $1 " && return 0
		sleep 0.1
	done
	echo "$bench: $1 never showed up" >&2
	return 1
}

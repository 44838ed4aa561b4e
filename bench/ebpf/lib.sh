# What the ebpf benchmarks share (sourced with top, build and the bench's
# name set): the tools, a scratch directory, and waiting for BPF programs.
tracerig=${TRACERIG:-$build/tracerig}
export TRACERIG_PLUGIN_PATH=${TRACERIG_PLUGIN_PATH:-$build/plugins}
offcputime=${OFFCPUTIME:-/usr/sbin/offcputime}
[ -x "$tracerig" ] || { echo "$bench: $tracerig is missing (build first)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$bench: run as root" >&2; exit 1; }
[ -x "$offcputime" ] || { echo "$bench: needs $offcputime (apt-get install libbpf-tools)" >&2; exit 1; }
command -v bpftool >/dev/null || PATH=$PATH:/usr/sbin

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracerig-${bench//\//-}.XXXXXX")
tracer=""
cleanup() {
	[ -n "$tracer" ] && kill -KILL "$tracer" 2>/dev/null
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# wait_prog NAME: until a BPF program of that name is attached
wait_prog() {
	for _ in $(seq 100); do
		bpftool prog show 2>/dev/null | grep -q " name $1 " && return 0
		sleep 0.1
	done
	echo "$bench: $1 never showed up" >&2
	return 1
}

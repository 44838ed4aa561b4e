#!/usr/bin/env bash
# ebpf benchmark: off-CPU frames of code gone by the end.
# tests/ebpf/late/lateblock.c waits in its own early_wait, in late_wait of a
# library it dlopen()s, and (after exec) in afterblock's after_wait, then
# exits.  Share of its off-CPU time whose stack names the waiting function:
# tracerig launching it, libbpf-tools' offcputime system-wide around it.
#
#   bash bench/ebpf_late/run.sh [BUILDDIR]      (as root)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-${BUILD:-.}}" && pwd)
tracerig=${TRACERIG:-$build/tracerig}
export TRACERIG_PLUGIN_PATH=${TRACERIG_PLUGIN_PATH:-$build/plugins}
offcputime=${OFFCPUTIME:-/usr/sbin/offcputime}
[ -x "$tracerig" ] || { echo "bench/ebpf_late: $tracerig is missing (build first)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench/ebpf_late: run as root" >&2; exit 1; }
[ -x "$offcputime" ] || { echo "bench/ebpf_late: needs $offcputime (apt-get install libbpf-tools)" >&2; exit 1; }
command -v bpftool >/dev/null || PATH=$PATH:/usr/sbin

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracerig-bench-ebpf-late.XXXXXX")
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
	echo "bench/ebpf_late: $1 never showed up" >&2
	return 1
}

# tests/ebpf/late/lateblock.c waits in its own early_wait, in late_wait of a
# library it dlopen()s, and (after exec) in afterblock's after_wait, then
# exits.  Share of its off-CPU time whose stack names the waiting function:
# tracerig launching it, offcputime running system-wide around it.
src="$top/tests/ebpf/late"
${CC:-cc} -O1 -fno-omit-frame-pointer -o "$tmp/lateblock" "$src/lateblock.c" -ldl
${CC:-cc} -O1 -fno-omit-frame-pointer -shared -fPIC -o "$tmp/liblateblock.so" "$src/liblateblock.c"
${CC:-cc} -O1 -fno-omit-frame-pointer -o "$tmp/afterblock" "$src/afterblock.c"
late=("$tmp/lateblock" "$tmp/liblateblock.so" "$tmp/afterblock")
"$tracerig" -c "$top/conf/profiles/offcpu.ini" -o "$tmp/late.trace.zip" -- "${late[@]}" \
	>"$tmp/t.out" 2>&1
unzip -p "$tmp/late.trace.zip" offcpu.folded >"$tmp/late.folded"
tr_named=$(awk '/^(lateblock|afterblock|tracerig);/ {
	w = $NF; t += w; if ($0 ~ /;(early|late|after)_wait;/) n += w }
	END { printf "%.1f", t ? 100 * n / t : 0 }' "$tmp/late.folded")
"$offcputime" 8 >"$tmp/oc-late.out" 2>&1 &
tracer=$!
wait_prog sched_switch
"${late[@]}"
wait "$tracer" || true
tracer=""
# offcputime prints a stack, then "-  comm (pid)", then the microseconds.
oc_named=$(awk '
	/^    -  +[^ ]+ \([0-9]+\)$/ { comm = $2; next }
	/^        [0-9]+$/ {
		if (comm == "lateblock" || comm == "afterblock") {
			t += $1; if (named) n += $1
		}
		named = 0; comm = ""; next
	}
	/^    (early|late|after)_wait/ { named = 1 }
	/^$/ { named = 0 }
	END { printf "%.1f", t ? 100 * n / t : 0 }' "$tmp/oc-late.out")
echo "## ebpf: off-CPU stacks of code gone by the end"
echo
echo "\`tests/ebpf/late/lateblock\` waits in its own function, then in a function of a"
echo "library it \`dlopen()\`s, then \`exec()\`s a program that waits in its own, and exits"
echo "before the stacks are named.  Share of its off-CPU time whose stack names the"
echo "waiting function (tracerig launching it; offcputime system-wide around it):"
echo
echo '    bash bench/ebpf_late/run.sh'
echo
echo "| tool | off-CPU time with the waiting function named |"
echo "|---|---|"
echo "| tracerig \`-c offcpu\` (side-band recorded by the core) | ${tr_named}% |"
echo "| libbpf-tools \`offcputime\` | ${oc_named}% |"

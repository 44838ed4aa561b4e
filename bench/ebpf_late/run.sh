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
bench=bench/ebpf_late
. "$top/bench/ebpf/lib.sh"
need_offcputime

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

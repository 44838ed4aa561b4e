#!/usr/bin/env bash
# mapharvest benchmark: N Node.js processes, each in its own PID + mount
# namespace with a private /tmp (a "container"), half of them exiting in the
# middle of a 5 s session.  Side by side on the same processes:
#   - tracerig [mapharvest] -p <all>: polls every 500 ms, copies appends only;
#   - a naive sidecar loop copying every map in full every 500 ms (cp through
#     /proc/PID/root, which also follows any planted symlink);
#   - perfcollect's way: one copy of the maps when the session ends.
# Prints a Markdown section: maps kept, bytes, CPU time spent collecting.
#
#   bash bench/mapharvest/run.sh [BUILDDIR]      (as root)
set -euo pipefail
build=$(cd "${1:-${BUILD:-.}}" && pwd)
tracerig=${TRACERIG:-$build/tracerig}
export TRACERIG_PLUGIN_PATH=${TRACERIG_PLUGIN_PATH:-$build/plugins}
N=${N:-12}
[ -x "$tracerig" ] || { echo "bench/mapharvest: $tracerig is missing (build first)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench/mapharvest: run as root" >&2; exit 1; }
command -v node >/dev/null || { echo "bench/mapharvest: needs node (apt-get install nodejs)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracerig-bench-mh.XXXXXX")
pids=()
launchers=()
cleanup() {
	for p in "${pids[@]}" "${launchers[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# Each process JIT-compiles 3000 functions (a ~350 KB perf map), then idles
# for LIFE seconds and exits.
js='const K=3000;for(let i=0;i<K;i++){const f=new Function("x","return x*"+i+"+"+(i%7));for(let j=0;j<3000;j++)f(j);}setTimeout(()=>process.exit(0),Number(process.argv[1])*1000);'
for i in $(seq "$N"); do
	life=$(( i % 2 ? 3 : 30 ))  # odd ones exit mid-session
	unshare --mount --pid --fork --kill-child sh -c 'mount -t tmpfs tmpfs /tmp && cd /tmp && exec node --perf-basic-prof -e "$1" "$2"' \
		sh "$js" "$life" >/dev/null 2>&1 &
	launchers+=($!)
done
# Host PIDs of the node processes, once each has written its map.
for l in "${launchers[@]}"; do
	p=""
	for _ in $(seq 200); do
		for c in $(pgrep -P "$l") $(pgrep -P "$(pgrep -P "$l" | head -1)" 2>/dev/null); do
			[ "$(cat /proc/$c/comm 2>/dev/null)" = node ] && p=$c
		done
		[ -n "$p" ] && [ -s "/proc/$p/root/tmp/perf-1.map" ] && break
		sleep 0.05
	done
	pids+=("$p")
done
sleep 0.5 # the maps are complete (compilation done)

printf '[tracerig]\nname = bench\n[mapharvest]\n' >"$tmp/p.ini"
list=$(IFS=,; echo "${pids[*]}")

# 1. tracerig, 5 s.
/usr/bin/time -f '%e %U %S' -o "$tmp/t.time" "$tracerig" -c "$tmp/p.ini" -p "$list" -d 5 \
	-o "$tmp/b.trace.zip" >"$tmp/t.out" 2>&1 &
tpid=$!
# 2. the naive sidecar loop, concurrently, 5 s.
cat >"$tmp/naive.sh" <<'SH'
end=$((SECONDS + 5)); mkdir -p "$1/naive"
while [ $SECONDS -lt $end ]; do
	for p in ${2//,/ }; do cp "/proc/$p/root/tmp/perf-1.map" "$1/naive/perf-$p.map" 2>/dev/null; done
	sleep 0.5
done
SH
/usr/bin/time -f '%e %U %S' -o "$tmp/n.time" bash "$tmp/naive.sh" "$tmp" "$list"
wait "$tpid"
# 3. one copy at the end.
mkdir -p "$tmp/once"
/usr/bin/time -f '%e %U %S' -o "$tmp/o.time" bash -c \
	'for p in ${2//,/ }; do cp "/proc/$p/root/tmp/perf-1.map" "$1/once/perf-$p.map" 2>/dev/null; done; true' \
	sh "$tmp" "$list"

mkdir -p "$tmp/b"
unzip -q -o "$tmp/b.trace.zip" -d "$tmp/b"
count() { ls "$1" 2>/dev/null | grep -c '^perf-.*\.map$' || true; }
bytes() { cat "$1"/perf-*.map 2>/dev/null | wc -c; }
cpu() { awk '{printf "%.3f", $2 + $3}' "$1"; }
copied=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' "$tmp/b/tracerig.log" | tail -1)

echo "## mapharvest: JIT maps of $N containerized Node.js processes"
echo
echo "\`bash bench/mapharvest/run.sh\` (N=$N; half the processes exit during the 5 s session;"
echo "each in its own PID + mount namespace with a private /tmp, ~350 KB perf map each)."
echo
echo "| method | maps kept (of $N) | map bytes kept | CPU time collecting (user+sys s) |"
echo "|---|---|---|---|"
echo "| tracerig [mapharvest], poll 500 ms, appends only (whole tracerig process) | $(count "$tmp/b") | $(bytes "$tmp/b") | $(cpu "$tmp/t.time") |"
echo "| sidecar loop: cp every map every 500 ms | $(count "$tmp/naive") | $(bytes "$tmp/naive") | $(cpu "$tmp/n.time") |"
echo "| perfcollect-style: cp once at the end | $(count "$tmp/once") | $(bytes "$tmp/once") | $(cpu "$tmp/o.time") |"
echo
echo "tracerig copied ${copied:-?} bytes in all (each file once, appends after);"
echo "the loop's copies follow symbolic links planted in a container, tracerig's never do."
echo

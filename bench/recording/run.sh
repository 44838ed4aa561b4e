#!/usr/bin/env bash
# Symbols from the recording, side by side with stock `perf script` on the
# same perf.data (the archive's own): for each workload, how many frames
# each names, how many samples end in an [unknown] leaf, and how long each
# takes to turn perf.data into text: perf, `perf script` with perfcollect's
# fields; tracerig, perf_events' conversion in its flush (from tracerig.log)
# and the same conversion run alone on the same file right after perf
# script, from a cold start as perf's (bench/perf_events/convert, built by
# `make check`: perf.data.txt and cpu.folded).  Workloads:
#   late     a program that dlopen()s its hot library late, then exec()s
#            another and exits (tests/perf_events/late/)
#   python   python3 spinning, then importing hashlib (libcrypto loads
#            late) and hashing, launched by tracerig, gone at the end
#   system   3 s system-wide while short-lived processes come and go
#   spin     bench/perf_events/spin.c, 2 threads, at 19999 Hz
#
#   bash bench/recording/run.sh [BUILDDIR]      (as root)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bench=bench/recording
. "$top/bench/perf_events/lib.sh"
convert=$build/bench/perf_events/convert
[ -x "$convert" ] || make -s -C "$build" bench/perf_events/convert >&2 ||
	{ echo "bench/recording: cannot build $convert" >&2; exit 1; }
export TMPDIR="$tmp"
cc=${CC:-cc}
$cc -O1 -fno-omit-frame-pointer -o "$tmp/late" "$top/tests/perf_events/late/late.c" -ldl
$cc -O1 -fno-omit-frame-pointer -shared -fPIC -o "$tmp/liblate.so" "$top/tests/perf_events/late/liblate.c"
$cc -O1 -fno-omit-frame-pointer -o "$tmp/after" "$top/tests/perf_events/late/after.c"
$cc -O2 -g -fno-omit-frame-pointer -pthread -o "$tmp/spin" "$top/bench/perf_events/spin.c"
cat >"$tmp/py.py" <<'PY'
import time
t = time.time()
while time.time() - t < 0.5:
    pass
import hashlib
data = b"x" * 65536
t = time.time()
while time.time() - t < 1.0:
    hashlib.sha256(data).digest()
PY

measure() { # NAME ARCHIVE: one table row
	local name=$1 dir="$tmp/x-$1" t0 t1 t2
	rm -rf "$dir" && mkdir -p "$dir" && unzip -q "$2" -d "$dir"
	t0=$(date +%s%N)
	perf script -i "$dir/perf.data" -F comm,pid,tid,cpu,time,period,event,ip,sym,dso \
		>"$dir/perf.txt" 2>/dev/null
	t1=$(date +%s%N)
	"$convert" "$dir/perf.data" "$dir/alone.txt" "$dir/alone.folded" >/dev/null
	t2=$(date +%s%N)
	python3 - "$name" "$dir" $(((t1 - t0) / 1000000)) $(((t2 - t1) / 1000000)) <<'PY'
import re, sys
name, d, perf_ms, alone_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
frame = re.compile(r'^\s+([0-9a-f]+) (.*?) \((.*)\)$')
def count(path):
    named = frames = unknown_leaf = samples = 0
    first = False
    for line in open(path, errors='replace'):
        if line and not line[0].isspace() and line.strip():
            samples += 1
            first = True
            continue
        m = frame.match(line.rstrip('\n'))
        if not m:
            continue
        frames += 1
        # perf's bare "@plt" (a PLT entry of no symbol) names no function.
        ok = m.group(2) not in ('[unknown]', '@plt')
        named += ok
        if first and not ok:
            unknown_leaf += 1
        first = False
    return samples, frames, named, unknown_leaf
ts, tf, tn, tu = count(f'{d}/perf.data.txt')
ps, pf, pn, pu = count(f'{d}/perf.txt')
# perf_events' conversion: from its flush to the line it logs after it.
start = end = None
for line in open(f'{d}/tracerig.log', errors='replace'):
    parts = line.split(None, 3)
    if len(parts) < 4:
        continue
    if parts[2] == 'perf_events:' and parts[3].startswith('flushing'):
        start = float(parts[0])
    elif start and parts[2] == 'perf_events:' and ' frames (' in parts[3]:
        end = float(parts[0])
        break
conv = round((end - start) * 1000) if start and end else '?'
ratio = f"{perf_ms / alone_ms:.1f}x" if alone_ms else '?'
print(f"| {name} | {ts} | {pn} of {pf} | {tn} of {tf} | {pu} | {tu} | {perf_ms} | {conv} | {alone_ms} | {ratio} |")
PY
}

echo "## Symbols from the recording: tracerig's perf.data.txt vs \`perf script\`"
echo
echo "Reproduce: \`bash bench/run.sh recording\` (or \`bash bench/recording/run.sh BUILDDIR\`),"
echo "as root.  Both read the same perf.data (the"
echo "archive's); \"named\" counts frames with a function name, \"unknown leaf\" the samples"
echo "whose innermost frame has none.  Conversion: \`perf script\` with perfcollect's"
echo "fields vs perf_events' conversion in tracerig's flush (text, symbols, folded counts;"
echo "the session has read the objects already), and vs the same conversion run alone"
echo "on the same perf.data right after perf script, from a cold start as perf's"
echo "(\`bench/perf_events/convert\`, whole process; \"perf / alone\" is the speed-up)."
echo
echo "| workload | samples | perf script names | tracerig names | perf unknown leaf | tracerig unknown leaf | perf script ms | tracerig conversion ms | conversion alone ms | perf / alone |"
echo "|---|---|---|---|---|---|---|---|---|---|"

"$tracerig" -q -c "$top/conf/profiles/cpu.ini" -o "$tmp/late.zip" -- "$tmp/late" "$tmp/liblate.so" "$tmp/after"
measure late "$tmp/late.zip"
"$tracerig" -q -c "$top/conf/profiles/cpu.ini" -o "$tmp/py.zip" -- python3 "$tmp/py.py"
measure python "$tmp/py.zip"
"$tracerig" -q -c "$top/conf/profiles/cpu.ini" -o "$tmp/sys.zip" -d 3 &
tr=$!
sleep 0.5
for _ in 1 2 3; do "$tmp/late" "$tmp/liblate.so"; python3 -c 'import hashlib; [hashlib.md5(b"y" * 4096).digest() for _ in range(20000)]'; done
wait "$tr"
measure system "$tmp/sys.zip"
"$tracerig" -q -c "$top/conf/profiles/cpu.ini" --set perf_events.frequency=19999 -o "$tmp/spin.zip" \
	-- "$tmp/spin" 2 2000000000 >/dev/null
measure "spin 19999 Hz" "$tmp/spin.zip"
echo
echo "Names are compared frame by frame in tests/perf_events/late.sh: every frame perf"
echo "script names, tracerig names the same (glibc aliases aside).  To compare the"
echo "conversion before and after a change on a loaded machine, count its instructions:"
echo "\`valgrind --tool=callgrind BUILDDIR/bench/perf_events/convert perf.data out.txt out.folded\`"
echo "(valgrind 3.19 has no openat2, so some objects stay unread there: compare counts"
echo "with counts, not output with output)."
say_load

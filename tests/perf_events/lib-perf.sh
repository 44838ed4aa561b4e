# Shared by the perf_events integration tests: the demo workload, a CPU
# profile, and readers of perf.data.txt.
. "$top_srcdir/tests/lib.sh"
need_root
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true

DEMO="$top_builddir/demo/tracerig-demo"
[ -x "$DEMO" ] || skip_all "demo/tracerig-demo is not built"
CPU_INI="$top_srcdir/conf/profiles/cpu.ini"

# leaf_counts TXT [PID]: "function count" for the innermost frame of every
# sample (of PID's samples only, when given), most frequent first.
leaf_counts() {
	python3 - "$1" "${2:-}" <<'PY'
import re, sys, collections
path, want = sys.argv[1], sys.argv[2]
head = re.compile(r'^(.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s+(\d+)\s+(\S+):')
counts = collections.Counter()
pid, first = None, False
for line in open(path, errors='replace'):
    m = head.match(line)
    if m:
        pid, first = m.group(2), True
        continue
    if line.startswith('\t') and first:
        first = False
        if want and pid != want:
            continue
        sym = line.strip().split(' ', 1)[1].rsplit(' (', 1)[0]
        counts[sym] += 1
for sym, n in counts.most_common():
    print(sym, n)
PY
}

# sample_pids TXT: the PIDs with samples, one per line.
sample_pids() {
	sed -n 's/^.*[[:space:]]\([0-9]\{1,\}\)\/[0-9]\{1,\}[[:space:]]\{1,\}\[[0-9]\{3\}\].*/\1/p' "$1" | sort -u
}

# mono_now: CLOCK_MONOTONIC in seconds (the clock of the samples' times).
mono_now() {
	python3 -c 'import time; print("%.9f" % time.clock_gettime(time.CLOCK_MONOTONIC))'
}

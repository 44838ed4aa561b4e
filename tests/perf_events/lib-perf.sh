# Shared by the perf_events integration tests: the demo workload, a CPU
# profile, and readers of perf.data.txt.
. "$top_srcdir/tests/lib.sh"
need_root
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true

DEMO="$top_builddir/demo/tracerig-demo"
[ -x "$DEMO" ] || skip_all "demo/tracerig-demo is not built"
CPU_INI="$top_srcdir/conf/profiles/cpu.ini"

# chain_workload NAME FP: the dwarf tests' workload (tests/perf_events/dwarf:
# main -> chain_outer -> chain_middle -> libchain.so's lib_inner ->
# lib_leaf) built -O2 -fFP-frame-pointer (FP: omit, no-omit) into the
# directory $w/NAME; $w is made first, not under /tmp (some tests mount a
# private one), and removed at exit.
chain_workload() {
	local src="$top_srcdir/tests/perf_events/dwarf"
	command -v cc >/dev/null || skip_all "no C compiler to build the workload"
	if [ -z "${w:-}" ]; then
		w=$(mktemp -d "$top_builddir/tests/perf_events/chain-work.XXXXXX")
		on_exit "rm -rf '$w'"
	fi
	mkdir -p "$w/$1" &&
		cc -O2 -f"$2"-frame-pointer -shared -fPIC -o "$w/$1/libchain.so" "$src/libchain.c" &&
		cc -O2 -f"$2"-frame-pointer -o "$w/$1/chain" "$src/chain.c" -L"$w/$1" -lchain \
			-Wl,-rpath,"$w/$1" || skip_all "cannot build the workload"
}

# without_libdw: whether this build refuses callchain = dwarf (no libdw).
without_libdw() {
	printf '[tracerig]\nrequired = perf_events\n[perf_events]\ncallchain = dwarf\n' \
		>"$TEST_TMP/probe.ini"
	! "$TRACERIG" --check -c "$TEST_TMP/probe.ini" >"$TEST_TMP/check" 2>&1 &&
		grep -q "not available in this build" "$TEST_TMP/check"
}

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

# same_frames_as_perf TXT PERF_DATA [PID[,PID...]]: every frame stock
# `perf script` names in PERF_DATA (of those PIDs' samples only, when
# given), tracerig's perf.data.txt names the same.  Samples are matched
# by thread and time.
# Prints a summary; fails on the first few differences.
same_frames_as_perf() {
	# --no-inline: perf adds a frame per inlined function, tracerig does not.
	perf script -i "$2" --no-inline -F tid,time,ip,sym,dso 2>/dev/null >"$TEST_TMP/perf-frames" || return 1
	python3 - "$1" "$TEST_TMP/perf-frames" "${3:-}" <<'PY'
import re, sys
ours_path, perf_path = sys.argv[1], sys.argv[2]
want = set(sys.argv[3].split(',')) if sys.argv[3] else None
# A task being reaped can be sampled with no thread id left: -1.
ours_head = re.compile(r'^.+?\s+(-?\d+)/(-?\d+)\s+\[\d+\]\s+(\d+\.\d+):')
perf_head = re.compile(r'^\s*(-?\d+)\s+(\d+\.\d+):')
frame = re.compile(r'^\s+([0-9a-f]+) (.*?) \((.*)\)$')
def parse(path, head, pid_group):
    samples, cur = {}, None
    for line in open(path, errors='replace'):
        m = head.match(line)
        if not m and line.strip() and not frame.match(line.rstrip('\n')):
            # A sample header this parser does not read: its frames
            # belong to no sample here, not to the one before it.
            cur = None
            continue
        if m:
            key = (m.group(pid_group + 1), m.group(pid_group + 2))
            cur = samples.setdefault(key, [])
            pid = m.group(1) if pid_group else None
            if want and pid is not None and pid not in want:
                cur = []
            continue
        f = frame.match(line.rstrip('\n'))
        if f and cur is not None:
            cur.append((int(f.group(1), 16), f.group(2), f.group(3)))
    return samples
ours = parse(ours_path, ours_head, 1)
perf = parse(perf_path, perf_head, 0)
def base(name):
    # One function under several names (glibc's __GI_/__libc_ aliases,
    # symbol versions): perf and tracerig may pick different ones.
    name = name.split('@', 1)[0]
    for prefix in ('__GI_', '__libc_', '__'):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name.lstrip('_')
named = same = aliases = 0
bad = []
for key, frames in perf.items():
    if key not in ours:
        continue
    if want and not ours[key]:
        continue
    for i, (addr, sym, dso) in enumerate(frames):
        # "@plt" is perf's name for a PLT entry of no symbol (libc's
        # IRELATIVE ones): it names no function.
        if sym in ('[unknown]', '@plt'):
            continue
        named += 1
        o = ours[key][i] if i < len(ours[key]) else None
        # perf prints these addresses relative to the object: compare names.
        if o and o[1] == sym:
            same += 1
        elif o and o[2] == dso and base(o[1]) == base(sym):
            same += 1
            aliases += 1
        elif o and o[2] == dso and sym == '_init' and o[1].endswith('@plt'):
            # perf 6.1 has no PLT symbols: its _init runs on over .plt,
            # where tracerig names the entry (clock_gettime@plt).
            same += 1
            aliases += 1
        elif len(bad) < 5:
            bad.append(f"{key} frame {i}: perf {sym} ({dso}), tracerig {o[1] + ' (' + o[2] + ')' if o else 'none'}")
print(f"{same} of the {named} frames perf names, named the same ({aliases} by another alias)")
for b in bad:
    print(b)
sys.exit(0 if named and same == named else 1)
PY
}

# build_late_workload DIR: tests/perf_events/late/ built into DIR (late,
# liblate.so, after); skips the whole test when it cannot be built.
build_late_workload() {
	local src="$top_srcdir/tests/perf_events/late"
	command -v cc >/dev/null || skip_all "no C compiler to build the workload"
	mkdir -p "$1"
	cc -O1 -fno-omit-frame-pointer -o "$1/late" "$src/late.c" -ldl &&
		cc -O1 -fno-omit-frame-pointer -shared -fPIC -o "$1/liblate.so" "$src/liblate.c" &&
		cc -O1 -fno-omit-frame-pointer -o "$1/after" "$src/after.c" ||
		skip_all "cannot build the workload"
}

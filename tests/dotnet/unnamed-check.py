#!/usr/bin/env python3
"""Splits a process's unnamed managed frames by whose they are to name.

    unnamed-check.py PERF_DATA_TXT PID ARCHIVE_DIR

A managed frame left unnamed ("[unknown]" in JIT code, named after the perf
map or the W^X double mapping as perf does, or in a ReadyToRun .dll) is
either in code the runtime reported, by a perf map entry or a jitdump
code-load record (the archive's perf-PID.map and jit-PID.dump: what
tracerig harvested), which tracerig must name; or in code the runtime never
reported (precode and call-counting pages, code it made before its maps
were on), which nothing can name.  How much of the second a run has
depends on the runtime's tiering and so on machine load; the first does
not.

Prints "SAMPLES UNNAMED REPORTED RANGES": PID's samples, those with an
unnamed managed frame, those of them with one inside a reported range,
and how many ranges the archive holds.  Then, on standard error, up to 10
of the reported frames left unnamed, with the name the runtime gave.
The jitdump layout: linux tools/perf/Documentation/jitdump-specification.txt
(a header whose size field says where records start; records of id, total
size, timestamp; JIT_CODE_LOAD = 0: pid, tid, vma, code_addr, code_size,
code_index, then the NUL-terminated name and the code)."""
import bisect
import os
import re
import struct
import sys

txt, pid, archive = sys.argv[1], sys.argv[2], sys.argv[3]


def jitdump_ranges(path):
    d = open(path, "rb").read()
    if len(d) < 40 or struct.unpack_from("<I", d, 0)[0] != 0x4A695444:
        sys.exit("%s: not a little-endian jitdump" % path)
    off = struct.unpack_from("<I", d, 8)[0]
    while off + 16 <= len(d):
        rid, total = struct.unpack_from("<II", d, off)
        if total < 16 or off + total > len(d):
            break
        if rid == 0 and total >= 56:
            addr, size = struct.unpack_from("<QQ", d, off + 32)
            end = d.find(b"\0", off + 56, off + total)
            name = d[off + 56:end if end >= 0 else off + total]
            yield addr, size, name.decode(errors="replace")
        off += total


def perfmap_ranges(path):
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) == 3:
                yield int(parts[0], 16), int(parts[1], 16), parts[2]


ranges = []
for name, reader in (("jit-%s.dump" % pid, jitdump_ranges), ("perf-%s.map" % pid, perfmap_ranges)):
    path = os.path.join(archive, name)
    if os.path.exists(path):
        ranges.extend(r for r in reader(path) if r[1] > 0)
ranges.sort()
starts = [r[0] for r in ranges]
# The longest range bounds how far back a range holding an address starts.
longest = max((r[1] for r in ranges), default=0)


def reported(addr):
    i = bisect.bisect_right(starts, addr) - 1
    while i >= 0 and starts[i] + longest > addr:
        if addr < starts[i] + ranges[i][1]:
            return ranges[i][2]
        i -= 1
    return None


header = re.compile(r"^\S")
pid_field = re.compile(r"\s(-?\d+)/-?\d+\s")
unnamed_frame = re.compile(r"^\s+([0-9a-f]+) \[unknown\] \((/tmp/perf-\d+\.map|/memfd:doublemapper.*|.*\.dll)\)$")
samples = unnamed = inside = 0
mine = False
seen_unnamed = seen_reported = False
shown = []
with open(txt, errors="replace") as f:
    for line in f:
        line = line.rstrip("\n")
        if header.match(line):
            m = pid_field.search(line)
            mine = bool(m) and m.group(1) == pid
            samples += mine
            seen_unnamed = seen_reported = False
            continue
        m = unnamed_frame.match(line) if mine else None
        if not m:
            continue
        if not seen_unnamed:
            seen_unnamed = True
            unnamed += 1
        name = reported(int(m.group(1), 16))
        if name is not None and not seen_reported:
            seen_reported = True
            inside += 1
            if len(shown) < 10:
                shown.append("%s: reported as %s" % (m.group(1), name))
print(samples, unnamed, inside, len(ranges))
for s in shown:
    print(s, file=sys.stderr)

#!/usr/bin/env python3
"""Compares the names tracerig's ReadyToRun reader (lib/r2r.c, driven by
tests/lib/r2r-lookup) gives precompiled methods with the names the runtime
itself wrote for them in its jitdump ("[PreJIT]" code-load records).

    r2r-check.py JITDUMP MAPS LOOKUP_TOOL

MAPS is a copy of the process's /proc/PID/maps.  Each PreJIT record's code
address is placed in the executable mapping of a .dll holding it; the tool
is asked for the method there.  The runtime's name is
"RET [Assembly] Type::Method(PARAMS)[PreJIT]"; the reader leaves out the
return type, the assembly and the parameters, so "Type::Method" is
compared; and the whole name with the reader's signature (TR_R2R_SIGNATURES)
against the runtime's, less "[PreJIT]".  Prints "checked N matched M
images K outside O generic G whole W" (G: matched methods of generic
instantiations, Dictionary`2[...]; W: whole names equal), then up to 20 mismatches.
The jitdump layout: linux tools/perf/Documentation/jitdump-specification.txt
(a 40-byte header whose size field says where records start; records of
id, total size, timestamp; JIT_CODE_LOAD = 0: pid, tid, vma, code_addr,
code_size, code_index, then the NUL-terminated name and the code)."""
import re
import struct
import subprocess
import sys

dump, maps, tool = sys.argv[1:4]
d = open(dump, "rb").read()
if len(d) < 40 or struct.unpack_from("<I", d, 0)[0] != 0x4A695444:
    sys.exit("%s: not a little-endian jitdump" % dump)
recs = []
o = struct.unpack_from("<I", d, 8)[0]
while o + 16 <= len(d):
    rid, size, _ = struct.unpack_from("<IIQ", d, o)
    if size < 16 or o + size > len(d):
        break  # the runtime is still writing: the last record may be partial
    if rid == 0 and size >= 56:
        addr = struct.unpack_from("<Q", d, o + 32)[0]
        end = d.find(b"\0", o + 56, o + size)
        if end > 0:
            name = d[o + 56:end].decode("utf-8", "replace")
            if name.endswith("[PreJIT]"):
                recs.append((addr, name))
    o += size

mappings = []
for line in open(maps):
    f = line.split(None, 5)
    if len(f) == 6 and f[5].strip().endswith(".dll") and "x" in f[1]:
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        mappings.append((lo, hi, int(f[2], 16), f[5].strip()))

queries = []
outside = 0
for addr, name in recs:
    for lo, hi, off, path in mappings:
        if lo <= addr < hi:
            queries.append((path, lo, off, addr, name))
            break
    else:
        outside += 1
queries.sort()
out = subprocess.run([tool], input="".join("%s %x %x %x\n" % q[:4] for q in queries),
                     capture_output=True, text=True, check=True)
got = {}
for line in out.stdout.splitlines():
    a, rest = line.split(" ", 1)
    name, _, sig = rest.partition("\t")
    got[int(a, 16)] = (name, sig)

ASM = re.compile(r" \[[A-Za-z0-9_.\-]+\] ")


def type_and_method(name):
    name = name[: -len("[PreJIT]")]
    m = ASM.search(name)
    s = name[m.end():] if m else name
    # the parameter list: the first "(" after "::" outside brackets
    depth = 0
    for k, ch in enumerate(s):
        if ch == "(" and depth == 0 and "::" in s[:k]:
            return s[:k]
        if ch in "[<":
            depth += 1
        elif ch in "]>":
            depth -= 1
    return s


matched = generic = whole = 0
bad = []
for path, lo, off, addr, name in queries:
    want = type_and_method(name)
    have, sig = got.get(addr, (None, None))
    if have == want:
        matched += 1
        generic += "`" in want.split("::")[0] and "[" in want.split("::")[0]
    else:
        bad.append("%s 0x%x: runtime %r, reader %r" % (path.rsplit("/", 1)[-1], addr, want, have))
    if sig == name[: -len("[PreJIT]")]:
        whole += 1
    elif have == want:
        bad.append("%s 0x%x: signature: runtime %r, reader %r" % (path.rsplit("/", 1)[-1], addr, name, sig))
print("checked %d matched %d images %d outside %d generic %d whole %d"
      % (len(queries), matched, len(set(q[0] for q in queries)), outside, generic, whole))
for b in bad[:20]:
    print(b)
if out.stderr:
    print(out.stderr.strip())

#!/usr/bin/env python3
"""Compares the method table tracerig's ReadyToRun reader (lib/r2r.c) reads
from an image (tests/lib/r2r-lookup --dump) with crossgen2's map of the
same image (--mapcsv: "Rva,Length,Relocs,Section,Symbol,Node Type", a
compiled method being a "MethodWithGCInfo" node whose length covers its
main body and funclets).

    r2r-map-check.py DUMP MAP_CSV

Each of crossgen2's methods must be in the table at its RVA, with its
length, under its name.  The table's lengths are those of the code (x64's
RUNTIME_FUNCTIONs, arm64's unwind data); on arm64 crossgen2 puts a
method's read-only data (jump tables, constants, which must lie within
reach of its code) right after it, in the same node, so there the map's
length may be longer: counted apart ("shorter").

crossgen2's symbol is a mangled name: every character but letters and
digits made "_", each type prefixed by its assembly but CoreLib's, generic
arguments in <...>, a generic method's own after its name, "_N" after an
overload seen before.  The table, as the runtime, leaves a generic
method's instantiation out.  So the name is compared by its parts: the
method's name ("__" + it ends the symbol, less the method's instantiation
and maybe an overload's suffix) and the owning type's own name (in the
symbol).  Prints "methods N table T rva R length L shorter S name K", then
up to 20 differences."""
import re
import sys

dump, mapcsv = sys.argv[1:3]
mangle = lambda s: re.sub(r"[^A-Za-z0-9]", "_", s)

table = {}
for line in open(dump):
    head, _, sig = line.rstrip("\n").partition("\t")
    rva, length, name = head.split(" ", 2)
    table[int(rva, 16)] = (int(length), name)

methods = []
for line in open(mapcsv):
    f = line.rstrip("\n").split(",")
    if len(f) >= 6 and f[-1] == "MethodWithGCInfo":
        methods.append((int(f[0], 16), int(f[1]), ",".join(f[4:-1])))

at_rva = right_length = shorter = right_name = 0
bad = []
for rva, length, sym in methods:
    if rva not in table:
        bad.append("0x%x %s: not in the table" % (rva, sym))
        continue
    at_rva += 1
    have_len, name = table[rva]
    if have_len == length:
        right_length += 1
    elif 0 < have_len < length:
        shorter += 1
    else:
        bad.append("0x%x %s: length %d, the table's %d" % (rva, sym, length, have_len))
    owner, _, method = name.rpartition("::")
    # the type's own name: past its namespace and enclosing types, before
    # its instantiation
    own = re.split(r"[.+]", owner.split("[", 1)[0])[-1]
    base = sym
    if base.endswith(">"):  # a generic method's instantiation
        depth = 0
        for k in range(len(base) - 1, -1, -1):
            depth += {">": 1, "<": -1}.get(base[k], 0)
            if depth == 0:
                base = base[:k]
                break
    want = "__" + mangle(method)
    if (base.endswith(want) or re.sub(r"_[0-9]+$", "", base).endswith(want)) and mangle(own) in sym:
        right_name += 1
    else:
        bad.append("0x%x: crossgen2 %r, the table %r" % (rva, sym, name))
print("methods %d table %d rva %d length %d shorter %d name %d"
      % (len(methods), len(table), at_rva, right_length, shorter, right_name))
for b in bad[:20]:
    print(b)

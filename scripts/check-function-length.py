#!/usr/bin/env python3
"""Functions longer than --lines body lines in the C sources of core/, lib/
and plugins/ (not tests, not BPF programs): at most --allow of them.

The tree's style (clang-format, Linux kernel's) puts a function's opening
and closing braces alone at column 0, so a function's body is the lines
between them; no parser needed.  Prints each long function as
"LINES FILE FUNCTION", longest first.  Exit 1 when more than --allow."""
import argparse
import glob
import os
import re
import sys

SIGNATURE = re.compile(r'^[A-Za-z_].*\(')
NAME = re.compile(r'([A-Za-z_]\w*)\s*\(')


def sources(top, paths):
    if paths:
        return paths
    found = glob.glob(os.path.join(top, 'core', '**', '*.c'), recursive=True)
    found += glob.glob(os.path.join(top, 'lib', '*.c'))
    found += glob.glob(os.path.join(top, 'plugins', '*', '*.c'))
    return sorted(f for f in found if not f.endswith('.bpf.c'))


def long_functions(path, limit):
    with open(path, errors='replace') as f:
        lines = f.read().split('\n')
    i = 0
    while i < len(lines):
        line = lines[i]
        if SIGNATURE.match(line) and not line.rstrip().endswith(';'):
            j = i
            while j < len(lines) and lines[j] != '{' and not lines[j].rstrip().endswith(';'):
                j += 1
            if j < len(lines) and lines[j] == '{':
                k = j
                while k < len(lines) and lines[k] != '}':
                    k += 1
                body = k - j - 1
                if body > limit:
                    m = NAME.search(line)
                    yield body, m.group(1) if m else line.strip()
                i = k
        i += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--lines', type=int, default=60)
    ap.add_argument('--allow', type=int, default=15)
    ap.add_argument('--top', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument('files', nargs='*')
    args = ap.parse_args()
    found = []
    for path in sources(args.top, args.files):
        for body, name in long_functions(path, args.lines):
            found.append((body, os.path.relpath(path, args.top), name))
    for body, path, name in sorted(found, reverse=True):
        print(body, path, name)
    print(f'{len(found)} functions over {args.lines} lines (at most {args.allow} allowed)')
    return 1 if len(found) > args.allow else 0


if __name__ == '__main__':
    sys.exit(main())

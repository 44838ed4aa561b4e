#!/usr/bin/env python3
"""clang-tidy (.clang-tidy) on the C lines changed since BASE, with the
compile commands the build recorded (BUILDDIR/compile_commands.json, which
scripts/build.sh writes through bear).

    scripts/check-tidy.py [-p BUILDDIR] [BASE]

Exit 0: no finding on a changed line; 1: the findings printed; 2: a tool
or the compile commands are missing; 3: BASE is not in the history."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

# The commit before .clang-format and .clang-tidy came in: lines changed
# since are checked, older ones keep what they have.
DEFAULT_BASE = "5d3de2fbab51dc81538bd8710673fb71872a8f95"


def changed_lines(top, base):
    """{absolute path: [[first, last], ...]} of the .c lines changed since base.

    -M: a file moved since (core/ into folders) counts the lines the move
    changed, not all of them, as check-format.sh's blame does."""
    out = subprocess.run(["git", "-C", top, "diff", "-M", "-U0", "--no-color", "--no-ext-diff", base,
                          "--", "*.c"],
                         check=True, capture_output=True, text=True).stdout
    lines, path = {}, None
    for line in out.splitlines():
        if line.startswith("+++ "):
            path = None if line[4:] == "/dev/null" else os.path.join(top, line[6:])
        elif line.startswith("@@") and path:
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            first, count = int(m.group(1)), int(m.group(2) or "1")
            if count:
                lines.setdefault(path, []).append([first, first + count - 1])
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-p", dest="build", default=None)
    ap.add_argument("base", nargs="?", default=DEFAULT_BASE)
    args = ap.parse_args()
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = os.path.abspath(args.build or os.path.join(top, "_build", "plain"))
    tidy = shutil.which("clang-tidy-14") or shutil.which("clang-tidy")
    if not tidy:
        print("check-tidy: needs clang-tidy 14 (apt-get install clang-tidy)", file=sys.stderr)
        return 2
    db = os.path.join(build, "compile_commands.json")
    if not os.path.exists(db):
        print(f"check-tidy: no {db}: build with scripts/build.sh, which records it when bear is "
              "installed (apt-get install bear)", file=sys.stderr)
        return 2
    if subprocess.run(["git", "-C", top, "cat-file", "-e", args.base + "^{commit}"],
                      capture_output=True).returncode:
        print(f"check-tidy: commit {args.base} is not in this clone's history (a shallow clone?)",
              file=sys.stderr)
        return 3
    with open(db) as f:
        compiled = {os.path.realpath(os.path.join(e["directory"], e["file"])) for e in json.load(f)}
    findings = 0
    for path, ranges in sorted(changed_lines(top, args.base).items()):
        if os.path.realpath(path) not in compiled:
            continue  # not built here (a backend left out): nothing to check it with
        filt = json.dumps([{"name": path, "lines": ranges}])
        run = subprocess.run([tidy, "--quiet", "-p", build, "--extra-arg=-Wno-error",
                              "--line-filter=" + filt, path],
                             capture_output=True, text=True)
        found = sum(1 for line in run.stdout.splitlines()
                    if re.search(r": (warning|error): .*\[[\w.,-]+\]$", line))
        if found:
            findings += found
            print(run.stdout, end="")
    if findings:
        print(f"check-tidy: {findings} finding(s) on lines changed since {args.base[:12]}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# The C lines changed since formatting was first checked (BASE, the commit
# before .clang-format came in), as clang-format 14 formats them under
# .clang-format: lines nobody touched since keep their layout.  Which lines
# were touched is git blame's answer (git-clang-format's diff does not
# follow a file that moved: every line of it would count), so a file moved
# since counts the lines the move changed, not all of them.
#   scripts/check-format.sh [--fix] [BASE]
# Exit 0 when they are; 1 with the diff to apply (--fix applies it); 2
# without clang-format; 3 when BASE is not in the history.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
fix=no
if [ "${1:-}" = --fix ]; then
	fix=yes
	shift
fi
base=${1:-5d3de2fbab51dc81538bd8710673fb71872a8f95}
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then
	echo "check-format: needs clang-format 14 (apt-get install clang-format)" >&2
	exit 2
fi
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
	echo "check-format: commit $base is not in this clone's history (a shallow clone?)" >&2
	exit 3
fi
# The C files that differ from BASE (as named now), each with the lines
# blame does not trace back to BASE or before: those clang-format formats.
python3 - "$cf" "$base" "$fix" <<'PY'
import difflib, subprocess, sys

cf, base, fix = sys.argv[1:]


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True)


def touched(path, n_lines):
    out = git("blame", "--line-porcelain", "^" + base, "--", path)
    if out.returncode != 0:  # not in HEAD yet: all of it is new
        return list(range(1, n_lines + 1))
    lines, final, boundary = [], None, False
    for line in out.stdout.split("\n"):
        head = line.split(" ")
        if len(head) >= 3 and len(head[0]) == 40 and head[1].isdigit():
            final, boundary = int(head[2]), False
        elif line == "boundary":
            boundary = True
        elif line.startswith("\t") and final is not None:
            if not boundary:
                lines.append(final)
            final = None
    return lines


def ranges(lines):
    out = []
    for n in sorted(lines):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


names = git("diff", "-M", "--name-only", "--diff-filter=d", base, "--", "*.c", "*.h").stdout.split()
found = False
for path in sorted(set(names)):
    try:
        text = open(path, encoding="utf-8", errors="surrogateescape").read()
    except FileNotFoundError:
        continue
    spans = ranges(touched(path, text.count("\n") + (not text.endswith("\n"))))
    if not spans:
        continue
    args = [cf, "--style=file", "--assume-filename=" + path]
    args += ["--lines=%d:%d" % (a, b) for a, b in spans]
    res = subprocess.run(args, input=text, capture_output=True, text=True, errors="surrogateescape")
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        sys.exit(2)
    if res.stdout == text:
        continue
    found = True
    if fix == "yes":
        open(path, "w", encoding="utf-8", errors="surrogateescape").write(res.stdout)
        continue
    sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), res.stdout.splitlines(True),
                                               "a/" + path, "b/" + path, n=3))
sys.exit(1 if found and fix != "yes" else 0)
PY

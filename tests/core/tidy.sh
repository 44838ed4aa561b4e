#!/usr/bin/env bash
# Defects: clang-tidy (.clang-tidy) finds nothing on the C lines changed
# since it came in (scripts/check-tidy.py, with the compile commands
# scripts/build.sh recorded through bear), and the check does catch a
# variable used uninitialized on a changed line.
. "$top_srcdir/tests/lib.sh"

skip_in_sanitizer_pass "the sources' defects are the same in both builds"
command -v git >/dev/null && git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1 ||
	skip_all "not a git checkout (the check compares with an older commit)"
command -v clang-tidy-14 >/dev/null || command -v clang-tidy >/dev/null ||
	skip_all "clang-tidy is missing (scripts/deps.sh --test installs it)"
[ -s "$top_builddir/compile_commands.json" ] ||
	skip_all "no compile_commands.json in the build tree (scripts/build.sh records it with bear)"

run_change_check "clang-tidy finds nothing on the changed C lines (scripts/check-tidy.py)" \
	"what it found:" python3 "$top_srcdir/scripts/check-tidy.py" -p "$top_builddir"

# The check itself: a clone with a bug added to lib/vec.c, checked with
# that file's compile command pointed at the clone.
probe_clone scripts/check-tidy.py .clang-tidy || { done_testing; exit; }
cat >>"$TEST_TMP/tree/lib/vec.c" <<'C'

int tr_tidy_probe(int n);
int tr_tidy_probe(int n)
{
	int used;

	if (n > 0)
		used = n;
	return used;
}
C
mkdir -p "$TEST_TMP/db"
python3 - "$top_builddir/compile_commands.json" "$top_srcdir/lib/vec.c" "$TEST_TMP/tree/lib/vec.c" \
	"$TEST_TMP/db/compile_commands.json" <<'PY'
import json, os, sys
db, src, probe, out = sys.argv[1:]
entries = [e for e in json.load(open(db))
           if os.path.realpath(os.path.join(e["directory"], e["file"])) == os.path.realpath(src)][:1]
for e in entries:
    e["file"] = probe
    if "arguments" in e:
        e["arguments"] = [probe if os.path.realpath(os.path.join(e["directory"], a)) == os.path.realpath(src)
                          else a for a in e["arguments"]]
    else:
        e["command"] = e["command"].replace(src, probe)
json.dump(entries, open(out, "w"))
PY
if [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$TEST_TMP/db/compile_commands.json")" != 1 ]; then
	not_ok "the build recorded how lib/vec.c is compiled" "no entry for it in $top_builddir/compile_commands.json"
	done_testing
	exit
fi
rc=0
python3 "$TEST_TMP/tree/scripts/check-tidy.py" -p "$TEST_TMP/db" >"$TEST_TMP/probe.out" 2>&1 || rc=$?
check_eq "a defect on a changed line fails the check" 1 "$rc"
check_grep "the check names it" 'vec\.c:[0-9]+:[0-9]+: warning: .*uninitialized.*\[clang-diagnostic-sometimes-uninitialized\]' \
	"$TEST_TMP/probe.out"
done_testing

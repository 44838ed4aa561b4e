#!/usr/bin/env bash
# Style: every line of C changed since formatting was first checked is as
# clang-format has it under .clang-format (scripts/check-format.sh, which
# says how to fix it), and the check does catch a line that is not.
. "$top_srcdir/tests/lib.sh"

skip_in_sanitizer_pass "the sources' layout is the same in both builds"
command -v git >/dev/null && git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1 ||
	skip_all "not a git checkout (the check compares with an older commit)"
command -v clang-format-14 >/dev/null || command -v clang-format >/dev/null ||
	skip_all "clang-format is missing (scripts/deps.sh --test installs it)"

run_change_check "changed C lines are formatted (scripts/check-format.sh)" \
	"apply with scripts/check-format.sh --fix:" bash "$top_srcdir/scripts/check-format.sh"

# The check itself, on a copy of the tree with one long line added.
probe_clone scripts/check-format.sh .clang-format || { done_testing; exit; }
printf 'int tr_format_probe(int a, int b, int c, int d, int e, int f, int g, int h, int i, int jj, int kk, int ll);\n' \
	>>"$TEST_TMP/tree/lib/vec.h"
rc=0
bash "$TEST_TMP/tree/scripts/check-format.sh" >"$TEST_TMP/probe.out" 2>&1 || rc=$?
check_eq "a line over 100 columns fails the check" 1 "$rc"
check_grep "the check shows the line reformatted" '^\+[[:space:]]+int ll\);' "$TEST_TMP/probe.out"
done_testing

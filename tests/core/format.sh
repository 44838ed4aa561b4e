#!/usr/bin/env bash
# Style: every line of C changed since formatting was first checked is as
# clang-format has it under .clang-format (scripts/check-format.sh, which
# says how to fix it), and the check does catch a line that is not.
. "$top_srcdir/tests/lib.sh"

command -v git >/dev/null && git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1 ||
	skip_all "not a git checkout (the check compares with an older commit)"
command -v clang-format-14 >/dev/null || command -v clang-format >/dev/null ||
	skip_all "clang-format is missing (scripts/deps.sh --test installs it)"

out=$(bash "$top_srcdir/scripts/check-format.sh" 2>&1)
rc=$?
if [ "$rc" = 3 ]; then
	skip_all "$out"
elif [ "$rc" = 0 ]; then
	ok "changed C lines are formatted (scripts/check-format.sh)"
else
	not_ok "changed C lines are formatted (scripts/check-format.sh)" \
		"exit $rc; apply with scripts/check-format.sh --fix:" "$(head -60 <<<"$out")"
fi

# The check itself, on a copy of the tree with one long line added.
git clone -q --no-hardlinks "$top_srcdir" "$TEST_TMP/tree" 2>"$TEST_TMP/clone.err" ||
	{ not_ok "a clone to try the check on" "$(cat "$TEST_TMP/clone.err")"; done_testing; exit; }
cp "$top_srcdir/scripts/check-format.sh" "$TEST_TMP/tree/scripts/"
cp "$top_srcdir/.clang-format" "$TEST_TMP/tree/"
printf 'int tr_format_probe(int a, int b, int c, int d, int e, int f, int g, int h, int i, int jj, int kk, int ll);\n' \
	>>"$TEST_TMP/tree/lib/vec.h"
rc=0
bash "$TEST_TMP/tree/scripts/check-format.sh" >"$TEST_TMP/probe.out" 2>&1 || rc=$?
check_eq "a line over 100 columns fails the check" 1 "$rc"
check_grep "the check shows the line reformatted" '^\+[[:space:]]+int ll\);' "$TEST_TMP/probe.out"
done_testing

#!/usr/bin/env bash
# Function length: at most 15 functions of core/, lib/ and plugins/ have
# bodies over 60 lines (scripts/check-function-length.py; issue 28 took
# them from 59 to 0), and the check counts a body as clang-format lays
# it out: the lines between the braces at column 0.
. "$top_srcdir/tests/lib.sh"
skip_in_sanitizer_pass "the sources' function lengths are the same in both builds"
command -v python3 >/dev/null || skip_all "no python3"
check_script="$top_srcdir/scripts/check-function-length.py"

rc=0
python3 "$check_script" >"$TEST_TMP/tree.out" 2>&1 || rc=$?
check_eq "at most 15 functions over 60 lines ($(tail -n 1 "$TEST_TMP/tree.out"))" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/tree.out" | head -20

# The check itself, on a file with a body of 60 lines and one of 61.
{
	printf 'static int sixty(int x)\n{\n'
	for _ in $(seq 60); do printf '\tx++;\n'; done
	printf '}\n\nint sixty_one(int x,\n\t      int y)\n{\n'
	for _ in $(seq 61); do printf '\tx += y;\n'; done
	printf '}\n'
} >"$TEST_TMP/probe.c"
rc=0
python3 "$check_script" --allow 0 "$TEST_TMP/probe.c" >"$TEST_TMP/probe.out" 2>&1 || rc=$?
check_eq "a body of 61 lines fails the check" 1 "$rc"
check_grep "it is named with its length" '^61 .*probe\.c sixty_one$' "$TEST_TMP/probe.out"
check_no_grep "a body of 60 lines is not counted" ' sixty$' "$TEST_TMP/probe.out"
done_testing

#!/usr/bin/env bash
# make check's order (Makefile.am, TESTS): the tests that run alone (a
# `# test-lock: exclusive` line, tests/lock.sh) start first, back to back.
# One listed later than a long test holds its make slot idle until that
# test ends.  A test marked without being moved, or moved without the
# mark, fails here rather than costing CI minutes unseen.
. "$top_srcdir/tests/lib.sh"
skip_in_sanitizer_pass "the order of the tests is the same in both builds"

# make's own variables reach this script: `make check TESTS=...` would
# print that list instead of the whole.
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s -C "$top_builddir" Makefile >/dev/null 2>&1
tests=$(make -s -C "$top_builddir" print-tests 2>"$TEST_TMP/make.err") ||
	{ not_ok "make print-tests" "$(tail -5 "$TEST_TMP/make.err")"; done_testing; exit; }
tr ' ' '\n' <<<"$tests" | sed '/^$/d' >"$TEST_TMP/tests"
check "make check runs the tests of every area ($(wc -l <"$TEST_TMP/tests") of them)" \
	test "$(wc -l <"$TEST_TMP/tests")" -gt 100
check_eq "no test is listed twice" "" "$(sort "$TEST_TMP/tests" | uniq -d | tr '\n' ' ')"

while IFS= read -r t; do
	grep -qs '^# test-lock: exclusive' "$top_srcdir/$t" && echo "$t"
done <"$TEST_TMP/tests" >"$TEST_TMP/marked"
n=$(wc -l <"$TEST_TMP/marked")
check "some tests run alone (the lttng ones at least: $n)" test "$n" -ge 11
check_eq "the tests that run alone are the first $n make starts" \
	"$(sort "$TEST_TMP/marked" | tr '\n' ' ')" "$(head -n "$n" "$TEST_TMP/tests" | sort | tr '\n' ' ')"
done_testing

#!/usr/bin/env bash
# `make check-unit` is the developer's inner loop: its tests must need no
# root, no kernel events and no daemons.  Each one runs here as nobody, in
# a directory of its own, and must pass (its root-only cases skipped, not
# failed); and the list must hold the unit tests of every area.
. "$top_srcdir/tests/lib.sh"
need_root

# A Makefile older than its local.mk files is remade first, and make says
# so on standard output: not part of the list.
make -s -C "$top_builddir" Makefile >/dev/null 2>&1
list=$(make -s -C "$top_builddir" print-unit-tests 2>"$TEST_TMP/make.err") ||
	{ not_ok "make print-unit-tests" "$(tail -5 "$TEST_TMP/make.err")"; done_testing; exit; }
tr ' ' '\n' <<<"$list" >"$TEST_TMP/list"
for area in core lib symbols perf_events ebpf eventpipe mapharvest zip; do
	case $area in
	core | lib | symbols) ;;
	*) [ -e "$top_builddir/plugins/$area/$area.la" ] || continue ;;
	esac
	check_grep "check-unit runs the unit tests of $area" "^tests/$area/test_" "$TEST_TMP/list"
done
check_no_grep "check-unit leaves out the tests that need the kernel's events" 'test_sideband|test_collector' "$TEST_TMP/list"

# nobody must reach the build tree (a clone under /root is not).
if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$top_builddir/tracerig"; then
	skip "unit tests pass as nobody" "the build tree $top_builddir is not reachable by nobody"
	done_testing
	exit
fi
chmod 1777 "$TEST_TMP"
for t in $list; do
	mkdir -p "$TEST_TMP/$(basename "$t")" && chmod 777 "$TEST_TMP/$(basename "$t")"
	rc=0
	(cd "$TEST_TMP/$(basename "$t")" &&
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			env TMPDIR="$TEST_TMP/$(basename "$t")" top_srcdir="$top_srcdir" top_builddir="$top_builddir" \
			timeout 120 "$top_builddir/$t") >"$TEST_TMP/out" 2>&1 || rc=$?
	if [ "$rc" = 0 ] && ! grep -q '^not ok' "$TEST_TMP/out"; then
		ok "$t passes as nobody"
	else
		not_ok "$t passes as nobody" "exit $rc" "$(grep -B5 -m3 '^not ok' "$TEST_TMP/out" | head -30; tail -5 "$TEST_TMP/out")"
	fi
done
done_testing

#!/usr/bin/env bash
# Objects with identity: `perf buildid-list` on the archive's perf.data
# lists the kernel (with the running kernel's build id), the vDSO and every
# user object with its build id, so the archive can be matched to symbols
# on another machine; perf reads it without complaint (perf 6.1 once
# corrupted its heap on build ids in both the header and MMAP2 records).
. "$top_srcdir/tests/perf_events/lib-perf.sh"
command -v perf >/dev/null || skip_all "perf is not installed"
w="$TEST_TMP/w"
build_late_workload "$w"

out="$TEST_TMP/id.trace.zip"
run_tracerig -c "$CPU_INI" -o "$out" -- "$w/late" "$w/liblate.so" "$w/after"
check_eq "traced: exit 0" 0 "$rc"
unzip_archive "$out" "$TEST_TMP/x"
data="$TEST_TMP/x/perf.data"

MALLOC_CHECK_=3 perf buildid-list -i "$data" >"$TEST_TMP/ids" 2>"$TEST_TMP/ids.err"
check_eq "perf buildid-list reads the archive: exit 0" 0 "$?"
kernel=$(perf buildid-list -k 2>/dev/null)
if [ -n "$kernel" ]; then
	check_grep "the kernel is listed with the running kernel's build id" "^$kernel \\[kernel\\.kallsyms\\]\$" "$TEST_TMP/ids"
else
	skip "the kernel is listed with the running kernel's build id" "perf buildid-list -k knows no build id here"
fi
check_grep "the vDSO is listed as [vdso], with a build id" '^[0-9a-f]{40} \[vdso\]$' "$TEST_TMP/ids"
check_no_grep "the vDSO is not named after a copy in /tmp" 'perf-vdso' "$TEST_TMP/ids"
for obj in "$w/late" "$w/liblate.so" /usr/lib/x86_64-linux-gnu/libc.so.6; do
	id=$(readelf -n "$obj" 2>/dev/null | sed -n 's/^ *Build ID: //p')
	check_grep "$(basename "$obj") is listed with its build id" "^$id ${obj//./\\.}\$" "$TEST_TMP/ids"
done
for cmd in "report --stdio" "script" "report --header-only"; do
	# shellcheck disable=SC2086
	MALLOC_CHECK_=3 perf $cmd -i "$data" >/dev/null 2>"$TEST_TMP/err"
	rc=$?
	check "perf $cmd reads it, exit 0 and no heap complaint" \
		sh -c "[ $rc = 0 ] && ! grep -Eqi 'malloc|corrupt|double free' '$TEST_TMP/err'"
done
if perf script -i "$data" -F ip,sym,dso 2>/dev/null | grep -q '(\[vdso\])'; then
	check_grep "perf.data.txt names vDSO frames as perf does" '^	 *[0-9a-f]+ __vdso_[a-z_]+ \(\[vdso\]\)$' "$TEST_TMP/x/perf.data.txt"
else
	skip "perf.data.txt names vDSO frames as perf does" "no sample landed in the vDSO this time"
fi

done_testing

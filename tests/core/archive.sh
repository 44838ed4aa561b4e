#!/usr/bin/env bash
# The archive: manifest matches the files, mode 0600, written atomically;
# a packaging failure keeps the staging directory.
. "$top_srcdir/tests/lib.sh"

two="$top_srcdir/tests/core/profiles/two.ini"
out="$TEST_TMP/a.trace.zip"

run_tracerig -c "$two" -o "$out"
check_eq "run exits 0" 0 "$rc"
check_eq "archive mode is 0600" 600 "$(stat -c %a "$out")"
check "no temporary archive or staging directory is left" \
	bash -c "[ \$(ls -A '$TEST_TMP' | grep -c -e '\\.tmp-' -e staging) -eq 0 ]"
check_grep "the summary names the archive and its size" "^tracerig: archive $out \([0-9.]+ (bytes|KiB|MiB)\)" "$TEST_TMP/out"
unzip_archive "$out" "$TEST_TMP/x"
check "manifest.json and tracerig.log are at the archive root" test -s "$TEST_TMP/x/manifest.json" -a -s "$TEST_TMP/x/tracerig.log"
check "manifest lists exactly the other files, with their sizes" python3 - "$TEST_TMP/x" <<'PY'
import json, os, sys
root = sys.argv[1]
m = json.load(open(os.path.join(root, "manifest.json")))
listed = {f["name"]: f["size"] for f in m["files"]}
actual = {}
for d, _, files in os.walk(root):
    for f in files:
        rel = os.path.relpath(os.path.join(d, f), root)
        if rel != "manifest.json":
            actual[rel] = os.path.getsize(os.path.join(d, f))
assert listed == actual, (listed, actual)
assert m["clock"]["source"] == "CLOCK_MONOTONIC"
assert m["clock"]["start_monotonic_ns"] > 0 and m["clock"]["end_monotonic_ns"] >= m["clock"]["start_monotonic_ns"]
assert m["tool"]["plugin_abi"] == 3
assert m["profile"]["sections"]["testa"]["payload"] == "from-a"
assert m["host"]["kernel"] == os.uname().release
PY
check_grep "the log records the session" 'session ended \(duration\)' "$TEST_TMP/x/tracerig.log"

# An unwritable output directory fails before collecting anything.
run_tracerig -c "$two" -o /proc/nonexistent/a.trace.zip
check_eq "a missing output directory: exit 2" 2 "$rc"
check_eq "a missing output directory: says why, before collecting" "tracerig: output /proc/nonexistent/a.trace.zip: directory /proc/nonexistent: No such file or directory (create it first, or choose another place with -o)" "$(cat "$TEST_TMP/out")"

# The final name turned into a directory (by someone else) during the
# session: the archive never replaces it, and the data is kept.
rc=0
TMPDIR="$TEST_TMP" "$TRACERIG" -c "$two" -d 0 -o "$TEST_TMP/busy.trace.zip" >"$TEST_TMP/out" 2>&1 </dev/null &
pid=$!
for _ in $(seq 600); do
	[ "$(cat "$TEST_TMP/.busy.trace.zip.lock" 2>/dev/null)" = "$pid" ] && break
	sleep 0.1
done
mkdir -p "$TEST_TMP/busy.trace.zip/inside"
kill -INT "$pid"
wait "$pid" || rc=$?
check_eq "packaging failure: exit 1" 1 "$rc"
check_grep "packaging failure: the directory is not replaced" "^tracerig: cannot move the archive to $TEST_TMP/busy\.trace\.zip: it is now a directory, which tracerig never replaces$" "$TEST_TMP/out"
check_grep "packaging failure: says nothing is lost and where the files are" 'packaging failed: nothing collected is lost, the files are in .*staging' "$TEST_TMP/out"
staging=$(sed -n 's/.*the files are in \([^ ]*\) .*/\1/p' "$TEST_TMP/out" | head -1)
check "packaging failure: the staging dir holds the collected files" test -s "$staging/testa.txt" -a -s "$staging/manifest.json"
check "packaging failure: the directory is as it was" test -d "$TEST_TMP/busy.trace.zip/inside"
check "packaging failure: no temporary archive is left" bash -c "! ls -A '$TEST_TMP' | grep -q '\\.tmp-'"
rm -rf "$staging"

# An existing archive is replaced atomically, never left half-written.
echo old >"$out"
run_tracerig -c "$two" -o "$out"
check "an existing archive is replaced by a complete one" unzip -tq "$out"

done_testing

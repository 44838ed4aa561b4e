#!/usr/bin/env bash
# Any user can truncate a library of their own that their process maps.
# The unwinder (libdwfl) maps the objects it reads: reads past the new end
# faulted (SIGBUS in tr-perf-unwind), the required perf_events crashed and
# the session ended early without its views.  Objects their users can
# write are now unwound from a private copy, and ELF files are read, not
# mapped: the session goes on to its end and writes every view.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
export TMPDIR="$TEST_TMP"
command -v setpriv >/dev/null 2>&1 || skip_all "needs setpriv (util-linux)"
without_libdw && skip_all "callchain = dwarf needs a build with libdw"

chain_workload omit omit
chown -R 65534:65534 "$w/omit"
chmod 755 "$w"
setpriv --reuid=65534 --regid=65534 --clear-groups "$w/omit/chain" 8 &
victim=$!
on_exit "kill $victim 2>/dev/null"
sleep 0.3
TMPDIR="$TEST_TMP" "$TRACERIG" -c "$top_srcdir/conf/profiles/cpu-dwarf.ini" -p "$victim" -d 4 \
	-o "$TEST_TMP/a.trace.zip" >"$TEST_TMP/out" 2>&1 </dev/null &
tr=$!
# Once unwinding is under way: the library cut to one page, by its owner.
for _ in $(seq 50); do grep -q 'collecting' "$TEST_TMP/out" && break; sleep 0.1; done
sleep 1.5
setpriv --reuid=65534 --regid=65534 --clear-groups truncate -s 4096 "$w/omit/libchain.so"
rc=0
wait "$tr" || rc=$?
check_eq "tracerig exits 0" 0 "$rc"
check_no_grep "perf_events did not crash" 'crashed|SIGBUS' "$TEST_TMP/out"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
check "perf_events is ok in the manifest" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
pe = [p for p in m["plugins"] if p["name"] == "perf_events"][0]
assert pe["status"] == "ok", pe
' "$TEST_TMP/a/manifest.json"
for f in perf.data.txt cpu.folded cpu.svg cpu.pb.gz; do
	check "the archive holds $f" test -s "$TEST_TMP/a/$f"
done
check_grep "the samples from before the cut reach main through the library" \
	';main;chain_outer;chain_middle;lib_inner;lib_leaf [0-9]+$' "$TEST_TMP/a/cpu.folded"
done_testing

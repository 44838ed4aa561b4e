#!/usr/bin/env bash
# callchain = dwarf under an open-files limit well below the objects the
# traced process maps (issue 27, item 9): a program dlopens 300 tiny
# libraries, each with a hot function, and calls them in turn; tracerig
# runs with a hard limit of 128.  Before, the unwinders kept every object
# they read open, and the flush failed with "Too many open files" without
# its views.  Now each keeps a share of the limit open and reopens what a
# sample needs again: the session ends with exit 0, every view is
# written, and the stacks reach main through the libraries' CFI.  Half of
# the libraries belong to another user, so they are unwound from private
# copies (memfds), which count against the limit too.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
export TMPDIR="$TEST_TMP"
without_libdw && skip_all "callchain = dwarf needs a build with libdw"
command -v cc >/dev/null || skip_all "no C compiler to build the workload"
command -v objcopy >/dev/null && command -v ld >/dev/null || skip_all "needs binutils"
N=300
LIMIT=128
(ulimit -Sn $LIMIT && ulimit -Hn $LIMIT) 2>/dev/null || skip_all "cannot lower the open-files limit"

# Not under /tmp (some tests mount a private one), removed at exit.
w=$(mktemp -d "$top_builddir/tests/perf_events/fdlimit-work.XXXXXX")
on_exit "rm -rf '$w'"
chmod 755 "$w"

# The libraries: one object compiled once, its function renamed and linked
# into each (a build id of its own each, and no compiler run per library).
cat >"$w/hot.c" <<'EOF'
__attribute__((noinline)) unsigned long hot(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}
EOF
build() {
	cc -O2 -fomit-frame-pointer -fPIC -c -o "$w/hot.o" "$w/hot.c" || return 1
	for i in $(seq -f %03g 0 $((N - 1))); do
		objcopy --redefine-sym hot=hot_$i "$w/hot.o" "$w/hot_$i.o" &&
			ld -shared --eh-frame-hdr --build-id -o "$w/lib$i.so" "$w/hot_$i.o" &&
			rm -f "$w/hot_$i.o" || return 1
	done
	cc -O2 -fomit-frame-pointer -o "$w/many" "$top_srcdir/tests/perf_events/fdlimit/many.c" -ldl
}
build || skip_all "cannot build the workload"
for i in $(seq -f %03g 0 2 $((N - 1))); do chown 65534:65534 "$w/lib$i.so"; done
check "the workload runs" "$w/many" "$w" $N 0.1

# Lower the hard limit too: tracerig raises the soft one to it.
rc=0
(
	ulimit -Sn $LIMIT && ulimit -Hn $LIMIT &&
		exec "$TRACERIG" -c "$top_srcdir/conf/profiles/cpu-dwarf.ini" \
			-o "$TEST_TMP/a.trace.zip" -- "$w/many" "$w" $N 3
) >"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
check_eq "tracerig exits 0 under a hard limit of $LIMIT open files" 0 "$rc"
check_no_grep "nothing failed for want of descriptors" 'Too many open files|FAILED' "$TEST_TMP/out"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
for f in perf.data.txt cpu.folded cpu.svg cpu.pb.gz; do
	check "the archive holds $f" test -s "$TEST_TMP/a/$f"
done
check "perf_events is ok in the manifest" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
pe = [p for p in m["plugins"] if p["name"] == "perf_events"][0]
assert pe["status"] == "ok", pe
assert pe["counters"]["unwound_samples"] >= 300, pe["counters"]
' "$TEST_TMP/a/manifest.json"

# The libraries' hot functions, each reached from main through its CFI
# (no frame pointers anywhere on the way).
reached=$(grep -oE ';main;call_one;hot_[0-9]{3} [0-9]+$' "$TEST_TMP/a/cpu.folded" |
	sed 's/.*hot_\([0-9]*\) .*/\1/' | sort -u | wc -l)
owned=$(grep -oE ';main;call_one;hot_[0-9]{2}[02468] [0-9]+$' "$TEST_TMP/a/cpu.folded" |
	sed 's/.*hot_\([0-9]*\) .*/\1/' | sort -u | wc -l)
echo "# $reached of $N libraries' hot functions reached from main, $owned of them another user's"
check "cpu.folded: most libraries' hot functions, from main ($reached of $N)" \
	test "$reached" -ge $((N / 2))
check "... those of the libraries unwound from private copies too ($owned)" \
	test "$owned" -ge $((N / 4))
done_testing

#!/usr/bin/env bash
# perf.data deflated while collecting, perf.data.txt while the flush
# writes it (issue 13): the archive's entries are the staged ones byte for byte, the archive passes unzip -t and
# python3's zipfile, stock perf reads it, the log says how much was done
# while collecting; when the stream breaks, or streaming is off, the
# entry is deflated whole and still right; a killed tracerig's salvaged
# archive holds no side file.
#
# TRACERIG_TEST_STREAM=drain has the core's thread deflate all there is
# when it is stopped, so that what is checked does not depend on how much
# a low-priority thread got to on a loaded machine; "fault" fails its
# first piece as a write error would.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
export TMPDIR="$TEST_TMP"

"$DEMO" --seconds 600 --threads 1 >/dev/null 2>&1 &
demo=$!
on_exit "kill $demo 2>/dev/null; wait $demo 2>/dev/null"

# session NAME [ENV...] -- [ARGS...]: a 3 s recording of the demo at 4999 Hz,
# staging kept; the archive in $TEST_TMP/NAME.trace.zip, unpacked in
# $TEST_TMP/NAME, the staging directory in $staged.
session() {
	local name=$1; shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	rc=0
	env "${envs[@]}" "$TRACERIG" -c "$CPU_INI" -p "$demo" -d 3 -o "$TEST_TMP/$name.trace.zip" \
		--set perf_events.frequency=4999 --set tracerig.keep_staging=yes "$@" \
		>"$TEST_TMP/$name.out" 2>&1 </dev/null || rc=$?
	staged=$(ls -d "$TEST_TMP"/tracerig-"$name".trace.zip.staging-* 2>/dev/null | head -1)
	unzip_archive "$TEST_TMP/$name.trace.zip" "$TEST_TMP/$name"
}

# archive_whole NAME: what every case must give.
archive_whole() {
	local zip="$TEST_TMP/$1.trace.zip"
	check_eq "$1: tracerig exits 0" 0 "$rc"
	check "$1: the archive passes unzip -t" unzip -tq "$zip"
	check "$1: python3's zipfile reads every entry back (testzip)" python3 -c \
		'import sys, zipfile; sys.exit(zipfile.ZipFile(sys.argv[1]).testzip() is not None)' "$zip"
	check "$1: the archive's perf.data is the staged one, byte for byte" \
		cmp "$TEST_TMP/$1/perf.data" "$staged/perf.data"
	check "$1: so is perf.data.txt (written in the flush, deflated as it is written)" \
		cmp "$TEST_TMP/$1/perf.data.txt" "$staged/perf.data.txt"
	check_eq "$1: no side file is an archive entry" "" \
		"$(unzip -Z1 "$zip" | grep -F .tracerig-stream)"
	unzip -Z -v "$zip" perf.data >"$TEST_TMP/$1.listing"
	check_grep "$1: perf.data is deflated" 'compression method: +deflated' "$TEST_TMP/$1.listing"
	# Streamed or not, an entry is extracted readable by all and
	# writable by its owner only (libzip's default was 0666).
	check_eq "$1: every entry has mode -rw-r--r--" "" \
		"$(zipinfo "$zip" | awk '/^-/ && $1 != "-rw-r--r--" { print $1, $NF }')"
}

session drained TRACERIG_TEST_STREAM=drain --
archive_whole drained
log="$TEST_TMP/drained/tracerig.log"
check_grep "the log says how much of perf.data was deflated before packaging" \
	'perf\.data: .* deflated before packaging \([0-9]+ bytes in [0-9]+ pieces' "$log"
streamed=$(sed -n 's/.*perf\.data: .* deflated before packaging (\([0-9]*\) bytes in \([0-9]*\) pieces.*/\1/p' "$log")
pieces=$(sed -n 's/.*perf\.data: .* deflated before packaging ([0-9]* bytes in \([0-9]*\) pieces.*/\1/p' "$log")
size=$(stat -c %s "$staged/perf.data")
check "all of perf.data but its header region was deflated while collecting ($streamed of $size bytes, $pieces pieces)" \
	test "${streamed:-0}" -gt $((size - 65536)) -a "${pieces:-0}" -ge 1
check_eq "manifest.json says so too (perf.data's deflated_before_packaging)" "$streamed" \
	"$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
print([f for f in m["files"] if f["name"] == "perf.data"][0].get("deflated_before_packaging"))' \
		"$TEST_TMP/drained/manifest.json")"
check "the side file was there, outside the entries" test -s "$staged/.tracerig-stream/perf.data.deflate"
# The stack sink's views, written once in the flush, are deflated as they
# are written (a .NET service's cpu.folded is tens of MiB).
for view in cpu.folded cpu.svg; do
	check "the archive's $view is the staged one, byte for byte" \
		cmp "$TEST_TMP/drained/$view" "$staged/$view"
	check_grep "the log says $view was deflated before packaging" \
		"${view/./\\.}: .* deflated before packaging \\([1-9][0-9]* bytes in [1-9][0-9]* pieces" "$log"
done
if command -v perf >/dev/null; then
	timeout 120 perf script -i "$TEST_TMP/drained/perf.data" -F comm,pid,tid,time,event,ip,sym \
		>"$TEST_TMP/script" 2>"$TEST_TMP/script.err"
	check_eq "stock perf script reads the archive's perf.data: exit 0" 0 "$?"
	check_no_grep "perf script does not call it unfinished or corrupt" \
		'unexpected|incompatible|properly terminated|[Cc]orrupt|[Ii]nvalid' "$TEST_TMP/script.err"
	check "perf script prints the demo's samples" \
		test "$(grep -Ec "^ *demo-worker +$demo/[0-9]+ .*cpu-clock" "$TEST_TMP/script")" -ge 100
else
	skip "stock perf script reads the archive's perf.data" "perf is not installed"
fi

# As it runs for real: however much the thread got to, the rest is the tail.
session plain --
archive_whole plain
check_grep "plain: the log says how much was deflated while collecting" \
	'perf\.data: .* deflated before packaging' "$TEST_TMP/plain/tracerig.log"

# The encoder of the large entries (zip.deflate): ISA-L by default where
# built with it, zlib when asked; the archive is right either way.
if grep -q '^#define HAVE_ISAL 1' "$top_builddir/config.h"; then
	check_grep "by default ISA-L deflates perf.data while collecting" \
		'perf\.data: .* deflated before packaging .*, by ISA-L\)' "$TEST_TMP/plain/tracerig.log"
	session isal_asked TRACERIG_TEST_STREAM=drain -- --set zip.deflate=isal
	archive_whole isal_asked
	check_grep "zip.deflate = isal: ISA-L deflated perf.data while collecting" \
		'perf\.data: .* deflated before packaging .*, by ISA-L\)' \
		"$TEST_TMP/isal_asked/tracerig.log"
else
	check_grep "built without ISA-L, zlib deflates perf.data while collecting" \
		'perf\.data: .* deflated before packaging .*, by zlib\)' "$TEST_TMP/plain/tracerig.log"
	"$TRACERIG" -c "$CPU_INI" -p "$demo" -d 1 -o "$TEST_TMP/noisal.trace.zip" \
		--set zip.deflate=isal >"$TEST_TMP/noisal.out" 2>&1 </dev/null
	check "built without ISA-L, zip.deflate = isal is refused" test $? -ne 0
	check_grep "and the error says how to get it" 'built without ISA-L.*libisal-dev' \
		"$TEST_TMP/noisal.out"
fi
session zlib TRACERIG_TEST_STREAM=drain -- --set zip.deflate=zlib
archive_whole zlib
check_grep "zip.deflate = zlib: zlib deflated perf.data while collecting" \
	'perf\.data: .* deflated before packaging .*, by zlib\)' "$TEST_TMP/zlib/tracerig.log"

session broken TRACERIG_TEST_STREAM=fault --
archive_whole broken
check_grep "broken: the log says deflating while collecting stopped" \
	'perf\.data: deflating it as it grows stopped: .*deflated whole when packaged' \
	"$TEST_TMP/broken/tracerig.log"
check_no_grep "broken: nothing claims to have been deflated while collecting" \
	'deflated before packaging \(' "$TEST_TMP/broken/tracerig.log"
check_eq "broken: manifest.json says none of perf.data was deflated before packaging" 0 \
	"$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
print([f for f in m["files"] if f["name"] == "perf.data"][0].get("deflated_before_packaging"))' \
		"$TEST_TMP/broken/manifest.json")"

# DWARF stacks (2 KiB a sample): perf.data passes ISA-L's 1 MiB below
# however little CPU the demo gets (frame pointers gave 310 KB beside
# three builds).
session off TRACERIG_TEST_STREAM=drain -- --set tracerig.stream=no -v \
	--set perf_events.callchain=dwarf --set perf_events.dwarf_stack_bytes=2048
archive_whole off
check_no_grep "stream = no: nothing is deflated while collecting" \
	'deflated before packaging' "$TEST_TMP/off/tracerig.log"
check "stream = no: no side file" test ! -e "$staged/.tracerig-stream"
# A large entry nobody followed is deflated by ISA-L all the same (at
# packaging), and stays right (archive_whole above).
if grep -q '^#define HAVE_ISAL 1' "$top_builddir/config.h"; then
	size=$(stat -c %s "$staged/perf.data")
	check "stream = no: perf.data is large enough to be deflated by ISA-L ($size bytes)" \
		test "$size" -ge 1048576
	check_grep "stream = no: the log says ISA-L deflated perf.data whole at packaging" \
		"perf\.data: deflated whole by ISA-L at packaging \($size bytes to [0-9]+\)" \
		"$TEST_TMP/off.out"
fi

# Killed while the thread deflates: the watchdog's archive is whole and
# has no side file.  Killed once collection has begun ("collecting" said):
# perf_events may stream while mapharvest still starts, and a tracerig
# killed before every source started has collected nothing, by design.
"$TRACERIG" -c "$CPU_INI" -p "$demo" -d 600 -o "$TEST_TMP/k.trace.zip" \
	--set perf_events.frequency=4999 >"$TEST_TMP/k.out" 2>&1 </dev/null &
tr=$!
on_exit "kill -9 $tr 2>/dev/null; wait $tr 2>/dev/null"
for _ in $(seq 1200); do
	side=$(ls "$TEST_TMP"/tracerig-k.trace.zip.staging-*/.tracerig-stream/perf.data.deflate 2>/dev/null | head -1)
	[ -n "$side" ] && [ -s "$side" ] && grep -q '^tracerig: collecting ' "$TEST_TMP/k.out" && break
	kill -0 "$tr" 2>/dev/null || break
	sleep 0.1
done
check "killed: the thread had deflated something before the kill" test -n "$side" -a -s "$side"
kill -9 "$tr"
wait "$tr" 2>/dev/null
for _ in $(seq 600); do [ -s "$TEST_TMP/k.trace.zip" ] && break; sleep 0.1; done
check "killed: the watchdog's archive passes unzip -t" unzip -tq "$TEST_TMP/k.trace.zip"
check_eq "killed: no side file is an archive entry" "" \
	"$(unzip -Z1 "$TEST_TMP/k.trace.zip" | grep -F .tracerig-stream)"
check "killed: the archive holds perf.data" test -n "$(unzip -Z1 "$TEST_TMP/k.trace.zip" perf.data)"

done_testing

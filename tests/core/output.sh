#!/usr/bin/env bash
# The output: checked before anything is collected, never a device, a
# directory or another run's archive replaced, one session per output, and
# a full disk that loses nothing collected.
. "$top_srcdir/tests/lib.sh"
need_root

two="$top_srcdir/tests/core/profiles/two.ini"
cd "$TEST_TMP" || exit 1

# ---- what -o may name, checked before collection (and by --check)
for mode in run check; do
	args=(-c "$two" -d 100ms)
	[ $mode = check ] && args=(--check -c "$two")

	run_tracerig "${args[@]}" -o /dev/full
	check_eq "$mode: -o /dev/full is refused (exit 2)" 2 "$rc"
	check_eq "$mode: -o /dev/full says why" "tracerig: output /dev/full: is a character device, not a regular file; tracerig never replaces one (give a file name, or a directory to write <name>.trace.zip in)" "$(cat "$TEST_TMP/out")"

	mkfifo "$TEST_TMP/fifo-$mode"
	run_tracerig "${args[@]}" -o "$TEST_TMP/fifo-$mode"
	check_eq "$mode: a FIFO is refused" "2 tracerig: output $TEST_TMP/fifo-$mode: is a FIFO, not a regular file; tracerig never replaces one (give a file name, or a directory to write <name>.trace.zip in)" "$rc $(cat "$TEST_TMP/out")"
	check "$mode: the FIFO is left as it was" test -p "$TEST_TMP/fifo-$mode"

	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$TEST_TMP/sock-$mode"
	run_tracerig "${args[@]}" -o "$TEST_TMP/sock-$mode"
	check_eq "$mode: a socket is refused" "2 tracerig: output $TEST_TMP/sock-$mode: is a socket, not a regular file; tracerig never replaces one (give a file name, or a directory to write <name>.trace.zip in)" "$rc $(cat "$TEST_TMP/out")"
	check "$mode: the socket is left as it was" test -S "$TEST_TMP/sock-$mode"

	echo precious >"$TEST_TMP/victim-$mode"
	ln -s "$TEST_TMP/victim-$mode" "$TEST_TMP/link-$mode.zip"
	run_tracerig "${args[@]}" -o "$TEST_TMP/link-$mode.zip"
	check_eq "$mode: a symbolic link is refused" "2 tracerig: output $TEST_TMP/link-$mode.zip: is a symbolic link, not a regular file; tracerig never replaces one (give the path the link points to, or remove the link)" "$rc $(cat "$TEST_TMP/out")"
	check_eq "$mode: the link's target is untouched" precious "$(cat "$TEST_TMP/victim-$mode")"

	run_tracerig "${args[@]}" -o "$TEST_TMP/no/such/dir/a.trace.zip"
	check_eq "$mode: a missing directory is refused with the reason" "2 tracerig: output $TEST_TMP/no/such/dir/a.trace.zip: directory $TEST_TMP/no/such/dir: No such file or directory (create it first, or choose another place with -o)" "$rc $(cat "$TEST_TMP/out")"
	run_tracerig "${args[@]}" -o "$TEST_TMP/nodir-$mode/"
	check_eq "$mode: a missing directory given as DIR/ is refused" "2 tracerig: output $TEST_TMP/nodir-$mode/: directory $TEST_TMP/nodir-$mode: No such file or directory (create it first, or choose another place with -o)" "$rc $(cat "$TEST_TMP/out")"
	echo x >"$TEST_TMP/plainfile"
	run_tracerig "${args[@]}" -o "$TEST_TMP/plainfile/a.zip"
	check_eq "$mode: a file used as a directory is refused" "2 tracerig: output $TEST_TMP/plainfile/a.zip: $TEST_TMP/plainfile is a regular file, not a directory (choose another place with -o)" "$rc $(cat "$TEST_TMP/out")"

	# A read-only file system: root passes every permission bit, not this.
	mkdir -p "$TEST_TMP/ro"
	rc=0
	unshare -m bash -c 'mount -t tmpfs -o ro,size=64k tmpfs "$1" && shift && TMPDIR="$TEST_TMP" "$@"' \
		- "$TEST_TMP/ro" "$TRACERIG" "${args[@]}" -o "$TEST_TMP/ro/a.trace.zip" >"$TEST_TMP/out" 2>&1 || rc=$?
	check_eq "$mode: an unwritable directory is refused with the reason" "2 tracerig: output $TEST_TMP/ro/a.trace.zip: cannot write in directory $TEST_TMP/ro: Read-only file system (choose a writable place with -o)" "$rc $(cat "$TEST_TMP/out")"
done
rc=0
TMPDIR=/proc "$TRACERIG" -c "$two" -d 100ms -o "$TEST_TMP/st.trace.zip" >"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
check_eq "staging cannot be created under TMPDIR: exit 1, says where and what to do" "1 tracerig: cannot create a staging directory in /proc: No such file or directory (set TMPDIR to a directory with room for the trace)" "$rc $(cat "$TEST_TMP/out")"
check "no staging directory was made for a refused output" bash -c "! ls -A '$TEST_TMP' | grep -q staging"

# ---- -o DIR: <name>.trace.zip inside it, numbered like the default name
mkdir -p "$TEST_TMP/into"
run_tracerig -c "$two" -d 100ms -o "$TEST_TMP/into"
check_eq "-o DIR: exit 0" 0 "$rc"
check_grep "-o DIR: the archive is DIR/<name>.trace.zip" "^tracerig: archive $TEST_TMP/into/two\\.trace\\.zip \\(" "$TEST_TMP/out"
check "-o DIR: the archive is complete" unzip -tq "$TEST_TMP/into/two.trace.zip"
sum1=$(sha256sum <"$TEST_TMP/into/two.trace.zip")
run_tracerig -c "$two" -d 100ms -o "$TEST_TMP/into/"
check_eq "-o DIR/ again: exit 0" 0 "$rc"
check_grep "-o DIR/ again: says the next free name" "^tracerig: warning: $TEST_TMP/into/two\\.trace\\.zip exists or is being written: this run writes $TEST_TMP/into/two-2\\.trace\\.zip$" "$TEST_TMP/out"
check_grep "-o DIR/ again: the archive is DIR/<name>-2.trace.zip" "^tracerig: archive $TEST_TMP/into/two-2\\.trace\\.zip \\(" "$TEST_TMP/out"
check_eq "-o DIR/ again: the first archive is untouched" "$sum1" "$(sha256sum <"$TEST_TMP/into/two.trace.zip")"
check_eq "-o DIR: no temporary or lock file is left" "two-2.trace.zip two.trace.zip" "$(ls -A "$TEST_TMP/into" | sort | xargs)"

# ---- the default name: two runs never replace each other
mkdir -p "$TEST_TMP/cwd" && cd "$TEST_TMP/cwd" || exit 1
run_tracerig -c "$two" -d 100ms
check_grep "default name: <name>.trace.zip" "^tracerig: archive two\\.trace\\.zip \\(" "$TEST_TMP/out"
sum1=$(sha256sum <two.trace.zip)
run_tracerig -c "$two" -d 100ms
check_eq "default name again: says the name it picks" "tracerig: warning: two.trace.zip exists or is being written: this run writes two-2.trace.zip" "$(head -n 1 "$TEST_TMP/out")"
run_tracerig -c "$two" -d 100ms
check_grep "default name a third time: <name>-3.trace.zip" "^tracerig: archive two-3\\.trace\\.zip \\(" "$TEST_TMP/out"
check_eq "default name: the first archive is untouched" "$sum1" "$(sha256sum <two.trace.zip)"
check "default name: every archive is complete" bash -c 'unzip -tq two.trace.zip && unzip -tq two-2.trace.zip && unzip -tq two-3.trace.zip'
run_tracerig --check -c "$two"
check_eq "--check with the default name creates nothing" "two-2.trace.zip two-3.trace.zip two.trace.zip" "$(ls -A | sort | xargs)"
cd "$TEST_TMP" || exit 1

# ---- an explicit existing regular file is replaced (the user asked for it)
echo old >"$TEST_TMP/mine.zip"
run_tracerig -c "$two" -d 100ms -o "$TEST_TMP/mine.zip"
check_eq "-o an existing file: exit 0" 0 "$rc"
check "-o an existing file: replaced by a complete archive" unzip -tq "$TEST_TMP/mine.zip"

# ---- one session per output: the second is refused at once, naming the first
mkdir -p "$TEST_TMP/busy"
TMPDIR="$TEST_TMP" "$TRACERIG" -c "$two" -d 0 -o "$TEST_TMP/busy/x.trace.zip" >"$TEST_TMP/first.out" 2>&1 </dev/null &
first=$!
for _ in $(seq 600); do
	[ "$(cat "$TEST_TMP/busy/.x.trace.zip.lock" 2>/dev/null)" = "$first" ] && break
	sleep 0.1
done
check_eq "the first session holds the output's lock" "$first" "$(cat "$TEST_TMP/busy/.x.trace.zip.lock" 2>/dev/null)"
run_tracerig -c "$two" -d 100ms -o "$TEST_TMP/busy/x.trace.zip"
check_eq "a second session on the same -o is refused, naming the first" "2 tracerig: output $TEST_TMP/busy/x.trace.zip: another tracerig session (PID $first) is writing it now (wait for it to finish, or choose another name with -o)" "$rc $(cat "$TEST_TMP/out")"
run_tracerig --check -c "$two" -o "$TEST_TMP/busy/x.trace.zip"
check_eq "--check says so too" "2 tracerig: output $TEST_TMP/busy/x.trace.zip: another tracerig session (PID $first) is writing it now (wait for it to finish, or choose another name with -o)" "$rc $(cat "$TEST_TMP/out")"
run_tracerig -c "$two" -d 100ms -o "$TEST_TMP/busy"
check_grep "a default name being written is skipped" "^tracerig: archive $TEST_TMP/busy/two\\.trace\\.zip \\(" "$TEST_TMP/out"
kill -INT "$first"
wait "$first"
check_eq "the first session still packages its archive" 0 "$?"
check "the first session's archive is complete" unzip -tq "$TEST_TMP/busy/x.trace.zip"
check "the lock file goes with the session" test ! -e "$TEST_TMP/busy/.x.trace.zip.lock"

# ---- a full output disk: nothing collected is lost, no partial archive
# The staging directory lives under $TMPDIR (here on another file system
# than the 1 MB output); the archive (3 MB, stored) cannot fit.
mkdir -p "$TEST_TMP/full" "$TEST_TMP/stage"
rc=0
STAGE="$TEST_TMP/stage" FULL="$TEST_TMP/full" unshare -m bash -c 'mount -t tmpfs -o size=1m tmpfs "$1" || exit 99; shift
	TMPDIR="$STAGE" "$@"; rc=$?; ls -A "$FULL" >"$STAGE/../full.ls"; exit $rc' \
	- "$TEST_TMP/full" "$TRACERIG" -c "$two" -d 100ms -o "$TEST_TMP/full/x.trace.zip" \
	--set testa.bulk=3M --set zip.compression=0 >"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
check_eq "disk full: exit 1" 1 "$rc"
check_grep "disk full: the zip error says ENOSPC, and what to do" "^tracerig: zip: flush failed: cannot write $TEST_TMP/full/\\.x\\.trace\\.zip\\.tmp-[A-Za-z0-9]{6}: Write error: No space left on device \\(the file system is full: free space, or choose another place with -o\\)$" "$TEST_TMP/out"
check_no_grep "disk full: never called an I/O error" "Input/output error" "$TEST_TMP/out"
staging=$(ls -d "$TEST_TMP"/stage/tracerig-x.trace.zip.staging-* 2>/dev/null)
check_eq "disk full: says nothing is lost, and where the files are" "tracerig: packaging failed: nothing collected is lost, the files are in $staging (zip that directory once the cause is fixed)" "$(tail -n 1 "$TEST_TMP/out")"
check_eq "disk full: the staging dir holds every file, whole" "bulk.bin manifest.json testa.txt testb.txt tracerig.log 3145728" \
	"$(cd "$staging" 2>/dev/null && ls | sort | xargs) $(stat -c %s "$staging/bulk.bin" 2>/dev/null)"
check "disk full: manifest.json is complete JSON listing the files" python3 -c '
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
assert sorted(f["name"] for f in m["files"]) == ["bulk.bin", "testa.txt", "testb.txt", "tracerig.log"], m["files"]
' "$staging"
check_grep "disk full: testa.txt is intact" "^payload from-a$" "$staging/testa.txt"
check_eq "disk full: nothing is left on the full disk (no partial archive, no temporary, no lock)" "" "$(cat "$TEST_TMP/full.ls")"

# ---- a full staging disk: the message does not claim that nothing is lost,
# and no truncated manifest.json is left to pass for the record of the run.
# A 1.5 MB payload (continuation lines of a profile) into a 1 MB staging fs.
{
	printf '[tracerig]\nname = big\nrequired = testa\n[testa]\npayload = start'
	chunk=$(printf '%*s' 15000 '' | tr ' ' p)
	for _ in $(seq 100); do printf ' \\\n  %s' "$chunk"; done
	printf '\n'
} >"$TEST_TMP/big.ini"
mkdir -p "$TEST_TMP/smallstage" "$TEST_TMP/bigout"
rc=0
STAGE="$TEST_TMP/smallstage" unshare -m bash -c 'mount -t tmpfs -o size=1m tmpfs "$STAGE" || exit 99
	TMPDIR="$STAGE" "$@"; rc=$?; cd "$STAGE" && ls -A */ >"$STAGE/../smallstage.ls"; exit $rc' \
	- "$TRACERIG" -c "$TEST_TMP/big.ini" -d 100ms -o "$TEST_TMP/bigout/big.trace.zip" >"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
check_eq "staging disk full: exit 1" 1 "$rc"
check_grep "staging disk full: the source's flush says ENOSPC" "^tracerig: testa: flush failed: No space left on device$" "$TEST_TMP/out"
check_grep "staging disk full: the manifest error says ENOSPC and where" "^tracerig: cannot write manifest\.json in $TEST_TMP/smallstage/tracerig-big\.trace\.zip\.staging-[A-Za-z0-9]{6}: No space left on device \(the file system is full\)$" "$TEST_TMP/out"
check_grep "staging disk full: says the kept files are incomplete" "^tracerig: packaging failed: what was collected is kept in $TEST_TMP/smallstage/tracerig-big\.trace\.zip\.staging-[A-Za-z0-9]{6}, but it is incomplete \(see the errors above\)$" "$TEST_TMP/out"
check_no_grep "staging disk full: never says nothing is lost" "nothing collected is lost" "$TEST_TMP/out"
check_no_grep "staging disk full: no partial manifest.json is left" "manifest\.json" "$TEST_TMP/smallstage.ls"
check_eq "staging disk full: no archive, no temporary file" "" "$(ls -A "$TEST_TMP/bigout")"

done_testing

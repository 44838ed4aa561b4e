#!/usr/bin/env bash
# A traced program run from a FUSE mount whose server stops answering
# (issue 27, item 7): tracerig's opens of its files give up after the open
# deadline instead of hanging (in the kernel, uninterruptibly, for as long
# as the server lives), the session ends and packages normally, the log
# says which file system did not answer, and a second session against the
# same process ends too.  The mount lives in a private mount namespace, so
# that other tests' system-wide sessions never meet the tarpit.
if [ -z "${TR_FUSE_PRIVATE_NS:-}" ] && command -v unshare >/dev/null &&
	[ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
	TR_FUSE_PRIVATE_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$top_srcdir/tests/perf_events/lib-perf.sh"
export TMPDIR="$TEST_TMP"

[ -c /dev/fuse ] || skip_all "no /dev/fuse (FUSE not available here)"
command -v cc >/dev/null || skip_all "no C compiler to build the FUSE server"

w="$TEST_TMP/fuse"
mkdir -p "$w/mnt"
cc -O2 -Wall -o "$w/fusepit" "$top_srcdir/tests/perf_events/fusepit.c" ||
	skip_all "cannot build tests/perf_events/fusepit.c"
printf 'int main(void) { for (volatile unsigned long i = 0;; i++) ; }\n' >"$w/spin.c"
cc -O0 -o "$w/spin" "$w/spin.c" || skip_all "cannot build the spinning program"

server=""
spinner=""
# Killing the server first aborts every request waiting on it: whatever
# hangs (ours or a kernel thread's) ends, then the mount can go.
cleanup() {
	[ -n "$server" ] && kill -KILL "$server" 2>/dev/null
	[ -n "$server" ] && wait "$server" 2>/dev/null
	umount -l "$w/mnt" 2>/dev/null
	[ -n "$spinner" ] && kill -KILL "$spinner" 2>/dev/null
	[ -n "$spinner" ] && wait "$spinner" 2>/dev/null
	true
}
on_exit cleanup

"$w/fusepit" "$w/mnt" "$w/spin" &
server=$!
for _ in $(seq 100); do
	[ -x "$w/mnt/prog" ] && break
	sleep 0.05
done
[ -x "$w/mnt/prog" ] || skip_all "cannot mount the FUSE test file system (fusepit)"

"$w/mnt/prog" &
spinner=$!
sleep 0.3
kill -0 "$spinner" 2>/dev/null || skip_all "cannot run a program from the FUSE mount"
# While the server answers, the program's file is read from a copy (a
# later read of the mount by one of tracerig's threads could hang): its
# frames are named all the same.
run_tracerig -c "$CPU_INI" -p "$spinner" -d 2 -o "$TEST_TMP/h.trace.zip"
check_eq "healthy mount: the session ends (exit 0)" 0 "$rc"
unzip_archive "$TEST_TMP/h.trace.zip" "$TEST_TMP/h"
check_grep "healthy mount: the program's frames are named (main)" \
	"^prog-$spinner;.*;main( |;)" "$TEST_TMP/h/cpu.folded"
check_no_grep "healthy mount: no file system is said to hang" "did not answer" "$TEST_TMP/out"

# From now on the server reads every request and answers none.
kill -USR1 "$server"
sleep 0.2

for run in 1 2; do
	rc=0
	TMPDIR="$TEST_TMP" timeout -s KILL 120 "$TRACERIG" -c "$CPU_INI" -p "$spinner" -d 3 \
		-o "$TEST_TMP/r$run.trace.zip" >"$TEST_TMP/out$run" 2>&1 </dev/null || rc=$?
	check_eq "run $run: the session ends and packages (exit 0, not killed by the timeout)" 0 "$rc"
	if [ "$rc" -ne 0 ]; then
		sed 's/^/#   /' "$TEST_TMP/out$run" | tail -20
		continue
	fi
	unzip_archive "$TEST_TMP/r$run.trace.zip" "$TEST_TMP/a$run"
	check "run $run: the archive holds cpu.folded" test -s "$TEST_TMP/a$run/cpu.folded"
	check "run $run: the archive holds perf.data" test -s "$TEST_TMP/a$run/perf.data"
	check "run $run: the archive holds perf.data.txt" test -s "$TEST_TMP/a$run/perf.data.txt"
	check "run $run: the spinning process has samples" \
		grep -q "^$spinner\$" <(sample_pids "$TEST_TMP/a$run/perf.data.txt")
done

check_grep "run 1: the log names the file system that did not answer" \
	"mnt/prog: its file system did not answer within" "$TEST_TMP/out1"
check_grep "... says its frames stay unnamed and the session goes on" \
	"stay unnamed, and the session goes on" "$TEST_TMP/out1"
check_grep "... and so does the archive's tracerig.log" \
	"did not answer within" "$TEST_TMP/a1/tracerig.log"
check "the spinning program still runs" kill -0 "$spinner"
done_testing

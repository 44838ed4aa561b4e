#!/usr/bin/env bash
# A traced program run from a FUSE mount whose server stops answering
# (issue 27, item 7): tracerig's opens of its files give up after the open
# deadline instead of hanging (in the kernel, uninterruptibly, for as long
# as the server lives), the session ends and packages normally, the log
# says which file system did not answer, and a second session against the
# same process ends too.  The same for what is done in a process's TMPDIR
# on such a mount: mapharvest's removal of a left-behind map, and the
# EventPipe backend's search for a diagnostic socket.  The mount lives in a private mount namespace, so
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

"$w/fusepit" "$w/mnt" "$w/spin" >"$w/server.out" &
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

# A process whose TMPDIR is the mount has its map there (fusepit serves
# perf-PID.map for any PID).  While the server answers, the map of one that
# exits mid-session is harvested and its left-behind file removed.
mh_ini="$TEST_TMP/mh.ini"
printf '[tracerig]\nname = fusemh\n[perf_events]\n[mapharvest]\ncleanup = yes\n' >"$mh_ini"
TMPDIR="$w/mnt" sleep 1 &
mapper=$!
run_tracerig -c "$mh_ini" -p "$mapper" -d 3 -o "$TEST_TMP/m.trace.zip"
check_eq "healthy mount: the map session ends (exit 0)" 0 "$rc"
unzip_archive "$TEST_TMP/m.trace.zip" "$TEST_TMP/m"
check_grep "healthy mount: the map on it is harvested" fusepit_mapped_function \
	"$TEST_TMP/m/perf-$mapper.map"
check_grep "... and its left-behind file removed on the mount" "unlinked perf-$mapper.map" \
	"$w/server.out"

# The server stops answering mid-session, after the map was harvested: the
# removal at the end (a lookup and an unlink on the mount) gives up with
# the deadline, and the session still ends and packages.
TMPDIR="$w/mnt" sleep 1.5 &
mapper=$!
rc=0
TMPDIR="$TEST_TMP" timeout -s KILL 120 "$TRACERIG" -v -c "$mh_ini" -p "$mapper" -d 4 \
	-o "$TEST_TMP/s.trace.zip" >"$TEST_TMP/outs" 2>&1 </dev/null &
session=$!
for _ in $(seq 100); do
	grep -q "harvesting $w/mnt/perf-$mapper.map" "$TEST_TMP/outs" 2>/dev/null && break
	sleep 0.05
done
check_grep "the map is harvested while the server answers" "harvesting $w/mnt/perf-$mapper.map" \
	"$TEST_TMP/outs"

# From now on the server reads every request and answers none.
kill -USR1 "$server"
wait "$session" || rc=$?
check_eq "stuck mount: the map session ends and packages (exit 0, not killed by the timeout)" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/#   /' "$TEST_TMP/outs" | tail -20
unzip_archive "$TEST_TMP/s.trace.zip" "$TEST_TMP/s"
check_grep "stuck mount: the archive holds the map harvested before" fusepit_mapped_function \
	"$TEST_TMP/s/perf-$mapper.map"
check_grep "... and the log says the map is left there, and why" \
	"cleanup of $w/mnt/perf-$mapper.map failed: .*did not answer.*left there" "$TEST_TMP/outs"
check_no_grep "... not that it was removed" "unlinked perf-$mapper.map" "$w/server.out"

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

# The EventPipe backend looks for a diagnostic socket in every traced
# process's TMPDIR: one on FUSE is not looked into (a lookup there would
# hold the backend's thread for good, beyond any deadline), and -p says so.
if [ -e "$top_builddir/plugins/eventpipe/eventpipe.la" ]; then
	TMPDIR="$w/mnt" sleep 60 &
	waiter=$!
	printf '[tracerig]\nname = fuseep\n[perf_events]\n[eventpipe]\n' >"$TEST_TMP/ep.ini"
	rc=0
	TMPDIR="$TEST_TMP" timeout -s KILL 120 "$TRACERIG" -c "$TEST_TMP/ep.ini" -p "$waiter" -d 1 \
		-o "$TEST_TMP/e.trace.zip" >"$TEST_TMP/oute" 2>&1 </dev/null || rc=$?
	kill "$waiter" 2>/dev/null
	check "eventpipe, TMPDIR on the stuck mount: the session ends (not killed by the timeout)" \
		test "$rc" != 137
	check_grep "... and says the TMPDIR is not looked into" \
		"pid $waiter: .*TMPDIR $w/mnt: .*not looked into" "$TEST_TMP/oute"
	check "... and still packages what perf_events recorded" test -s "$TEST_TMP/e.trace.zip"
else
	skip "eventpipe, TMPDIR on the stuck mount" "the eventpipe plugin is not built"
fi

# A directory stuck in one mount namespace is not stuck in another that
# spells it the same: a container (its own mount namespace, a FUSE tarpit
# over its TMPDIR) and a host process with the same TMPDIR, local.  The
# container's map hangs first; the host's map, written after that, is
# still harvested.
shared="$TEST_TMP/shared-tmp"
mkdir -p "$shared"
unshare -m --propagation private sh -c '
	"$1" "$2" "$3" >/dev/null 2>&1 &
	echo $! >"$4/pit.pid"
	for _ in $(seq 100); do grep -q " $2 " /proc/self/mountinfo && break; sleep 0.05; done
	kill -USR1 "$(cat "$4/pit.pid")"
	exec env TMPDIR="$2" sleep 30' sh "$w/fusepit" "$shared" "$w/spin" "$w" &
container=$!
on_exit "kill -KILL \$(cat '$w/pit.pid' 2>/dev/null) $container 2>/dev/null"
for _ in $(seq 100); do
	[ "$(readlink "/proc/$container/exe" 2>/dev/null)" = "$(readlink -f "$(command -v sleep)")" ] && break
	sleep 0.05
done
TMPDIR="$shared" sh -c 'sleep 2; printf "401000 100 host_mapped_function\n" >"$TMPDIR/perf-$$.map"; exec sleep 30' &
host=$!
on_exit "kill $host 2>/dev/null; rm -f '$shared/perf-$host.map'"
printf '[tracerig]\nname = fusens\nopen_timeout = 1s\n[mapharvest]\n' >"$TEST_TMP/ns.ini"
rc=0
TMPDIR="$TEST_TMP" timeout -s KILL 120 "$TRACERIG" -v -c "$TEST_TMP/ns.ini" -p "$container,$host" -d 6 \
	-o "$TEST_TMP/n.trace.zip" >"$TEST_TMP/outn" 2>&1 </dev/null || rc=$?
check_eq "container with a stuck TMPDIR: the session ends (exit 0)" 0 "$rc"
check_grep "... its directory did not answer" "$shared/perf-$container.map: its file system did not answer" \
	"$TEST_TMP/outn"
unzip_archive "$TEST_TMP/n.trace.zip" "$TEST_TMP/n"
if ! check_grep "the host process's map in the same-named, local directory is harvested" \
	host_mapped_function "$TEST_TMP/n/perf-$host.map"; then
	grep -E "perf-$host|did not answer" "$TEST_TMP/outn" | sed 's/^/#   /'
fi
check "the spinning program still runs" kill -0 "$spinner"
done_testing

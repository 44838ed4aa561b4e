#!/usr/bin/env bash
# Ctrl-C / SIGTERM stop and package; a second one aborts and says so.
. "$top_srcdir/tests/lib.sh"
# Staging directories go under $TMPDIR: keep them in the test's own.
export TMPDIR="$TEST_TMP"

two="$top_srcdir/tests/core/profiles/two.ini"
out="$TEST_TMP/sig.trace.zip"

for sig in INT TERM; do
	rm -f "$out"
	"$TRACERIG" -c "$two" -o "$out" -d 0 >"$TEST_TMP/out" 2>&1 &
	pid=$!
	sleep 0.5
	kill -s "$sig" "$pid"
	rc=0; wait "$pid" || rc=$?
	check_eq "SIG$sig during collection: exit 0" 0 "$rc"
	check "SIG$sig during collection still writes the archive" test -s "$out"
	unzip_archive "$out" "$TEST_TMP/x$sig"
	check_grep "SIG$sig: the manifest says the session ended by signal" '"ended_by": "signal"' "$TEST_TMP/x$sig/manifest.json"
	check "SIG$sig: collected data is in the archive" test -s "$TEST_TMP/x$sig/testa.txt"
done
check_grep "stopping on a signal says a second one aborts" 'Ctrl-C again aborts without packaging' "$TEST_TMP/out"

# SIGTERM or SIGINT to tracerig alone (not its process group, as
# `timeout`, systemd and Kubernetes send it) ends a launched command too,
# once collection has stopped, as perf record does; one that ignores
# SIGTERM is killed after its grace; either way tracerig exits 0 and the
# archive is written.  The duration's end does the same.
for how in TERM INT ignored duration; do
	rm -f "$out" "$TEST_TMP/cmd.pid"
	if [ "$how" = ignored ]; then
		cmd='trap "" TERM; echo $$ >"$1"; while :; do sleep 0.1; done'
	else
		cmd='echo $$ >"$1"; exec sleep 1000'
	fi
	d=0
	[ "$how" = duration ] && d=1
	"$TRACERIG" -c "$two" -o "$out" -d "$d" -- sh -c "$cmd" sh "$TEST_TMP/cmd.pid" >"$TEST_TMP/out" 2>&1 &
	pid=$!
	for _ in $(seq 100); do [ -s "$TEST_TMP/cmd.pid" ] && break; sleep 0.05; done
	cmd_pid=$(cat "$TEST_TMP/cmd.pid" 2>/dev/null)
	case $how in TERM|INT) kill -s "$how" "$pid" ;; ignored) kill -TERM "$pid" ;; esac
	rc=0; wait "$pid" || rc=$?
	check_eq "launched command, $how: tracerig exits 0" 0 "$rc"
	check "launched command, $how: the archive is written" test -s "$out"
	check "launched command, $how: the command is gone" sh -c "[ -n '$cmd_pid' ] && ! kill -0 '$cmd_pid' 2>/dev/null"
	unzip_archive "$out" "$TEST_TMP/l$how"
	check_grep "launched command, $how: the archive's log says it was stopped" \
		"stopping the launched command \(PID $cmd_pid\) with SIGTERM" "$TEST_TMP/l$how/tracerig.log"
	[ -z "$cmd_pid" ] || kill -9 "$cmd_pid" 2>/dev/null
done
check_grep "one that ignores SIGTERM is killed, and that is said" \
	"did not end within 5 s of SIGTERM: SIGKILL" "$TEST_TMP/lignored/tracerig.log"

# `timeout` sends its signal to tracerig, then to the process group it
# made, tracerig in it: one request, sent twice, that must not abort the
# archive.  Here the second is sent the moment tracerig says it read the
# first, with a backend still stopping: how the two once aborted it.
rm -f "$out"
rc=0
python3 - "$TRACERIG" "$two" "$out" >"$TEST_TMP/out" 2>&1 <<'PY' || rc=$?
import os, signal, subprocess, sys
tr = subprocess.Popen([sys.argv[1], '-c', sys.argv[2], '-o', sys.argv[3], '-d', '0',
                       '--set', 'testa.stop_delay=2s', '-v'],
                      stderr=subprocess.PIPE, text=True)
for line in tr.stderr:
    sys.stdout.write(line)
    if 'collecting' in line:
        tr.send_signal(signal.SIGTERM)
    elif 'terminated: stopping' in line:
        tr.send_signal(signal.SIGTERM)
sys.exit(tr.wait())
PY
check_eq "SIGTERM twice from one process at once (as timeout sends it): exit 0" 0 "$rc"
check "... the archive is written" test -s "$out"
check_grep "... the second is said to be the same request" \
	'SIGTERM from PID [0-9]+ again within 1 s: taken as the same request' "$TEST_TMP/out"

# And the real `timeout`, as operators run it: exit 124, the archive written.
rm -f "$out"
rc=0; timeout -s TERM 1 "$TRACERIG" -c "$two" -o "$out" -d 0 --set testa.stop_delay=1s \
	>"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
check_eq "under timeout: timeout's exit status, 124" 124 "$rc"
check "under timeout: the archive is written" test -s "$out"
check_no_grep "under timeout: nothing aborted" 'aborted' "$TEST_TMP/out"

# A second interrupt while a backend is still stopping aborts packaging.
rm -f "$out"
"$TRACERIG" -c "$two" -o "$out" -d 0 --set testa.stop_delay=5s >"$TEST_TMP/out" 2>&1 &
pid=$!
sleep 0.5
kill -INT "$pid"
sleep 0.5
interrupt_again INT "$pid"
rc=0; wait "$pid" || rc=$?
check_eq "a second interrupt exits 130" 130 "$rc"
check_grep "the abort is said, with where the data is" 'aborted by a second interrupt: no archive was written; what was collected so far is left in .*staging' "$TEST_TMP/out"
check "no archive after an abort" test ! -e "$out"

done_testing

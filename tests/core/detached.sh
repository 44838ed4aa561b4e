#!/usr/bin/env bash
# Detached sessions: `tracerig start` returns once collection runs,
# `tracerig status` lists it, `tracerig stop` from anywhere packages it and
# prints where the archive is; the control sockets are root's alone.
. "$top_srcdir/tests/lib.sh"
need_root
export TMPDIR="$TEST_TMP"
# The sockets' directory of this test, not the machine's /run/tracerig.
export TRACERIG_RUNTIME_DIR="$TEST_TMP/run"
two="$top_srcdir/tests/core/profiles/two.ini"
here="$TEST_TMP/started-here"
elsewhere="$TEST_TMP/elsewhere"
mkdir -p "$here" "$elsewhere"

# Whatever a failed check leaves running is stopped.
on_exit 'for s in "$TRACERIG_RUNTIME_DIR"/*.sock; do [ -S "$s" ] && "$TRACERIG" stop "$(basename "$s" .sock)" >/dev/null 2>&1; done'

rc=0
(cd "$here" && "$TRACERIG" start -c "$two" -d 0 >"$TEST_TMP/start.out" 2>&1 </dev/null) || rc=$?
check_eq "start returns 0 once collection runs" 0 "$rc"
check_grep "start names the session and how to stop it" "session 'two' collecting \(PID [0-9]+.*tracerig stop two" "$TEST_TMP/start.out"
check_eq "the sockets' directory is root's alone (0700)" "700 root" "$(stat -c '%a %U' "$TRACERIG_RUNTIME_DIR")"
check_eq "the control socket is mode 0600" "600" "$(stat -c '%a' "$TRACERIG_RUNTIME_DIR/two.sock")"
pid=$(sed -n 's/.*(PID \([0-9]*\).*/\1/p' "$TEST_TMP/start.out")
check "the session runs in the background" kill -0 "${pid:-0}"

(cd "$elsewhere" && "$TRACERIG" status) >"$TEST_TMP/status.out" 2>&1
check_grep "status lists the session by name" '^name: two$' "$TEST_TMP/status.out"
check_grep "status gives its PID" "^pid: $pid\$" "$TEST_TMP/status.out"
check_grep "status says it is collecting" '^state: collecting$' "$TEST_TMP/status.out"
check_grep "status gives the output as an absolute path" "^output: $here" "$TEST_TMP/status.out"

rc=0
(cd "$here" && "$TRACERIG" start -c "$two" -d 0 >"$TEST_TMP/again.out" 2>&1 </dev/null) || rc=$?
check_eq "a second session of the same name is refused" 1 "$rc"
check_grep "the refusal says how to stop the running one" "already running: .tracerig stop two" "$TEST_TMP/again.out"

rc=0
(cd "$elsewhere" && "$TRACERIG" stop two >"$TEST_TMP/stop.out" 2>"$TEST_TMP/stop.err") || rc=$?
check_eq "stop from another directory exits 0" 0 "$rc"
check_eq "stop prints the archive's absolute path" "$here/two.trace.zip" "$(cat "$TEST_TMP/stop.out")"
check "the archive is where the session was started" test -s "$here/two.trace.zip"
check "nothing is written where stop ran" test -z "$(ls -A "$elsewhere")"
unzip_archive "$here/two.trace.zip" "$TEST_TMP/x"
check_grep "the manifest says tracerig stop ended it" '"ended_by": "tracerig stop"' "$TEST_TMP/x/manifest.json"
check "the collected data is in the archive" test -s "$TEST_TMP/x/testa.txt"
for _ in $(seq 100); do kill -0 "${pid:-0}" 2>/dev/null || break; sleep 0.1; done
check "the session exits after answering" sh -c "! kill -0 $pid 2>/dev/null"
check "its socket is gone" test ! -e "$TRACERIG_RUNTIME_DIR/two.sock"
"$TRACERIG" status >"$TEST_TMP/status2.out" 2>&1
check_grep "status then says nothing runs" 'no tracerig session is running' "$TEST_TMP/status2.out"

rc=0
"$TRACERIG" stop >"$TEST_TMP/none.out" 2>&1 || rc=$?
check_eq "stop with nothing running fails" 1 "$rc"
check_grep "and says nothing runs" 'no tracerig session is running' "$TEST_TMP/none.out"

# Non-root callers are refused before anything is touched.
if command -v setpriv >/dev/null; then
	for cmd in status stop "start -c $two"; do
		rc=0
		setpriv --reuid=65534 --regid=65534 --clear-groups "$TRACERIG" $cmd \
			>"$TEST_TMP/nonroot.out" 2>&1 </dev/null || rc=$?
		check_eq "tracerig ${cmd%% *} as nobody exits 1" 1 "$rc"
		check_grep "tracerig ${cmd%% *} as nobody says it is root's" "detached sessions are root's" "$TEST_TMP/nonroot.out"
	done
else
	skip "non-root callers are refused" "setpriv (util-linux) is not installed"
fi

# A session that fails to start: start says why and fails; no socket stays.
rc=0
(cd "$here" && "$TRACERIG" start -c "$two" -d 0 --name failing --set testa.fail_in=start \
	>"$TEST_TMP/fail.out" 2>&1 </dev/null) || rc=$?
check_eq "a session that cannot start makes start fail" 1 "$rc"
check_grep "start shows the session's own error" 'failing in start as the profile asks' "$TEST_TMP/fail.out"
check "no socket is left for it" test ! -e "$TRACERIG_RUNTIME_DIR/failing.sock"

# Names are checked; --name belongs to start.
rc=0
"$TRACERIG" start -c "$two" --name a/../evil >"$TEST_TMP/name.out" 2>&1 </dev/null || rc=$?
check_eq "a name with a slash is refused as usage" 2 "$rc"
check_grep "and says what a name may hold" "cannot be in a session name" "$TEST_TMP/name.out"
rc=0
"$TRACERIG" -c "$two" --name x >"$TEST_TMP/name2.out" 2>&1 </dev/null || rc=$?
check_eq "--name without start is a usage error" 2 "$rc"
# `tracerig stop -x` would be an option: such a session could not be named.
rc=0
"$TRACERIG" start -c "$two" -d 0 --name -x >"$TEST_TMP/name3.out" 2>&1 </dev/null || rc=$?
check_eq "a name starting with '-' is refused as usage" 2 "$rc"
check_grep "and says why" "does not start with '.' or '-'" "$TEST_TMP/name3.out"
check "no session of that name runs" test ! -e "$TRACERIG_RUNTIME_DIR/-x.sock"

# `tracerig snapshot` of a session that records: its refusal, and only that.
(cd "$here" && "$TRACERIG" start -c "$two" -d 0 --name rec -o "$here/rec.trace.zip" \
	>"$TEST_TMP/rec.out" 2>&1 </dev/null)
rc=0
"$TRACERIG" snapshot rec >"$TEST_TMP/snap.out" 2>"$TEST_TMP/snap.err" || rc=$?
check_eq "snapshot of a record-mode session exits 1" 1 "$rc"
check_grep "it says the session records and what to do" "records \(mode = record\).*tracerig stop rec" "$TEST_TMP/snap.err"
check_no_grep "and nothing else" "ended without saying" "$TEST_TMP/snap.err"
check_eq "it prints no path" "" "$(cat "$TEST_TMP/snap.out")"

# Two stops of the same session, the second while the first one's is
# packaging (a slow backend's stop): each is told where the archive is.
"$TRACERIG" stop rec >/dev/null 2>&1
(cd "$here" && "$TRACERIG" start -c "$two" -d 0 --name slow -o "$here/slow.trace.zip" \
	--set testa.stop_delay=3s >"$TEST_TMP/slow.out" 2>&1 </dev/null)
rc1=0
"$TRACERIG" stop slow >"$TEST_TMP/stop1.out" 2>"$TEST_TMP/stop1.err" &
first=$!
for _ in $(seq 100); do grep -q "stopping 'slow'" "$TEST_TMP/stop1.err" && break; sleep 0.05; done
rc2=0
"$TRACERIG" stop slow >"$TEST_TMP/stop2.out" 2>"$TEST_TMP/stop2.err" || rc2=$?
wait "$first" || rc1=$?
check_eq "the first stop exits 0" 0 "$rc1"
check_eq "the first stop prints the archive" "$here/slow.trace.zip" "$(cat "$TEST_TMP/stop1.out")"
check_eq "the stop that came while it packaged exits 0" 0 "$rc2"
check_eq "and prints the archive too" "$here/slow.trace.zip" "$(cat "$TEST_TMP/stop2.out")"
check "the archive is written" test -s "$here/slow.trace.zip"

# A session killed outright leaves a dead socket: the next start of that
# name takes it over, and SIGTERM (systemd, timeout) stops and packages.
(cd "$here" && "$TRACERIG" start -c "$two" -d 0 --name k -o "$here/killed.trace.zip" \
	>"$TEST_TMP/k.out" 2>&1 </dev/null)
kpid=$(sed -n 's/.*(PID \([0-9]*\).*/\1/p' "$TEST_TMP/k.out")
kill -KILL "${kpid:-0}"
for _ in $(seq 100); do kill -0 "${kpid:-0}" 2>/dev/null || break; sleep 0.1; done
check "a killed session's socket file stays behind" test -S "$TRACERIG_RUNTIME_DIR/k.sock"
rc=0
(cd "$here" && "$TRACERIG" start -c "$two" -d 0 --name k -o "$here/k2.trace.zip" \
	>"$TEST_TMP/k2.out" 2>&1 </dev/null) || rc=$?
check_eq "a new session takes over the dead socket's name" 0 "$rc"
k2pid=$(sed -n 's/.*(PID \([0-9]*\).*/\1/p' "$TEST_TMP/k2.out")
kill -TERM "${k2pid:-0}"
for _ in $(seq 300); do kill -0 "${k2pid:-0}" 2>/dev/null || break; sleep 0.1; done
check "SIGTERM to a detached session packages it" test -s "$here/k2.trace.zip"
check "and removes its socket" test ! -e "$TRACERIG_RUNTIME_DIR/k.sock"
# The killed one's watchdog packaged what it had collected.
for _ in $(seq 300); do [ -s "$here/killed.trace.zip" ] && break; sleep 0.1; done
check "the killed session's watchdog packaged it" test -s "$here/killed.trace.zip"

# A directory others can write to is refused, not used.
bad="$TEST_TMP/badrun"
mkdir -p "$bad" && chmod 0777 "$bad"
rc=0
TRACERIG_RUNTIME_DIR="$bad" "$TRACERIG" start -c "$two" -d 0 >"$TEST_TMP/bad.out" 2>&1 </dev/null || rc=$?
check_eq "a world-writable sockets' directory is refused" 1 "$rc"
check_grep "the refusal says what to do" "not a directory of root's that only root can use.*remove it" "$TEST_TMP/bad.out"

done_testing

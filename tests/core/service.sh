#!/usr/bin/env bash
# Running as a service: `tracerig start --foreground` stays in the
# foreground (a service manager's child) with the control socket of a
# detached session: `tracerig status` lists it and `tracerig snapshot`
# from another directory gets an archive of its last window; it tells
# $NOTIFY_SOCKET READY=1 once collection runs (Type=notify) and keeps the
# variable from what it launches; SIGTERM ends it with a final snapshot and
# exit 0; a second session of the same name is refused.  Then the unit,
# conf/systemd/tracerig@.service.in: systemd-analyze verify, and its
# ExecStart line, with the test's paths, run for real (-d 2) on a record
# profile, which it turns into a flight recorder.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
export TMPDIR="$TEST_TMP"
export TRACERIG_RUNTIME_DIR="$TEST_TMP/run"
command -v python3 >/dev/null || skip_all "needs python3 (the notify socket's listener)"
adir="$TEST_TMP/archives"
elsewhere="$TEST_TMP/elsewhere"
mkdir -p "$adir" "$elsewhere"
on_exit 'for s in "$TRACERIG_RUNTIME_DIR"/*.sock; do [ -S "$s" ] && "$TRACERIG" stop "$(basename "$s" .sock)" >/dev/null 2>&1; done'

ini="$TEST_TMP/svc.ini"
cat >"$ini" <<'EOF'
[tracerig]
name = svc
mode = flight
window = 3s
keep = 5
required = perf_events

[perf_events]
callchain = fp
EOF

# What systemd does for Type=notify: a datagram socket whose first message
# is written to a file.
notify_listen() { # SOCKET OUTFILE
	python3 - "$1" "$2" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(120)
try:
    msg = s.recv(4096).decode()
except socket.timeout:
    msg = "timeout"
open(sys.argv[2] + ".tmp", "w").write(msg)
import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])
PY
	listener=$!
	for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.1; done
}
wait_file() { for _ in $(seq 600); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }

# ---- the foreground session with its control socket
notify_listen "$TEST_TMP/notify.sock" "$TEST_TMP/notified"
NOTIFY_SOCKET="$TEST_TMP/notify.sock" "$TRACERIG" start --foreground -c "$ini" -o "$adir" \
	>"$TEST_TMP/fg.out" 2>"$TEST_TMP/fg.err" </dev/null &
fg=$!
on_exit "kill $fg $listener 2>/dev/null"
wait_file "$TEST_TMP/notified"
check_eq "it tells \$NOTIFY_SOCKET it is ready, and its PID" "READY=1
MAINPID=$fg" "$(cat "$TEST_TMP/notified" 2>/dev/null)"
check "it runs in the foreground: the PID started is the session" kill -0 "$fg"
check "its control socket is there once ready" test -S "$TRACERIG_RUNTIME_DIR/svc.sock"
check "no log file: the log is stderr" test ! -e "$TRACERIG_RUNTIME_DIR/svc.log"

(cd "$elsewhere" && "$TRACERIG" status) >"$TEST_TMP/status.out" 2>&1
check_grep "status lists it by the profile's file name" '^name: svc$' "$TEST_TMP/status.out"
check_grep "status gives the foreground process's PID" "^pid: $fg\$" "$TEST_TMP/status.out"
check_grep "status says it is a flight recorder" '^mode: flight' "$TEST_TMP/status.out"
check_grep "status says where the archives go" "^output: $adir\$" "$TEST_TMP/status.out"
check_grep "status says the log is stderr" '^log: standard error' "$TEST_TMP/status.out"

rc=0
(cd "$elsewhere" && "$TRACERIG" snapshot svc >"$TEST_TMP/snap.out" 2>"$TEST_TMP/snap.err") || rc=$?
check_eq "tracerig snapshot svc from another directory exits 0" 0 "$rc"
snap=$(cat "$TEST_TMP/snap.out")
check_grep "it prints the snapshot's absolute path in the output directory" "^$adir/svc-[0-9]{8}T[0-9]{6}Z\\.trace\\.zip\$" "$TEST_TMP/snap.out"
check "the snapshot is written" test -s "$snap"
unzip_archive "$snap" "$TEST_TMP/s1"
check_grep "its manifest says tracerig snapshot triggered it" '"trigger": "tracerig snapshot"' "$TEST_TMP/s1/manifest.json"
check "it holds the samples' perf.data" test -s "$TEST_TMP/s1/perf.data"
check "nothing is written where snapshot ran" test -z "$(ls -A "$elsewhere")"
check_grep "the session's log (stderr) names the snapshot" "snapshot $snap" "$TEST_TMP/fg.err"

rc=0
"$TRACERIG" start --foreground -c "$ini" -o "$adir" >"$TEST_TMP/again.out" 2>&1 </dev/null || rc=$?
check_eq "a second foreground session of the same name is refused" 1 "$rc"
check_grep "the refusal names the running one" "session named 'svc' is already running" "$TEST_TMP/again.out"
rc=0
"$TRACERIG" start -c "$ini" -o "$adir" >"$TEST_TMP/again2.out" 2>&1 </dev/null || rc=$?
check_eq "a detached session of the same name is refused too" 1 "$rc"
check "the running session is untouched" kill -0 "$fg"

kill -TERM "$fg"
rc=0
wait "$fg" || rc=$?
check_eq "SIGTERM (systemd's stop) ends it with exit 0" 0 "$rc"
final=$(sed -n 's/^tracerig: snapshot //p' "$TEST_TMP/fg.err" | tail -1)
check "SIGTERM writes a final snapshot" test -n "$final" -a "$final" != "$snap" -a -s "$final"
unzip_archive "$final" "$TEST_TMP/s2"
check_grep "the final snapshot's trigger is the stop" '"trigger": "stop"' "$TEST_TMP/s2/manifest.json"
check_grep "and it says a signal ended the session" '"session_ended_by": "signal' "$TEST_TMP/s2/manifest.json"
check "its socket is gone" test ! -e "$TRACERIG_RUNTIME_DIR/svc.sock"
check_eq "two archives: the snapshot and the final one" 2 "$(ls "$adir"/svc-*.trace.zip | wc -l)"

# `tracerig stop` from another directory ends it too, printing the final
# snapshot's path (under systemd the unit is then inactive, not failed).
notify_listen "$TEST_TMP/notify4.sock" "$TEST_TMP/notified4"
NOTIFY_SOCKET="$TEST_TMP/notify4.sock" "$TRACERIG" start --foreground -c "$ini" --name stopme \
	-o "$adir" >"$TEST_TMP/fg2.out" 2>"$TEST_TMP/fg2.err" </dev/null &
fg2=$!
on_exit "kill $fg2 2>/dev/null"
wait_file "$TEST_TMP/notified4"
rc=0
(cd "$elsewhere" && "$TRACERIG" stop stopme >"$TEST_TMP/stop.out" 2>"$TEST_TMP/stop.err") || rc=$?
check_eq "tracerig stop NAME of a foreground session exits 0" 0 "$rc"
check_grep "and prints the final snapshot's path" "^$adir/svc-[0-9]{8}T[0-9]{6}Z(-[0-9]+)?\\.trace\\.zip\$" "$TEST_TMP/stop.out"
check "that snapshot is written" test -s "$(cat "$TEST_TMP/stop.out")"
rc=0
wait "$fg2" || rc=$?
check_eq "the foreground session then exits 0" 0 "$rc"

# A launched command does not inherit NOTIFY_SOCKET: only tracerig speaks
# for the service.
notify_listen "$TEST_TMP/notify2.sock" "$TEST_TMP/notified2"
rc=0
NOTIFY_SOCKET="$TEST_TMP/notify2.sock" "$TRACERIG" start --foreground -c "$ini" --name envchk \
	-o "$adir" -- sh -c 'echo "${NOTIFY_SOCKET-unset}" >"$1"' sh "$TEST_TMP/cmd.env" \
	>"$TEST_TMP/env.out" 2>&1 </dev/null || rc=$?
check_eq "a foreground session with a command ends with it, exit 0" 0 "$rc"
check_eq "the command does not see NOTIFY_SOCKET" unset "$(cat "$TEST_TMP/cmd.env" 2>/dev/null)"

# The command line's rules.
rc=0
"$TRACERIG" --foreground -c "$ini" >"$TEST_TMP/u1.out" 2>&1 </dev/null || rc=$?
check_eq "--foreground without start is a usage error" 2 "$rc"
check_grep "and says it goes with start" "foreground goes with .tracerig start" "$TEST_TMP/u1.out"
rc=0
"$TRACERIG" start --check -c "$ini" >"$TEST_TMP/u2.out" 2>&1 </dev/null || rc=$?
check_eq "start --check without --foreground is a usage error" 2 "$rc"

# ---- the unit
unit_in="$top_srcdir/conf/systemd/tracerig@.service.in"
check "make builds conf/systemd/tracerig@.service with no @...@ left" \
	sh -c "test -s '$top_builddir/conf/systemd/tracerig@.service' && ! grep -n '@[a-z]*@' '$top_builddir/conf/systemd/tracerig@.service'"
# The test's own installation: the built binary, a profiles directory, and
# the state directory in place of /var/lib/tracerig.
etc="$TEST_TMP/etc"
state="$TEST_TMP/state"
mkdir -p "$etc/tracerig/profiles" "$state" "$TEST_TMP/unit"
# A recording profile (no mode): the unit makes it a flight recorder.
sed '/^mode = /d; s/^name = svc/name = hostcpu/' "$ini" >"$etc/tracerig/profiles/hostcpu.ini"
unit="$TEST_TMP/unit/tracerig@.service"
sed -e "s|@bindir@|$top_builddir|g" -e "s|@sysconfdir@|$etc|g" \
	-e "s|/var/lib/tracerig|$state|g" "$unit_in" >"$unit"

if ! command -v systemd-analyze >/dev/null; then
	skip "systemd-analyze verify accepts the unit" "systemd-analyze is not installed"
else
	# Offline: it loads the file, parses every line and checks that
	# ExecStart's binary exists; --man=no since the man pages are not
	# installed here.  Unknown or bad settings only warn, so its output
	# must be empty too.
	rc=0
	(cd "$TEST_TMP/unit" && systemd-analyze verify --man=no ./tracerig@hostcpu.service) \
		>"$TEST_TMP/verify.out" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ] && grep -q "Failed to \(initialize\|set up\) manager\|Operation not permitted" "$TEST_TMP/verify.out"; then
		skip "systemd-analyze verify accepts the unit" "systemd-analyze cannot run here: $(head -1 "$TEST_TMP/verify.out")"
	else
		check_eq "systemd-analyze verify accepts the unit (exit 0)" 0 "$rc"
		check_eq "and warns of nothing" "" "$(cat "$TEST_TMP/verify.out")"
	fi
fi

# ExecStart as systemd reads it: continuation lines joined, %i the
# instance, a word $VAR replaced by the variable's words (none when unset).
unit_command() { # INSTANCE
	python3 - "$unit" "$1" <<'PY'
import os, shlex, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
line = next(l for l in text.splitlines() if l.startswith("ExecStart="))
for arg in shlex.split(line[len("ExecStart="):].replace("%i", sys.argv[2])):
    if arg.startswith("$"):
        for word in os.environ.get(arg[1:], "").split():
            print(word)
    else:
        print(arg)
PY
}
mapfile -t cmd < <(unit_command hostcpu)
check_eq "ExecStart runs the built tracerig start --foreground" "$top_builddir/tracerig start --foreground" "${cmd[*]:0:3}"
rc=0
"${cmd[@]}" --check >"$TEST_TMP/unitcheck.out" 2>&1 </dev/null || rc=$?
check_eq "ExecStart's command line with --check exits 0" 0 "$rc"
notify_listen "$TEST_TMP/notify3.sock" "$TEST_TMP/notified3"
rc=0
(cd / && NOTIFY_SOCKET="$TEST_TMP/notify3.sock" "${cmd[@]}" -d 2) \
	>"$TEST_TMP/unitrun.out" 2>"$TEST_TMP/unitrun.err" </dev/null || rc=$?
check_eq "ExecStart's command line runs for 2 s and exits 0" 0 "$rc"
check_grep "the unit's -v: the journal says what triggered the final snapshot" 'snapshot [0-9]+ \(stop\)' "$TEST_TMP/unitrun.err"
check_eq "and told the notify socket it was ready" READY=1 "$(head -1 "$TEST_TMP/notified3" 2>/dev/null)"
final=$(ls "$state"/hostcpu-*.trace.zip 2>/dev/null | tail -1)
check "it wrote a snapshot into the state directory" test -n "$final" -a -s "$final"
unzip_archive "$final" "$TEST_TMP/s3"
check_grep "the record profile ran as a flight recorder" '"mode": "flight"' "$TEST_TMP/s3/manifest.json"
check "nothing of the session is left in the sockets' directory" \
	test ! -e "$TRACERIG_RUNTIME_DIR/hostcpu.sock"
# $TRACERIG_OPTIONS, as a drop-in would set it, reaches the command line.
mapfile -t cmd < <(TRACERIG_OPTIONS="--set tracerig.keep=1 -v" unit_command hostcpu)
rc=0
(cd / && "${cmd[@]}" -d 1) >"$TEST_TMP/unitrun2.out" 2>"$TEST_TMP/unitrun2.err" </dev/null || rc=$?
check_eq "with TRACERIG_OPTIONS it runs and exits 0" 0 "$rc"
check_eq "TRACERIG_OPTIONS's keep = 1 leaves one archive" 1 "$(ls "$state"/hostcpu-*.trace.zip | wc -l)"

done_testing

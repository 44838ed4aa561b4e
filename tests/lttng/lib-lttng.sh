# Shared by the lttng integration tests.  Source after tests/lib.sh.
LTTNG_APP="$top_builddir/tests/lttng/lttng-app"
SESSIOND_PID="$top_builddir/tests/lttng/sessiond-pid"
LTTNG_LOCK="${TMPDIR:-/tmp}/tracerig-lttng-tests.lock"

lttng_prereqs() {
	need_root
	command -v lttng-sessiond >/dev/null || skip_all "lttng-sessiond not installed (apt-get install lttng-tools)"
	command -v babeltrace2 >/dev/null || skip_all "babeltrace2 not installed (apt-get install babeltrace2)"
	[ -x "$LTTNG_APP" ] || skip_all "$LTTNG_APP not built (make check builds it)"
	[ -x "$SESSIOND_PID" ] || skip_all "$SESSIOND_PID not built (make check builds it)"
	[ -e "$top_builddir/plugins/lttng/lttng.la" ] || skip_all "lttng plugin not built (configure found no liblttng-ctl)"
	# One session daemon serves every test of this user: take turns.
	exec 9>"$LTTNG_LOCK"
	flock -w 600 9 || skip_all "another lttng test holds $LTTNG_LOCK for 10 minutes"
}

# The daemon that answers (not its pid file: see sessiond-pid.c).
sessiond_pid() { "$SESSIOND_PID"; }

# What a failed start leaves to look at: the daemons, and their run dir.
sessiond_state() {
	pgrep -a 'lttng-(sessiond|consumerd)' 2>&1
	ls -la /var/run/lttng 2>&1
	cat /var/run/lttng/lttng-sessiond.pid 2>&1
}

# Starts a session daemon for this test and stops exactly that one at exit.
# Uses an already running daemon (someone else's) without touching it.
own_sessiond() {
	if sessiond_pid >/dev/null; then return 0; fi
	# lttng_prereqs found the daemon installed: one that does not start
	# here is a failure to see, not a reason to skip.
	if ! lttng-sessiond --daemonize --no-kernel 2>"$TEST_TMP/sessiond.err"; then
		not_ok "starting a session daemon for this test" "$(cat "$TEST_TMP/sessiond.err")" "$(sessiond_state)"
		done_testing; exit 1
	fi
	if ! OWN_SESSIOND=$(sessiond_pid); then
		not_ok "the session daemon started for this test answers" "$(sessiond_state)"
		done_testing; exit 1
	fi
	on_exit "stop_own_sessiond"
}
# A daemon still tearing down removes the files of the next one (its pid
# file, its consumers' sockets): the next test starts only once it is gone.
stop_own_sessiond() {
	[ -n "${OWN_SESSIOND:-}" ] || return 0
	kill "$OWN_SESSIOND" 2>/dev/null
	for _ in $(seq 300); do gone "$OWN_SESSIOND" && break; sleep 0.1; done
	gone "$OWN_SESSIOND" || kill -9 "$OWN_SESSIOND" 2>/dev/null
	for _ in $(seq 50); do gone "$OWN_SESSIOND" && break; sleep 0.1; done
	OWN_SESSIOND=
}

# write_profile FILE KEY=VALUE...: an [lttng] profile with these keys.
write_profile() {
	local f=$1; shift
	{
		printf '[tracerig]\nname = lttngtest\nrequired = lttng\n\n[lttng]\n'
		for kv in "$@"; do printf '%s = %s\n' "${kv%%=*}" "${kv#*=}"; done
	} >"$f"
}

# babeltrace2 text of an unpacked archive's lttngTrace.
bt_text() { babeltrace2 "$1/lttngTrace" 2>"$TEST_TMP/bt.err"; }

# ---- process and session helpers of the clean-up tests (kill -9, abort,
# a dying daemon); every wait is a bounded poll.

# gone PID: the process has exited (a zombie counts: it runs no more).
gone() { ! [ -d "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
# children_of PID: its child processes, one per line.
children_of() { for s in /proc/[0-9]*/stat; do awk -v p="$1" '$4 == p { print $1 }' "$s" 2>/dev/null; done; }
# wait_active TRACERIG_PID: until its session records (at most 30 s); a
# flight session's is "[active snapshot]".
wait_active() {
	for _ in $(seq 300); do
		lttng list 2>/dev/null | grep -Eq "tracerig-$1-[0-9]* \[active( snapshot)?\]" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# wait_for DESCRIPTION COMMAND...: one TAP line, once COMMAND succeeds
# (at most 30 s); on failure it shows the sessions and tracerig's output.
wait_for() {
	local what=$1; shift
	for _ in $(seq 300); do "$@" && { ok "$what"; return 0; }; sleep 0.1; done
	not_ok "$what" "still not true after 30 s" "$(lttng list 2>&1 | head -5)" "$(cat "$TEST_TMP/out")"
}
# said PATTERN: tracerig's output ($TEST_TMP/out) has it.
said() { grep -q "$1" "$TEST_TMP/out"; }

# TAP helpers for the integration tests.  Source it, call the checks, end with
# `done_testing`.  Every check prints one TAP line; a skip says why.
set -u
: "${TRACERIG:?run through make check or scripts/test.sh}"
tap_n=0
tap_failed=0
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tracerig-test.XXXXXX")
trap 'tap_cleanup' EXIT
tap_cleanup_hooks=""

on_exit() { tap_cleanup_hooks="$1; $tap_cleanup_hooks"; }
# interrupt_again SIG PID: a second SIG to a tracerig that is stopping on
# the first, as a second request (it aborts): sent from another process
# than the test's shell, since the same process's same signal within a
# second is the first request repeated (`timeout` sends it twice).
interrupt_again() { sh -c 'kill -s "$1" "$2"' sh "$1" "$2"; }
# cache_locked LOCK COMMAND...: runs COMMAND (a shell function may be)
# holding an exclusive lock on the file LOCK, so that a cache tests fill
# (a built app, an installed tool) is filled by one test at a time and the
# others, under `make check -jN`, wait until it is whole.  COMMAND checks
# whether the cache is whole once it holds the lock.  What it starts does
# not inherit the lock: a build server left running would hold it.
cache_locked() {
	_lock=$1
	shift
	mkdir -p "$(dirname "$_lock")" && exec 7>>"$_lock" && flock -x 7 || return 1
	"$@" 7>&-
	_rc=$?
	exec 7>&-
	return $_rc
}
# A container (unshare --fork) is ended with SIGKILL: unshare holds SIGTERM
# while it waits for its child, and a namespace's init acts on SIGTERM only
# through a handler (.NET as PID 1 with a /proc of its own runs on to its
# end).  KILL is the process to kill, REAP the unshare to wait for (KILL
# when not given); with --kill-child, unshare's death ends the rest.
on_exit_kill_container() { # KILL [REAP]
	on_exit "kill -KILL $1 2>/dev/null; wait ${2:-$1} 2>/dev/null"
}
tap_quiet_cleanup=0
tap_cleanup() {
	# After skip_all's plan nothing may print: what a script started (a
	# daemon, a session) is still stopped, silently.
	if [ "$tap_quiet_cleanup" = 1 ]; then
		eval "$tap_cleanup_hooks" >/dev/null 2>&1
	else
		eval "$tap_cleanup_hooks"
	fi
	if [ "${KEEP_TEST_TMP:-0}" = 1 ] || [ "$tap_failed" -ne 0 ]; then
		echo "# test files kept in $TEST_TMP"
	else
		rm -rf "$TEST_TMP"
	fi
}

ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
not_ok() {
	tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $1"
	shift
	for line in "$@"; do printf '%s\n' "$line" | sed 's/^/#   /'; done
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1 # SKIP $2"; }
# skip_all REASON: the whole script cannot run here.
skip_all() { echo "1..0 # SKIP $1"; tap_quiet_cleanup=1; exit 0; }

# skip_in_sanitizer_pass WHY: a check whose outcome does not depend on how
# tracerig was built (the sources' style, packages built with the
# distribution's flags) runs once, in the plain pass.
skip_in_sanitizer_pass() {
	if grep -q '^SAN_CFLAGS = .*-fsanitize' "$top_builddir/Makefile" 2>/dev/null; then
		skip_all "the sanitizer pass: $1 (the plain pass runs it)"
	fi
}

# check NAME COMMAND...: passes when the command exits 0.
check() {
	local name=$1; shift
	local out
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "command: $*" "$out"; fi
}
# check_grep NAME PATTERN FILE: extended regex must match a line of FILE.
check_grep() {
	if grep -Eq -- "$2" "$3" 2>/dev/null; then ok "$1"
	else not_ok "$1" "no line of $3 matches /$2/" "$(head -c 2000 "$3" 2>/dev/null)"; fi
}
# (A file that is missing or unreadable fails: there is nothing to say no.)
check_no_grep() {
	local st=0
	grep -Eq -- "$2" "$3" 2>/dev/null || st=$?
	if [ "$st" = 1 ]; then ok "$1"
	elif [ "$st" = 0 ]; then not_ok "$1" "a line of $3 matches /$2/" "$(grep -Em5 -- "$2" "$3")"
	else not_ok "$1" "$3 cannot be read (grep exit $st)"; fi
}
# check_eq NAME EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $2" "actual:   $3"; fi
}
# wait_for_grep PATTERN FILE [TENTHS]: waits until a line of FILE (which may
# not exist yet) matches the extended regex, checking every tenth of a
# second, TENTHS times at most (100: 10 s); 1 when none ever did.  Only a
# wait: the check after it says what the test needs.
wait_for_grep() {
	for _ in $(seq "${3:-100}"); do
		grep -Eq -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# run_tracerig ARGS...: runs tracerig, output in $TEST_TMP/out, status in $rc.
run_tracerig() {
	rc=0
	# Staging directories (under $TMPDIR) stay inside the test's files.
	TMPDIR="$TEST_TMP" "$TRACERIG" "$@" >"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
}
# unzip_archive ARCHIVE DIR
unzip_archive() { rm -rf "$2"; mkdir -p "$2" && unzip -q -o "$1" -d "$2"; }
need_root() { [ "$(id -u)" = 0 ] || skip_all "needs root (perf_events, BPF and namespaces)"; }
done_testing() { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }

# check_unit_cases LABEL PROGRAM CASE...: runs a unit test PROGRAM (its TAP
# on stdout) and checks it exits 0 and ran each CASE, neither failed nor
# skipped: for unit cases that need inputs a script makes first (in the
# suite's order the unit test ran before them, and skipped them).
check_unit_cases() {
	local label=$1 prog=$2 out="$TEST_TMP/unit-cases.$RANDOM" rc=0 c
	shift 2
	"$prog" >"$out" 2>&1 || rc=$?
	check_eq "$label: exit 0" 0 "$rc"
	for c in "$@"; do
		check_grep "$label: $c ran and passed" "^ok [0-9]* - $c\$" "$out"
	done
}

# run_change_check LABEL HINT CMD...: one of the checks of the lines changed
# since formatting and linting came in (scripts/check-format.sh,
# check-tidy.py): ok on exit 0; the whole script skipped on 3 (the commit
# they compare with is not in this clone's history); otherwise not ok,
# with HINT and what the check printed.
run_change_check() {
	local label="$1" hint="$2" out rc=0
	shift 2
	out=$("$@" 2>&1) || rc=$?
	case $rc in
	0) ok "$label" ;;
	3) skip_all "$out" ;;
	*) not_ok "$label" "exit $rc; $hint" "$(printf '%s\n' "$out" | head -60)" ;;
	esac
}

# probe_clone FILE...: $TEST_TMP/tree, a clone of the source tree with
# FILE... (relative paths) copied over from the working tree, for a check
# to be tried on a defect planted there.  Fails (said) when no clone.
probe_clone() {
	local f
	git clone -q --no-hardlinks "$top_srcdir" "$TEST_TMP/tree" 2>"$TEST_TMP/clone.err" ||
		{ not_ok "a clone to try the check on" "$(cat "$TEST_TMP/clone.err")"; return 1; }
	for f in "$@"; do
		cp "$top_srcdir/$f" "$TEST_TMP/tree/$f"
	done
}

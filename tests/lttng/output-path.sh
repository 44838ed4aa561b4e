#!/bin/sh
# The archive's default name and any relative -o work from a plain working
# directory: LTTng needs an absolute output directory, and the staging
# directory next to a relative archive path is relative.  Failures name the
# real cause (never an invented "Cannot allocate memory"), and --check
# catches what the real run would hit.
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lttng/lib-lttng.sh"
lttng_prereqs

work="$TEST_TMP/work"
mkdir -p "$work/sub"
write_profile "$TEST_TMP/p.ini" 'events=tracerig_test:*'

# in_work ARGS...: tracerig run from $work, like run_tracerig.
in_work() { rc=0; (cd "$work" && exec "$TRACERIG" "$@") >"$TEST_TMP/out" 2>&1 </dev/null || rc=$?; }

# --- 1: default output name, from a plain directory ------------------------
in_work -c "$TEST_TMP/p.ini" -d 20 -- "$LTTNG_APP" -n 5
check_eq "default output: tracerig exits 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
check_no_grep "default output: no 'Cannot allocate memory'" 'Cannot allocate memory' "$TEST_TMP/out"
check "default output: the archive is lttngtest.trace.zip in the working directory" test -s "$work/lttngtest.trace.zip"
unzip_archive "$work/lttngtest.trace.zip" "$TEST_TMP/a"
bt_text "$TEST_TMP/a" >"$TEST_TMP/a.txt"
check_eq "default output: the trace holds the app's 5 hello events" 5 "$(grep -c 'tracerig_test:hello:' "$TEST_TMP/a.txt")"
check_eq "default output: no staging directory is left behind" "" "$(cd "$work" && ls -A | grep staging)"

# --- 2: a relative -o in a subdirectory ------------------------------------
in_work -c "$TEST_TMP/p.ini" -d 20 -o sub/rel.zip -- "$LTTNG_APP" -n 3
check_eq "relative -o: tracerig exits 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
unzip_archive "$work/sub/rel.zip" "$TEST_TMP/b"
bt_text "$TEST_TMP/b" >"$TEST_TMP/b.txt"
check_eq "relative -o: the trace holds the app's 3 hello events" 3 "$(grep -c 'tracerig_test:hello:' "$TEST_TMP/b.txt")"

# --- 3: the shipped lttng.ini with its default output ----------------------
in_work -c "$top_srcdir/conf/profiles/lttng.ini" -d 1
check_eq "profiles/lttng.ini, default output: exits 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
check "profiles/lttng.ini: lttng.trace.zip written" test -s "$work/lttng.trace.zip"

# --- 4: --check looks at where the archive will go ------------------------
# The core checks -o before any backend runs, for --check as for a run:
# the trace itself is staged under $TMPDIR, not next to the archive.
run_tracerig --check -c "$TEST_TMP/p.ini" -o "$TEST_TMP/nodir/x.zip"
check_eq "--check, -o in a missing directory: exit 2" 2 "$rc"
check_grep "--check names the directory and the cause" \
	"^tracerig: output $TEST_TMP/nodir/x.zip: directory $TEST_TMP/nodir: No such file or directory \\(create it first, or choose another place with -o\\)\$" "$TEST_TMP/out"
run_tracerig -c "$TEST_TMP/p.ini" -d 1 -o "$TEST_TMP/nodir/x.zip"
check_eq "the real run with that -o fails the same way, before collecting" 2 "$rc"

# --- 5: --check runs the session set-up a real run does --------------------
write_profile "$TEST_TMP/f.ini" 'events=tracerig_test:*' 'filter=seq <'
if sessiond_pid >/dev/null; then
	skip "--check without a daemon starts one for its test session" "a session daemon is running"
else
	run_tracerig --check -c "$TEST_TMP/f.ini" -o "$work/f.zip"
	check_eq "--check without a daemon, a filter the daemon refuses: exit 1" 1 "$rc"
	check_grep "--check without a daemon still tries the session" \
		"NOT USABLE: no session daemon runs: tracerig will start lttng-sessiond and stop it afterwards; a test session with this profile's settings failed: Invalid argument" "$TEST_TMP/out"
	check_eq "--check stops the daemon it started" "" "$(sessiond_pid || true)"
fi
own_sessiond
run_tracerig --check -c "$TEST_TMP/f.ini" -o "$work/f.zip"
check_eq "--check with a filter the daemon refuses: exit 1" 1 "$rc"
check_grep "--check says the test session failed, with the real cause" \
	"NOT USABLE: a test session with this profile's settings failed: Invalid argument \\(the lttng: error message says why\\)" "$TEST_TMP/out"
check_grep "... and liblttng-ctl's own message" \
	"tracerig: lttng: enabling userspace event 'tracerig_test:\\*' with filter 'seq <' failed: Invalid filter bytecode" "$TEST_TMP/out"
check_eq "--check leaves no session behind" "" "$(lttng list 2>/dev/null | grep -o 'tracerig-[0-9-]*check')"
check_eq "--check leaves no file behind" "sub" "$(cd "$work" && ls -A | grep -v '\.zip$')"
write_profile "$TEST_TMP/ok.ini" 'events=tracerig_test:*' 'filter=seq < 3'
run_tracerig --check -c "$TEST_TMP/ok.ini" -o "$work/ok.zip"
check_eq "--check with a valid filter and a running daemon: exit 0" 0 "$rc"

done_testing

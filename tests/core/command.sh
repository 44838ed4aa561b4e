#!/usr/bin/env bash
# -- COMMAND: traced from its exec, session ends when it exits, and the
# exit status tells its failure from tracerig's.
. "$top_srcdir/tests/lib.sh"

two="$top_srcdir/tests/core/profiles/two.ini"
out="$TEST_TMP/cmd.trace.zip"

run_tracerig -c "$two" -o "$out" --set testa.setenv=TRACERIG_TEST_VAR=seen -- \
	sh -c 'echo "$$ $TRACERIG_TEST_VAR" > "$0"; sleep 0.3' "$TEST_TMP/child"
check_eq "a command that succeeds: exit 0" 0 "$rc"
read -r child_pid child_var <"$TEST_TMP/child"
check_eq "the command got the environment a plugin asked for" seen "$child_var"
unzip_archive "$out" "$TEST_TMP/x"
check_grep "plugins were told the command's PID" "^command_pid $child_pid\$" "$TEST_TMP/x/testa.txt"
check_grep "a command run is not system-wide" '^system_wide 0$' "$TEST_TMP/x/testa.txt"
check_grep "the manifest records the command and its exit status" '"exit_status": 0' "$TEST_TMP/x/manifest.json"
check_grep "the session ended because the command exited" '"ended_by": "command exited"' "$TEST_TMP/x/manifest.json"

# The profile's duration (300ms) does not cut a command short.
start=$(date +%s%N)
run_tracerig -c "$two" -o "$out" -- sleep 1
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "the session lasts as long as the command, not the profile duration" test "$elapsed_ms" -ge 1000

run_tracerig -c "$two" -o "$out" -- sh -c 'exit 5'
check_eq "a command that fails: exit 3" 3 "$rc"
check_grep "the failure is reported with the command's status" 'the command exited with status 5' "$TEST_TMP/out"
unzip_archive "$out" "$TEST_TMP/y"
check_grep "the archive is still written, with the status in the manifest" '"exit_status": 5' "$TEST_TMP/y/manifest.json"

run_tracerig -c "$two" -o "$out" -- sh -c 'kill -9 $$'
check_eq "a command killed by a signal: exit 3" 3 "$rc"
check_grep "the signal is named" 'killed by signal 9' "$TEST_TMP/out"

rm -f "$out"
run_tracerig -c "$two" -o "$out" -- /nonexistent/program --flag
check_eq "a command that does not exist: exit 127" 127 "$rc"
check_grep "not found is said with what to check" "cannot run '/nonexistent/program': No such file or directory \(check the command name and PATH\)" "$TEST_TMP/out"
unzip_archive "$out" "$TEST_TMP/z"
check_grep "the manifest says why the command never ran" '"exec_error": "No such file or directory"' "$TEST_TMP/z/manifest.json"

run_tracerig -c "$two" -o "$out" -d 300ms -- sleep 5
check_eq "-d bounds a command's session" 0 "$rc"
unzip_archive "$out" "$TEST_TMP/w"
check_grep "a command outliving -d is ended, and the manifest says by whom" \
	'"ended_by": "tracerig: SIGTERM once collection stopped"' "$TEST_TMP/w/manifest.json"
check_grep "and how it ended" '"killed_by_signal": 15' "$TEST_TMP/w/manifest.json"

# Open files: tracerig raises its own soft limit to the hard one (an
# object file open per library of every traced process); the launched
# command keeps the limit it was given.
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -gt 256 ]; then
	rm -f "$TEST_TMP/lim"
	( ulimit -Sn 256
	  exec "$TRACERIG" -c "$two" -o "$TEST_TMP/lim.trace.zip" -- \
		sh -c 'ulimit -Sn >"$1"; exec sleep 30' sh "$TEST_TMP/lim" ) >"$TEST_TMP/lim.out" 2>&1 &
	lim_tr=$!
	for _ in $(seq 100); do [ -s "$TEST_TMP/lim" ] && break; sleep 0.05; done
	check_eq "open files: tracerig's own soft limit is raised to the hard one" "$hard" \
		"$(awk '/^Max open files/ { print $4 }' "/proc/$lim_tr/limits")"
	check_eq "open files: the launched command keeps the limit it was given" 256 "$(cat "$TEST_TMP/lim")"
	kill -TERM "$lim_tr"
	wait "$lim_tr" 2>/dev/null
else
	skip "open files limits" "the hard limit is $hard"
fi

done_testing

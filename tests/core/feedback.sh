#!/usr/bin/env bash
# What a user sees: one line when collection starts, whether or not stderr
# is a terminal; a summary a person reads (the raw counters with -v, in
# tracerig.log and the manifest); and on a terminal, a progress line that
# a launched command's output is never glued to.
. "$top_srcdir/tests/lib.sh"

two="$top_srcdir/tests/core/profiles/two.ini"
cd "$TEST_TMP" || exit 1

run_tracerig -c "$two" -p $$ -d 1 -o a.trace.zip
check_eq "a session exits 0" 0 "$rc"
check_grep "stderr not a terminal: one start line saying what, with what, where to, for how long" \
	"^tracerig: collecting pid $$ with testa, testb into a\\.trace\\.zip for 1s \\(Ctrl-C to stop\\)\$" \
	"$TEST_TMP/out"
check_eq "said once" 1 "$(grep -c 'collecting' "$TEST_TMP/out")"
check_grep "the summary reads as words: counts, then sizes" \
	'^  testa +ok +1 flushed entries, [0-9]+ bytes payload$' "$TEST_TMP/out"
check_no_grep "no raw counter names at the default verbosity" '[a-z]_[a-z]+=' "$TEST_TMP/out"
unzip_archive a.trace.zip a
check_grep "tracerig.log keeps the start line" 'collecting pid [0-9]+ with testa, testb' a/tracerig.log
check_grep "and the raw counters" 'testa +ok +flushed_entries=1, payload_bytes=[0-9]+' a/tracerig.log

run_tracerig -v -c "$two" -p $$ -d 1 -o b.trace.zip
check_grep "-v: the raw counters on stderr" 'testa +ok +flushed_entries=1, payload_bytes=[0-9]+' \
	"$TEST_TMP/out"
check_eq "-v: the start line once" 1 "$(grep -c 'collecting pid' "$TEST_TMP/out")"

run_tracerig -q -c "$two" -p $$ -d 1 -o c.trace.zip
check_no_grep "-q: no start line" 'collecting' "$TEST_TMP/out"

run_tracerig -c "$two" -o d.trace.zip -- true
check_grep "a launched command: named in the start line" \
	'^tracerig: collecting true with testa, testb into d\.trace\.zip' "$TEST_TMP/out"
run_tracerig -c "$two" -d 1 -o e.trace.zip
check_grep "system-wide: said so" '^tracerig: collecting system-wide with testa, testb' "$TEST_TMP/out"

# On a terminal (script(1) gives one): the progress line is there without
# a command, and not when a command writes to the same terminal.
if command -v script >/dev/null 2>&1; then
	TMPDIR="$TEST_TMP" script -qfec "'$TRACERIG' -c '$two' -d 2.5 -o f.trace.zip -p $$" /dev/null \
		</dev/null >"$TEST_TMP/tty1" 2>&1
	check_grep "a terminal: the progress line shows" '\[tracerig\] [0-9]+s elapsed' "$TEST_TMP/tty1"
	TMPDIR="$TEST_TMP" script -qfec "'$TRACERIG' -c '$two' -d 3 -o g.trace.zip -- sh -c 'sleep 1.5; echo FROM-CMD'" \
		/dev/null </dev/null >"$TEST_TMP/tty2" 2>&1
	check_grep "a command on the same terminal: its output on a line of its own" \
		$'^FROM-CMD\r?$' "$TEST_TMP/tty2"
	check_no_grep "and no progress line to glue it to" '\[tracerig\] [0-9]+s elapsed' "$TEST_TMP/tty2"
else
	skip "the progress line on a terminal" "script(1) is not installed (apt-get install bsdutils)"
fi
done_testing

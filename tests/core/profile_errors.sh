#!/usr/bin/env bash
# Profile mistakes are errors with file:line and a hint, and nothing runs.
. "$top_srcdir/tests/lib.sh"

profile() { cat >"$TEST_TMP/p.ini"; }

profile <<'X'
[tracerig]
name = t
duration = 1s

[testa]
payload = x
levle = 4
X
run_tracerig --check -c "$TEST_TMP/p.ini"
check_eq "unknown key exits 2" 2 "$rc"
check_grep "unknown key: file:line and did-you-mean" 'p\.ini:7: \[testa\] unknown key .levle. \(did you mean .level.\?\)' "$TEST_TMP/out"
check_grep "errors are counted and nothing is collected" '1 error in the profile; nothing was collected' "$TEST_TMP/out"

profile <<'X'
[tracerig]
duration = soon
[testa]
level = 12
enabled = perhaps
X
run_tracerig --check -c "$TEST_TMP/p.ini"
check_grep "bad duration: line and accepted forms" 'p\.ini:2: \[tracerig\] duration: .soon. is not a duration' "$TEST_TMP/out"
check_grep "integer out of range: line and the range" 'p\.ini:4: \[testa\] level: .12. is out of range \(1 to 9\)' "$TEST_TMP/out"
check_grep "bad boolean: line and what to use" 'p\.ini:5: \[testa\] enabled: .perhaps. is not a boolean \(use yes or no\)' "$TEST_TMP/out"
check_grep "every error is reported, not just the first" '3 errors in the profile' "$TEST_TMP/out"

profile <<'X'
[tracerig]
[perf_event]
X
run_tracerig --check -c "$TEST_TMP/p.ini"
check_grep "misspelt backend: did you mean" 'p\.ini:2: \[perf_event\] no backend of that name \(did you mean \[perf_events\]\?\)' "$TEST_TMP/out"

profile <<'X'
[sitecustom]
X
run_tracerig --check -c "$TEST_TMP/p.ini"
check_grep "missing plugin: says where it looked and how to provide it" "p\.ini:1: \[sitecustom\] plugin 'sitecustom' is not installed \(searched .*TRACERIG_PLUGIN_PATH" "$TEST_TMP/out"

profile <<'X'
[tracerig]
required = testa, lttng
[testa]
X
run_tracerig --check -c "$TEST_TMP/p.ini"
check_grep "required names a backend without a section" "p\.ini:2: \[tracerig\] required names 'lttng', which has no section" "$TEST_TMP/out"

profile <<'X'
[testa]
level = 3
level = 4
X
run_tracerig --check -c "$TEST_TMP/p.ini"
check_grep "a key set twice is an error with both lines" 'p\.ini:3: \[testa\] level is set twice \(first at line 2\)' "$TEST_TMP/out"

profile <<'X'
orphan = 1
[testa]
this line is not ini
X
run_tracerig --check -c "$TEST_TMP/p.ini"
check_grep "a key outside any section" 'p\.ini:1: key .orphan. is outside any section' "$TEST_TMP/out"
check_grep "an unparsable line" 'p\.ini:3: cannot parse this line' "$TEST_TMP/out"

profile <<'X'
[testa]
X
run_tracerig --check -c "$TEST_TMP/p.ini" --set testa.level=0
check_grep "--set values are validated like the file's" '^tracerig: --set: \[testa\] level: .0. is out of range' "$TEST_TMP/out"
run_tracerig --check -c "$TEST_TMP/p.ini" --set testa.colour=red
check_grep "--set unknown key is an error" "\[testa\] unknown key 'colour'" "$TEST_TMP/out"
run_tracerig --check -c "$TEST_TMP/p.ini" --set broken
check_grep "--set without SECTION.KEY=VALUE says the form" '--set broken: expected SECTION.KEY=VALUE' "$TEST_TMP/out"
run_tracerig --check -c "$TEST_TMP/p.ini" -d forever
check_grep "-d is validated as a duration" '^tracerig: -d: \[tracerig\] duration: .forever. is not a duration' "$TEST_TMP/out"
run_tracerig --check -c "$TEST_TMP/p.ini" --set testa.level=7 --set tracerig.packager=testb
check_grep "a source named as packager is refused" 'is a source plugin, not a packager' "$TEST_TMP/out"

# A section name longer than inih keeps (49 characters) is refused, with
# its keys, whether its line fits inih's first buffer or not; it is never
# cut into a section of another name.
for n in 100 300; do
	printf '[tracerig]\nname = t\n[%s]\nfoo = 1\n' "$(printf '%*s' "$n" '' | tr ' ' a)" | profile
	run_tracerig --check -c "$TEST_TMP/p.ini"
	check_eq "a $n-character section name: exit 2" 2 "$rc"
	check_eq "a $n-character section name: one error, the limit" \
		"tracerig: $TEST_TMP/p.ini:3: section name [aaaaaaaaaaaaaaaaaaaa...] is $n characters long: at most 49 (it names a backend or [tracerig])
tracerig: 1 error in the profile; nothing was collected" "$(cat "$TEST_TMP/out")"
done

# Long lines: up to 16384 characters, and a filter split with a backslash.
long=$(printf '%*s' 16374 '' | tr ' ' x)
printf '[testa]\npayload = %s\nlevel = 4\n' "$long" | profile
run_tracerig --check -c "$TEST_TMP/p.ini"
check_eq "a 16384-character line is accepted" 0 "$rc"
printf '[testa]\npayload = %sy\nlevel = 4\n' "$long" | profile
run_tracerig --check -c "$TEST_TMP/p.ini"
check_eq "a 16385-character line is refused with exit 2" 2 "$rc"
check_eq "a line too long: says the limit and what to do" "tracerig: $TEST_TMP/p.ini:2: line longer than 16384 characters (split a long list over indented continuation lines)
tracerig: 1 error in the profile; nothing was collected" "$(cat "$TEST_TMP/out")"
profile <<'X'
[tracerig]
duration = 1s
[testa]
payload = one \
   two \
   three
X
run_tracerig -c "$TEST_TMP/p.ini" -o "$TEST_TMP/cont.trace.zip"
check_eq "a backslash continuation: the run succeeds" 0 "$rc"
unzip_archive "$TEST_TMP/cont.trace.zip" "$TEST_TMP/cont"
check_grep "a backslash continuation joins with one space" '"payload": "one two three"' "$TEST_TMP/cont/manifest.json"

profile <<'X'
[tracerig]
duration = 200ms
X
run_tracerig -c "$TEST_TMP/p.ini" -o "$TEST_TMP/none.trace.zip"
check_eq "a profile with no backend is a usage error" 2 "$rc"
check_grep "no backend: says what to add" 'names no backend' "$TEST_TMP/out"

done_testing

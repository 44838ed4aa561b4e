#!/usr/bin/env bash
# init in order, start together, stop together, flush in order, fini;
# required and optional failures.
. "$top_srcdir/tests/lib.sh"

two="$top_srcdir/tests/core/profiles/two.ini"
J="$TEST_TMP/journal"
out="$TEST_TMP/two.trace.zip"
common=(--set testa.journal="$J" --set testb.journal="$J" -o "$out")

run_tracerig -c "$two" "${common[@]}"
check_eq "a clean run exits 0" 0 "$rc"
# Starts run together, and so do stops: their order among themselves is free.
check_eq "lifecycle order: every validate before any init, init in order, start together, stop together, flush in order, fini in reverse" \
	"testa validate,testb validate,testa init,testb init,start,start,stop,stop,testa flush,testb flush,testb fini,testa fini" \
	"$(sed -E 's/^test[ab] (start|stop)$/\1/' "$J" | paste -sd,)"
check "both sources started and stopped" test "$(grep -c -E '^test[ab] (start|stop)$' "$J")" = 4
unzip_archive "$out" "$TEST_TMP/x"
check_grep "each source's entry is in the archive" '^payload from-a$' "$TEST_TMP/x/testa.txt"
check_grep "a source sees the staging dir it flushes into" '^staging_is_archive_dir 1$' "$TEST_TMP/x/testa.txt"
check_grep "a source sees a system-wide target set" '^system_wide 1$' "$TEST_TMP/x/testb.txt"
check_grep "a source reads the [tracerig] section" '^session_name two$' "$TEST_TMP/x/testb.txt"
check_grep "a required source is told so" '^required 1$' "$TEST_TMP/x/testa.txt"
check_grep "an optional source is told so" '^required 0$' "$TEST_TMP/x/testb.txt"
check_grep "the manifest records per-plugin counters" '"payload_bytes": 6' "$TEST_TMP/x/manifest.json"
check_grep "keys a source binds arrive typed: defaults, ENUM as the index, LIST split" \
	'^bound level 3 interval_ms 1000 buffer 4194304 enabled 1 fail_in 0 fault 0 tags 2:\[red\],\[green\]$' \
	"$TEST_TMP/x/testb.txt"

# A plugin's validate: what its key table cannot say, said with the
# profile's line, every plugin's before any init, and nothing starts.
rm -f "$J" "$out"
run_tracerig -c "$two" "${common[@]}" --set testa.payload=refused-a --set testb.payload=refused-b
check_eq "a value a plugin's validate refuses: exit 2" 2 "$rc"
check_grep "said as the core says its own, with the key" \
	"\[testa\] payload: 'refused-a' is refused by the plugin's validate" "$TEST_TMP/out"
check_grep "every plugin's validate has its say" \
	"\[testb\] payload: 'refused-b' is refused by the plugin's validate" "$TEST_TMP/out"
check_eq "no plugin was initialised" "testa validate,testb validate" "$(paste -sd, "$J")"
check "nothing was written" test ! -e "$out"
run_tracerig --check -c "$two" --set testb.payload=refused-b
check_eq "--check: the same error, exit 2" 2 "$rc"
check_grep "--check: the backend's line says it" \
	"testb .*NOT USABLE: 1 error in \[testb\] \(on stderr\)" "$TEST_TMP/out"
check_grep "--check: the error itself" "\[testb\] payload: 'refused-b' is refused" "$TEST_TMP/out"

run_tracerig -c "$two" -o "$TEST_TMP/bound.trace.zip" --set testa.level=7 \
	--set testa.interval=250ms --set testa.buffer=1K --set testa.enabled=no \
	--set testa.fault=hang --set "testa.tags= x, y,,z " --set testb.tags=
check_eq "a run with every bound key set exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/bound.trace.zip" "$TEST_TMP/bound"
check_grep "set keys arrive bound: units applied, ENUM index, LIST split by the list rule" \
	'^bound level 7 interval_ms 250 buffer 1024 enabled 0 fail_in 0 fault 2 tags 3:\[x\],\[y\],\[z\]$' \
	"$TEST_TMP/bound/testa.txt"
check_grep "an empty LIST arrives as no items" ' tags 0:$' "$TEST_TMP/bound/testb.txt"

# A required backend that fails to start stops the started ones, exits 1.
rm -f "$J" "$out"
run_tracerig -c "$two" "${common[@]}" --set tracerig.required=testb --set testb.fail_in=start
check_eq "required backend failing in start exits 1" 1 "$rc"
check_eq "the started backend is stopped and everything finalized, nothing flushed" \
	"testa validate,testb validate,testa init,testb init,start,start,testa stop,testb fini,testa fini" \
	"$(sed -E 's/^test[ab] start$/start/' "$J" | paste -sd,)"
# The plugin's own error is the reason, said once, by the core, with the
# phase: not the plugin's line and then the errno's text again.
check_grep "the error names the backend, the phase and the plugin's reason" \
	'^tracerig: testb: start failed: failing in start as the profile asks$' "$TEST_TMP/out"
check_eq "the reason is said once" 1 "$(grep -c 'failing in start' "$TEST_TMP/out")"
check "no archive is left behind" test ! -e "$out"
check "no staging directory is left behind" bash -c "! ls -a '$TEST_TMP' | grep -q staging"

# A required backend that fails in init: nothing starts.
rm -f "$J"
run_tracerig -c "$two" "${common[@]}" --set testa.fail_in=init
check_eq "required backend failing in init exits 1" 1 "$rc"
check_no_grep "nothing starts after a required init failure" 'start' "$J"

# An optional backend failing is logged, skipped and recorded.
rm -f "$J" "$out"
run_tracerig -c "$two" "${common[@]}" --set testb.fail_in=start
check_eq "optional backend failing in start: run still succeeds" 0 "$rc"
check_grep "optional failure is said plainly" 'testb: start failed: .*optional backend: continuing without it' "$TEST_TMP/out"
unzip_archive "$out" "$TEST_TMP/y"
check "the required backend's data is still packaged" test -s "$TEST_TMP/y/testa.txt"
check "the failed backend wrote nothing" test ! -e "$TEST_TMP/y/testb.txt"
check "manifest marks the optional backend skipped with phase and error" \
	python3 -c "
import json,sys
m=json.load(open('$TEST_TMP/y/manifest.json'))
p={x['name']:x for x in m['plugins']}
assert p['testb']['status']=='skipped', p['testb']
assert p['testb']['failed_in']=='start'
assert p['testb']['error']=='failing in start as the profile asks', p['testb']
assert p['testa']['status']=='ok' and p['testa']['required'] is True
assert p['zip']['kind']=='packager'
"

check_grep "the closing warning: nothing of it is in the archive" \
	"optional backend testb failed \\(start: the error said above\\): the archive holds the other backends' data only" \
	"$TEST_TMP/out"
check_eq "the optional backend's reason is said once too" 1 "$(grep -c 'failing in start' "$TEST_TMP/out")"
# Failing later, it may have staged files already (mapharvest's maps while
# it collected): the closing words must not say they are not there.
rm -f "$out"
run_tracerig -c "$two" "${common[@]}" --set testb.fail_in=flush
check_eq "optional backend failing in flush: run still succeeds" 0 "$rc"
check_grep "the closing warning says what it staged may be there" \
	"optional backend testb failed \\(flush: .*\\): the archive holds whatever it staged before, maybe incomplete, and the other backends' data" \
	"$TEST_TMP/out"

# A required backend failing in flush: the others are still packaged, exit 1.
rm -f "$out"
run_tracerig -c "$two" "${common[@]}" --set testa.fail_in=flush
check_eq "required backend failing in flush exits 1" 1 "$rc"
unzip_archive "$out" "$TEST_TMP/z"
check "what the other backend collected is still in the archive" test -s "$TEST_TMP/z/testb.txt"
check_grep "the manifest says the required backend failed in flush" '"failed_in": "flush"' "$TEST_TMP/z/manifest.json"

done_testing

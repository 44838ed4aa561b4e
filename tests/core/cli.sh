#!/usr/bin/env bash
# The command line: help, version, usage errors, --list-plugins, --check.
. "$top_srcdir/tests/lib.sh"

run_tracerig --help
check_eq "--help exits 0" 0 "$rc"
check_grep "--help documents -c, -p and --set" '--set SEC.KEY=VALUE' "$TEST_TMP/out"

run_tracerig --version
check_grep "--version names the version and the plugin ABI" '^tracerig [0-9.]+ \(plugin ABI 1\)$' "$TEST_TMP/out"

run_tracerig
check_eq "no profile is a usage error (exit 2)" 2 "$rc"
check_grep "no profile says how to give one" 'use -c PROFILE' "$TEST_TMP/out"

run_tracerig -c "$top_srcdir/tests/core/profiles/two.ini" -p 1 -- /bin/true
check_eq "-p with a command is refused" 2 "$rc"

run_tracerig -c "$top_srcdir/tests/core/profiles/two.ini" -p notapid
check_eq "-p with a non-number is refused" 2 "$rc"
check_grep "-p error names the bad value" "'notapid' is not a process ID" "$TEST_TMP/out"

run_tracerig -c "$top_srcdir/tests/core/profiles/two.ini" -p 2147483000
check_eq "-p with a PID that does not exist is refused" 2 "$rc"
check_grep "-p error says what to do" 'no such process.*NSpid' "$TEST_TMP/out"

run_tracerig --list-plugins
check_eq "--list-plugins exits 0" 0 "$rc"
check_grep "--list-plugins lists a test plugin with its version" '^  testa +0\.0-test +source' "$TEST_TMP/out"
check_grep "--list-plugins lists the zip packager" '^  zip .* packager' "$TEST_TMP/out"
check_grep "--list-plugins reports an unusable plugin and why" '^  badabi +UNUSABLE .*ABI 999.*ABI 1' "$TEST_TMP/out"

run_tracerig --list-plugins -v
check_grep "--list-plugins -v shows each key with type and default" 'level +integer +default 3' "$TEST_TMP/out"
check_grep "--list-plugins -v shows the core's keys" 'duration +duration +default 10s' "$TEST_TMP/out"

run_tracerig --check -c "$top_srcdir/tests/core/profiles/two.ini"
check_eq "--check on a usable profile exits 0" 0 "$rc"
check_grep "--check says the profile is valid" 'two.ini: valid' "$TEST_TMP/out"
check_grep "--check reports each backend as usable" '^  testa +0\.0-test +required +usable' "$TEST_TMP/out"

run_tracerig --check -c "$top_srcdir/tests/core/profiles/two.ini" --set testa.fail_in=check
check_eq "--check fails when a required backend is unusable" 1 "$rc"
check_grep "--check gives the backend's advice" 'testa .*NOT USABLE: told to be unusable' "$TEST_TMP/out"

run_tracerig --check -c "$top_srcdir/tests/core/profiles/two.ini" --set testb.fail_in=check
check_eq "--check passes when only an optional backend is unusable" 0 "$rc"

# A relative profile name is found in the source tree's conf/ before install.
(cd / && "$TRACERIG" --check -c profiles/does-not-exist.ini >"$TEST_TMP/out" 2>&1); rc=$?
check_eq "an unknown profile is a usage error" 2 "$rc"
check_grep "an unknown profile says where it looked" "cannot find profile 'profiles/does-not-exist.ini'.*looked" "$TEST_TMP/out"

done_testing

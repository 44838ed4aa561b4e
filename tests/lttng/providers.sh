#!/bin/sh
# An enabled userspace provider that no traced process registered (the .NET
# runtime's, when libcoreclrtraceptprovider.so did not load) is said in the
# log, counted (ust_providers_seen / ust_providers_missing among the raw
# counters of tracerig.log and -v, and in the manifest), never silently
# missing.
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lttng/lib-lttng.sh"
lttng_prereqs
own_sessiond

hint="a .NET process registers the runtime's providers when it loads libcoreclrtraceptprovider.so, which needs liblttng-ust in its root and DOTNET_LTTng unset or 1: 'tracerig --check -c PROFILE -p PID' tells which is missing"

# --- 1: the app registers tracerig_test, nobody registers DotNETRuntime ---
write_profile "$TEST_TMP/m.ini" 'events=tracerig_test:*, DotNETRuntime:GCStart_V2, DotNETRuntime:GCEnd_V1' 'start_sessiond=no'
run_tracerig -c "$TEST_TMP/m.ini" -d 20 -o "$TEST_TMP/m.zip" -- "$LTTNG_APP" -n 3
check_eq "a missing provider does not fail the run" 0 "$rc"
check_eq "the log says which provider is missing, why, and what tells more" \
	"tracerig: lttng: warning: userspace provider 'DotNETRuntime' was registered by no traced process: 2 enabled event rule(s) recorded nothing ($hint)" \
	"$(grep "userspace provider" "$TEST_TMP/out")"
unzip_archive "$TEST_TMP/m.zip" "$TEST_TMP/m"
check_grep "the final summary's counters count it" \
	'lttng +ok  .*ust_providers=2, ust_providers_seen=1, ust_providers_missing=1' "$TEST_TMP/m/tracerig.log"
check_grep "manifest: ust_providers_missing = 1" '"ust_providers_missing": *1' "$TEST_TMP/m/manifest.json"
check_grep "tracerig.log has the warning" "userspace provider 'DotNETRuntime' was registered by no traced process" "$TEST_TMP/m/tracerig.log"
bt_text "$TEST_TMP/m" >"$TEST_TMP/m.txt"
check_eq "the registered provider's events are there" 3 "$(grep -c 'tracerig_test:hello:' "$TEST_TMP/m.txt")"

# --- 2: every provider registered: no warning -----------------------------
write_profile "$TEST_TMP/a.ini" 'events=tracerig_test:hello' 'start_sessiond=no'
run_tracerig -c "$TEST_TMP/a.ini" -d 20 -o "$TEST_TMP/a.zip" -- "$LTTNG_APP" -n 2
check_eq "all providers registered: exit 0" 0 "$rc"
check_no_grep "all providers registered: no warning" "userspace provider" "$TEST_TMP/out"
unzip_archive "$TEST_TMP/a.zip" "$TEST_TMP/a"
check_grep "all providers registered: counted" \
	'lttng +ok  .*ust_providers=1, ust_providers_seen=1, ust_providers_missing=0' "$TEST_TMP/a/tracerig.log"

# --- 3: a traced process that registers nothing ---------------------------
run_tracerig -c "$TEST_TMP/a.ini" -d 20 -o "$TEST_TMP/n.zip" -- sleep 0.2
check_eq "nothing registered: exit 0" 0 "$rc"
check_eq "nothing registered: the generic hint" \
	"tracerig: lttng: warning: userspace provider 'tracerig_test' was registered by no traced process: 1 enabled event rule(s) recorded nothing (a traced process must link or preload the library that defines the tracepoints)" \
	"$(grep "userspace provider" "$TEST_TMP/out")"
unzip_archive "$TEST_TMP/n.zip" "$TEST_TMP/n"
check_grep "nothing registered: counted" 'ust_providers_seen=0, ust_providers_missing=1' "$TEST_TMP/n/tracerig.log"

done_testing

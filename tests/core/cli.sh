#!/usr/bin/env bash
# The command line: help, version, usage errors, --list-plugins, --check.
. "$top_srcdir/tests/lib.sh"

run_tracerig --help
check_eq "--help exits 0" 0 "$rc"
check_grep "--help documents -c, -p and --set" '--set SEC.KEY=VALUE' "$TEST_TMP/out"

run_tracerig --version
check_grep "--version names the version and the plugin ABI" '^tracerig [0-9.]+ \(plugin ABI 3\)$' "$TEST_TMP/out"

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

# An empty PID list is what -p "$(pidof x)" gives when x is not running:
# an error, not the whole machine.
for arg in "" "," " " " , "; do
	run_tracerig -c "$top_srcdir/tests/core/profiles/two.ini" -p "$arg"
	check_eq "-p '$arg' is refused with exit 2" 2 "$rc"
	check_eq "-p '$arg' says no PID was given" "tracerig: -p '$arg': no process ID given (is the process running? \`-p \"\$(pidof x)\"\` is empty when x is not; leave out -p to trace the whole machine)" "$(cat "$TEST_TMP/out")"
done
run_tracerig -c "$top_srcdir/tests/core/profiles/two.ini" -p +1
check_eq "-p +1 is refused with exit 2" 2 "$rc"
check_eq "-p +1: only digits are a PID" "tracerig: -p +1: '+1' is not a process ID (use -p 1234 or -p 1234,5678)" "$(cat "$TEST_TMP/out")"
run_tracerig --check -c "$top_srcdir/tests/core/profiles/two.ini" -p "$$ $$"
check_eq "-p accepts blank-separated PIDs, as pidof prints them" 0 "$rc"

# Durations: below 1 ms, or not plain decimal, are errors (not "until Ctrl-C", not 2 s).
run_tracerig --check -c "$top_srcdir/tests/core/profiles/two.ini" -d 0.4ms
check_eq "-d 0.4ms is refused with exit 2" 2 "$rc"
check_grep "-d 0.4ms: says the smallest duration" "^tracerig: -d: \[tracerig\] duration: '0\.4ms' is shorter than 1 ms, the smallest duration \(use at least 1ms, or 0 for no limit\)$" "$TEST_TMP/out"
for d in 0x2 +2 " 2" 1e3 inf; do
	run_tracerig --check -c "$top_srcdir/tests/core/profiles/two.ini" -d "$d"
	check_eq "-d '$d' is refused with exit 2" 2 "$rc"
	check_eq "-d '$d' is not a duration" "tracerig: -d: [tracerig] duration: '$d' is not a duration (seconds, or a number with ms, s, m or h)" "$(head -n 1 "$TEST_TMP/out")"
done
run_tracerig --check -c "$top_srcdir/tests/core/profiles/two.ini" -d 0
check_eq "-d 0 (until Ctrl-C) is accepted" 0 "$rc"

# -c reads regular files only: a FIFO would block, /dev/zero never end.
mkfifo "$TEST_TMP/fifo.ini"
for c in "$TEST_TMP/fifo.ini|a FIFO" "/dev/zero|a character device" "$TEST_TMP|a directory"; do
	path=${c%%|*} kind=${c#*|}
	rc=0
	timeout 20 "$TRACERIG" --check -c "$path" >"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
	check_eq "-c on $kind is refused with exit 2" 2 "$rc"
	check_eq "-c on $kind says what it is" "tracerig: $path: not a regular file (it is $kind): give the path of a profile (.ini)
tracerig: 1 error in the profile; nothing was collected" "$(cat "$TEST_TMP/out")"
done

run_tracerig --list-plugins
check_eq "--list-plugins exits 0" 0 "$rc"
check_grep "--list-plugins lists a test plugin with its version" '^  testa +0\.0-test +source' "$TEST_TMP/out"
check_grep "--list-plugins lists the zip packager" '^  zip .* packager' "$TEST_TMP/out"
check_grep "--list-plugins reports an unusable plugin and why" '^  badabi +UNUSABLE .*ABI 999.*ABI 3' "$TEST_TMP/out"

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
check_grep "and names the shipped profiles" \
	"the profiles shipped with tracerig are in [^ ]+/profiles/: cpu-cfi, cpu-dwarf, cpu, dotnet, " "$TEST_TMP/out"
shown=$(sed -n 's/.*the profiles shipped with tracerig are in \([^ ]*\)\/: .*/\1/p' "$TEST_TMP/out")
check "in a directory that exists ($shown)" test -n "$shown" -a -d "${shown:-/nonexistent}"

# A shipped profile by its name, with or without .ini, from anywhere.
for name in cpu cpu.ini profiles/cpu.ini; do
	(cd / && "$TRACERIG" --check -c "$name" >"$TEST_TMP/out" 2>&1); rc=$?
	check_eq "-c $name: found" 0 "$rc"
	check_grep "-c $name: the shipped cpu.ini" "^profile .*/conf/profiles/cpu\.ini: valid" "$TEST_TMP/out"
done

# Files of procfs, tracefs, sysfs call themselves regular: never read as
# a profile (trace_pipe would block for ever, /proc/kmsg be consumed).
for f in /sys/kernel/tracing/trace_pipe /proc/kmsg /proc/self/status; do
	[ -e "$f" ] || continue
	rc=0
	timeout 10 "$TRACERIG" --check -c "$f" >"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
	check_eq "-c $f: refused as a usage error, at once" 2 "$rc"
	check_grep "-c $f: said why" "a file of the kernel's procfs, sysfs, tracefs or debugfs, not a profile" "$TEST_TMP/out"
done
truncate -s 20M "$TEST_TMP/big.ini"
rc=0
"$TRACERIG" --check -c "$TEST_TMP/big.ini" >"$TEST_TMP/out" 2>&1 || rc=$?
check_eq "a 20 MB profile is refused" 2 "$rc"
check_grep "saying it is too large" "too large for a profile" "$TEST_TMP/out"

# A flight recorder's key in a recording session is said to do nothing.
"$TRACERIG" --check -c cpu --set tracerig.window=10s >"$TEST_TMP/out" 2>&1
check_grep "--set tracerig.window without mode = flight: a warning says it does nothing" \
	"warning: --set: \[tracerig\] window = 10s does nothing in this session: it records" "$TEST_TMP/out"
"$TRACERIG" --check -c cpu --set tracerig.mode=flight --set tracerig.window=10s >"$TEST_TMP/out" 2>&1
check_no_grep "with mode = flight: no such warning" "does nothing in this session" "$TEST_TMP/out"

done_testing

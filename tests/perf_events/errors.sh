#!/usr/bin/env bash
# Mistakes and refusals are errors that say what to do.
. "$top_srcdir/tests/perf_events/lib-perf.sh"

# Event names are the profile's: a wrong one is a profile error (exit 2,
# nothing collected), said where it is written, every one of them at once.
run_tracerig -c "$CPU_INI" -o "$TEST_TMP/e.trace.zip" -d 1 --set perf_events.events=cpu-clok
check_eq "unknown event: exit 2 (a profile error)" 2 "$rc"
check_grep "unknown event: where it was set, and a close match" \
	'^tracerig: --set: \[perf_events\] events: cpu-clok is not an event here: did you mean cpu-clock\?' \
	"$TEST_TMP/out"
check "unknown event: no archive" test ! -e "$TEST_TMP/e.trace.zip"
check_eq "unknown event: said once, where it was set" 1 "$(grep -c 'is not an event here' "$TEST_TMP/out")"

# A misspelt subsystem: the closest subsystem, and where its events are
# listed (not one of its events picked at random).
run_tracerig --check -c "$CPU_INI" --set perf_events.events=schde:sched_switch
check_eq "misspelt subsystem: --check exit 2" 2 "$rc"
check_grep "misspelt subsystem: the closest one, and where its events are" \
	'events: schde:sched_switch is not an event here: no subsystem schde: did you mean sched\? \(its events: ls /[^ ]*/events/sched\)' \
	"$TEST_TMP/out"

printf '[tracerig]\nname = ev\n\n[perf_events]\nfrequency = 99\nevents = cpu-clok, page-faults, sched:sched_swich\n' \
	>"$TEST_TMP/ev.ini"
run_tracerig -c "$TEST_TMP/ev.ini" -o "$TEST_TMP/e.trace.zip" -d 1
check_eq "two wrong events in a profile: exit 2" 2 "$rc"
check_grep "the first, with the profile's file and line" \
	"^tracerig: $TEST_TMP/ev\.ini:6: \[perf_events\] events: cpu-clok is not an event here: did you mean cpu-clock\?" \
	"$TEST_TMP/out"
check_grep "the second too, not only the first" \
	"^tracerig: $TEST_TMP/ev\.ini:6: \[perf_events\] events: sched:sched_swich is not an event here: did you mean sched:sched_switch\?" \
	"$TEST_TMP/out"
check_grep "counted as the profile's errors" '^tracerig: 2 errors in the profile; nothing was collected$' \
	"$TEST_TMP/out"
check_eq "each said once, with nothing repeating them" 2 \
	"$(grep -Ec 'events: .*not (an event|events) here' "$TEST_TMP/out")"
run_tracerig --check -c "$TEST_TMP/ev.ini"
check_eq "--check of it: exit 2" 2 "$rc"
check_eq "--check says both, with their line" 2 \
	"$(grep -c "ev\.ini:6: \[perf_events\] events: .* is not an event here" "$TEST_TMP/out")"
check_grep "--check's first line counts them, never calls the profile valid" \
	"^profile $TEST_TMP/ev\.ini: 2 errors \(on stderr\)$" "$TEST_TMP/out"
check_no_grep "--check: no 'valid' line for it" ': valid$' "$TEST_TMP/out"

max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
# Values the key table cannot judge alone are the profile's errors too:
# said where they were set, all of them, once each, before collecting.
run_tracerig -c "$CPU_INI" -o "$TEST_TMP/e.trace.zip" -d 1 --set perf_events.frequency=$((max + 1))
check_eq "frequency above the kernel's limit: a profile error (exit 2)" 2 "$rc"
check_grep "frequency above the kernel's limit: where, and the sysctl named" \
	"^tracerig: --set: \[perf_events\] frequency: $((max + 1)) is above kernel.perf_event_max_sample_rate = $max" \
	"$TEST_TMP/out"

run_tracerig -c "$CPU_INI" -o "$TEST_TMP/e.trace.zip" -d 1 --set perf_events.ring_pages=100
check_eq "ring_pages not a power of two: a profile error (exit 2)" 2 "$rc"
check_grep "ring_pages: says what to use" '\[perf_events\] ring_pages: 100 is not a power of two' "$TEST_TMP/out"

printf '[tracerig]\nname = two\n[perf_events]\nring_pages = 100\nfrequency = %s\n' $((max + 1)) \
	>"$TEST_TMP/two.ini"
run_tracerig -c "$TEST_TMP/two.ini" -o "$TEST_TMP/e.trace.zip" -d 1
check_eq "two wrong values: exit 2" 2 "$rc"
check_eq "both said, each once with its line, nothing repeating them" \
	"1 1 2" "$(grep -c 'two\.ini:4: \[perf_events\] ring_pages: ' "$TEST_TMP/out") $(grep -c 'two\.ini:5: \[perf_events\] frequency: ' "$TEST_TMP/out") $(grep -c 'perf_events' "$TEST_TMP/out")"
check_grep "and counted" '^tracerig: 2 errors in the profile; nothing was collected$' "$TEST_TMP/out"

# Said by the plugin's validate: before any backend starts, beside
# another backend's mistakes.
printf '[tracerig]\nname = both\n[perf_events]\nring_pages = 100\n[testa]\njournal = %s\npayload = refused\n' \
	"$TEST_TMP/journal" >"$TEST_TMP/both.ini"
run_tracerig -c "$TEST_TMP/both.ini" -o "$TEST_TMP/e.trace.zip" -d 1
check_eq "two backends' wrong values: exit 2" 2 "$rc"
check_grep "perf_events', at its line" \
	"^tracerig: $TEST_TMP/both\.ini:4: \[perf_events\] ring_pages: 100 is not a power of two" "$TEST_TMP/out"
check_grep "and the other backend's" "both\.ini:7: \[testa\] payload: 'refused' is refused" "$TEST_TMP/out"
check_grep "counted together" '^tracerig: 2 errors in the profile; nothing was collected$' "$TEST_TMP/out"
check_eq "no backend was initialised" "testa validate" "$(paste -sd, "$TEST_TMP/journal")"
run_tracerig --check -c "$TEST_TMP/both.ini"
check_eq "--check of it: exit 2, perf_events' said once" "2 1" \
	"$rc $(grep -c 'both\.ini:4: \[perf_events\] ring_pages: 100 is not a power of two' "$TEST_TMP/out")"
check_grep "--check: perf_events NOT USABLE, naming it" \
	'perf_events .*NOT USABLE: ring_pages: 100 is not a power of two' "$TEST_TMP/out"

# More events than one collector takes: the profile's mistake, said at
# its line before anything starts (exit 2), not a failure of init.
many=$(for _ in $(seq 33); do printf 'cpu-clock, '; done)
printf '[tracerig]\nname = many\n[perf_events]\nevents = %s\n' "$many" >"$TEST_TMP/many.ini"
run_tracerig -c "$TEST_TMP/many.ini" -o "$TEST_TMP/e.trace.zip" -d 1
check_eq "33 events: exit 2" 2 "$rc"
check_grep "33 events: said at the key's line, with what to do" \
	"many\.ini:4: \[perf_events\] events: more than 32 events with optional_events: leave some out" \
	"$TEST_TMP/out"
check_eq "33 events: said once" 1 "$(grep -c 'more than 32 events' "$TEST_TMP/out")"

run_tracerig -c "$CPU_INI" -o "$TEST_TMP/e.trace.zip" -p 2147483 -d 1
check "a PID that does not exist: fails" test "$rc" -ne 0
check_grep "a PID that does not exist: says so" '2147483.*(does not exist|no such process)|(does not exist|no such process).*2147483' "$TEST_TMP/out"

# Hardware counters: where the PMU has none (this VM), say so, and follow
# the profile: fail by default, or fall back to cpu-clock.
if perf stat -e cycles true 2>&1 | grep -q 'not supported\|<not counted>'; then
	run_tracerig -c "$CPU_INI" -o "$TEST_TMP/h.trace.zip" -d 0.5 --set perf_events.events=cycles
	check_eq "no PMU, hardware_fallback = fail: exit 1" 1 "$rc"
	check_grep "no PMU: says the event is not counted here" \
		'hardware event cycles is not counted by this machine.s PMU' "$TEST_TMP/out"
	run_tracerig -c "$CPU_INI" -o "$TEST_TMP/h.trace.zip" -d 0.5 \
		--set perf_events.events=cycles --set perf_events.hardware_fallback=cpu-clock
	check_eq "no PMU, hardware_fallback = cpu-clock: exit 0" 0 "$rc"
	unzip_archive "$TEST_TMP/h.trace.zip" "$TEST_TMP/h"
	check_grep "the fallback is logged" 'sampling cpu-clock instead' "$TEST_TMP/h/tracerig.log"
	check_grep "the samples are cpu-clock" ' cpu-clock: $' "$TEST_TMP/h/perf.data.txt"

	# --check opens the events the run would, and says what the run does.
	run_tracerig -c "$CPU_INI" -o "$TEST_TMP/h.trace.zip" -d 0.5 \
		--set perf_events.events=cpu-clock,instructions
	real_rc=$rc
	sed -n 's/^tracerig: perf_events: start failed: //p' "$TEST_TMP/out" | head -1 >"$TEST_TMP/real-why"
	run_tracerig --check -c "$CPU_INI" --set perf_events.events=cpu-clock,instructions
	check_eq "no PMU: --check fails like the run (exit 1)" "1 1" "$real_rc $rc"
	check_grep "no PMU: --check says perf_events is NOT USABLE, and why" \
		"^  perf_events +[^ ]+ +required +NOT USABLE: hardware event instructions is not counted by this machine's PMU \(a VM\?\): use cpu-clock, or set hardware_fallback = cpu-clock or skip$" \
		"$TEST_TMP/out"
	check_eq "no PMU: --check gives the run's very reason" "$(cat "$TEST_TMP/real-why")" \
		"$(sed -n 's/^  perf_events .* NOT USABLE: //p' "$TEST_TMP/out")"

	run_tracerig --check -c "$CPU_INI" --set perf_events.events=cycles \
		--set perf_events.hardware_fallback=cpu-clock
	check_eq "no PMU, fallback: --check exit 0" 0 "$rc"
	check_grep "no PMU, fallback: --check says usable" '^  perf_events +[^ ]+ +required +usable$' "$TEST_TMP/out"
	check_eq "no PMU, fallback: --check notes the fallback the run logs" \
		"$(sed -n 's/^[0-9.]* warning perf_events: //p' "$TEST_TMP/h/tracerig.log" | head -1)" \
		"$(grep -A1 '^  perf_events ' "$TEST_TMP/out" | sed -n 's/^ *note: //p')"
	check_grep "the fallback note says what happens" \
		'note: hardware event cycles is not counted by this machine.s PMU \(a VM\?\): sampling cpu-clock instead \(hardware_fallback = cpu-clock\)$' \
		"$TEST_TMP/out"
else
	skip "no PMU: hardware_fallback" "this machine counts hardware events"
fi

# --check refuses a frequency the kernel refuses, in the run's words.
run_tracerig --check -c "$CPU_INI" --set perf_events.frequency=$((max + 1))
check_eq "--check, frequency above the kernel's limit: a profile error (exit 2)" 2 "$rc"
check_grep "--check, frequency above the kernel's limit: NOT USABLE, the sysctl is named" \
	"perf_events .*NOT USABLE: frequency: $((max + 1)) is above kernel.perf_event_max_sample_rate = $max" "$TEST_TMP/out"

# A process whose mappings cannot be read (here PID 1 refuses ptrace
# access even to root): the message names /proc/PID/maps, not perf.data.
if ! head -c1 /proc/1/maps >/dev/null 2>&1; then
	why=$(head -c1 /proc/1/maps 2>&1 >/dev/null | sed 's/.*: //')
	run_tracerig -c "$CPU_INI" -o "$TEST_TMP/p.trace.zip" -p 1 -d 1
	check_eq "-p 1, /proc/1/maps unreadable: exit 1" 1 "$rc"
	check_grep "-p 1: the message names /proc/1/maps and the reason" \
		"^tracerig: perf_events: start failed: cannot read /proc/1/maps, the mappings of process 1: $why" "$TEST_TMP/out"
	check_no_grep "-p 1: perf.data is not blamed" 'perf\.data' "$TEST_TMP/out"
	run_tracerig --check -c "$CPU_INI" -p 1
	check_grep "-p 1: --check says the same" \
		"perf_events .*NOT USABLE: cannot read /proc/1/maps, the mappings of process 1: $why" "$TEST_TMP/out"
else
	skip "-p 1: the message names /proc/1/maps" "PID 1's mappings are readable here"
fi

# Without privileges: perf_event_paranoid and CAP_PERFMON are named.
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ] && command -v setpriv >/dev/null; then
	chmod 0755 "$TEST_TMP"
	mkdir -m 1777 "$TEST_TMP/u"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$TRACERIG" -c "$CPU_INI" -o "$TEST_TMP/u/u.trace.zip" -d 0.5 >"$TEST_TMP/out" 2>&1 </dev/null
	rc=$?
	check_eq "unprivileged system-wide run: exit 1" 1 "$rc"
	check_grep "unprivileged: says which sysctl or capability" \
		'perf_event_paranoid is [0-9]+: run as root, give tracerig CAP_PERFMON' "$TEST_TMP/out"
else
	skip "unprivileged: says which sysctl or capability" "perf_event_paranoid is below 1 or setpriv is missing"
fi

run_tracerig --check -c "$CPU_INI"
check_eq "--check with cpu.ini as root: exit 0" 0 "$rc"
check_grep "--check says perf_events is usable" 'perf_events.*(usable|ok)' "$TEST_TMP/out"

done_testing

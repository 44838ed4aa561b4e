#!/bin/sh
# Values the key table cannot judge alone (a thread state that does not
# exist, max_block_us below min_block_us) are the profile's errors: all of
# them said before anything is collected, each once, with its line, by
# the run and by --check alike.
# test-lock: exclusive (it lowers kernel.perf_event_max_sample_rate for a moment)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf

printf '[tracerig]\nname = bad\n[ebpf]\nstates = sleeping, D\nmin_block_us = 100\nmax_block_us = 10\n' \
	>"$TEST_TMP/bad.ini"
run_tracerig -c "$TEST_TMP/bad.ini" -d 1 -o "$TEST_TMP/bad.trace.zip"
check_eq "two wrong values: a profile error (exit 2)" 2 "$rc"
# The states the key's choices list: said by the core, before the
# plugin's own judgement of what else is wrong, in the same pass.
check_grep "the thread state that is none, at its line, with the states there are" \
	"^tracerig: $TEST_TMP/bad\\.ini:4: \\[ebpf\\] states: 'sleeping' is not one of: all, interruptible, S, " \
	"$TEST_TMP/out"
check_grep "max below min, at its line" \
	"^tracerig: $TEST_TMP/bad\\.ini:6: \\[ebpf\\] max_block_us: 10 is below min_block_us = 100" \
	"$TEST_TMP/out"
check_eq "each said once, nothing repeating them" 2 "$(grep -c 'ebpf' "$TEST_TMP/out")"
check_grep "counted" '^tracerig: 2 errors in the profile; nothing was collected$' "$TEST_TMP/out"
check "no archive" test ! -e "$TEST_TMP/bad.trace.zip"

run_tracerig --check -c "$TEST_TMP/bad.ini"
check_eq "--check: exit 2" 2 "$rc"
check_grep "--check counts them" "^profile $TEST_TMP/bad\\.ini: 2 errors \\(on stderr\\)$" "$TEST_TMP/out"
check_grep "--check: ebpf NOT USABLE, with the first" \
	"^  ebpf .* NOT USABLE: states: 'sleeping' is not one of: all, " "$TEST_TMP/out"

printf '[tracerig]\nname = typo\n[ebpf]\nstates = idel, D, sleeping\n' >"$TEST_TMP/typo.ini"
run_tracerig --check -c "$TEST_TMP/typo.ini"
check_eq "two wrong states: --check exit 2" 2 "$rc"
check_grep "a misspelt state: the one meant" \
	"typo\\.ini:4: \\[ebpf\\] states: 'idel' is not one of: .* \\(did you mean 'idle'\\?\\)" "$TEST_TMP/out"
check_grep "every wrong item said, not just the first" \
	"typo\\.ini:4: \\[ebpf\\] states: 'sleeping' is not one of: " "$TEST_TMP/out"
check_grep "and counted" "^profile $TEST_TMP/typo\\.ini: 2 errors \\(on stderr\\)$" "$TEST_TMP/out"

# Said by the plugin's validate: before any backend starts, beside
# another backend's mistakes, and --check's line counts them.
printf '[tracerig]\nname = both\n[ebpf]\nmin_block_us = 100\nmax_block_us = 10\n[testa]\njournal = %s\npayload = refused\n' \
	"$TEST_TMP/journal" >"$TEST_TMP/both.ini"
run_tracerig -c "$TEST_TMP/both.ini" -d 1 -o "$TEST_TMP/both.trace.zip"
check_eq "two backends' wrong values: exit 2" 2 "$rc"
check_grep "ebpf's, at its line" \
	"^tracerig: $TEST_TMP/both\\.ini:5: \\[ebpf\\] max_block_us: 10 is below min_block_us = 100" "$TEST_TMP/out"
check_grep "and the other backend's" "both\\.ini:8: \\[testa\\] payload: 'refused' is refused" "$TEST_TMP/out"
check_grep "counted together" '^tracerig: 2 errors in the profile; nothing was collected$' "$TEST_TMP/out"
check_eq "no backend was initialised" "testa validate" "$(paste -sd, "$TEST_TMP/journal")"
run_tracerig --check -c "$TEST_TMP/both.ini"
check_eq "--check of it: exit 2" 2 "$rc"
check_eq "--check says ebpf's once, with its line" 1 \
	"$(grep -c "both\\.ini:5: \\[ebpf\\] max_block_us: 10 is below min_block_us = 100" "$TEST_TMP/out")"
check_grep "--check: ebpf's line counts it" '^  ebpf .* NOT USABLE: 1 error in \[ebpf\] \(on stderr\)$' \
	"$TEST_TMP/out"

printf '[tracerig]\nname = empty\n[ebpf]\nstates =\n' >"$TEST_TMP/empty.ini"
run_tracerig --check -c "$TEST_TMP/empty.ini"
check_eq "an empty states list: --check exit 2" 2 "$rc"
check_grep "said so" "empty\\.ini:4: \\[ebpf\\] states: no thread state given" "$TEST_TMP/out"

# callchain = cfi: this kernel runs the walker, so --check says ebpf is
# usable with it (a kernel without bpf_loop would get the line saying to
# use dwarf); perf_events' samples cannot take it, and say so at its line.
run_tracerig --check -c "$top_srcdir/conf/profiles/offcpu-cfi.ini"
if grep -q "callchain = cfi is not available in this build" "$TEST_TMP/out"; then
	skip "--check of offcpu-cfi.ini" "callchain = cfi is not available in this build (no libdw)"
else
	check_eq "--check of offcpu-cfi.ini: exit 0" 0 "$rc"
	check_grep "ebpf is usable with callchain = cfi" '^  ebpf .* usable' "$TEST_TMP/out"
	# The walker runs here: a fallback, whatever it is, is never taken nor noted.
	printf '[tracerig]\nname = fb\n[ebpf]\ncallchain = cfi\ncfi_fallback = fp\n' >"$TEST_TMP/fb.ini"
	run_tracerig --check -c "$TEST_TMP/fb.ini"
	check_eq "cfi_fallback = fp where the walker runs: --check exit 0" 0 "$rc"
	check_no_grep "and no fallback noted" 'falling back' "$TEST_TMP/out"
fi
# The sampler's rate against the kernel's limit: lowered for the check
# (the key allows up to 20000, this machine's limit is higher), and put
# back whatever happens.
rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
on_exit "echo $rate >/proc/sys/kernel/perf_event_max_sample_rate"
if echo 500 >/proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null; then
	printf '[tracerig]\nname = hz\n[ebpf]\noncpu = yes\noncpu_frequency = 999\n' >"$TEST_TMP/hz.ini"
	run_tracerig --check -c "$TEST_TMP/hz.ini"
	echo "$rate" >/proc/sys/kernel/perf_event_max_sample_rate
	check_eq "oncpu_frequency above kernel.perf_event_max_sample_rate: --check exit 2" 2 "$rc"
	check_grep "said at its line, with both ways out" \
		"hz\\.ini:5: \\[ebpf\\] oncpu_frequency: 999 is above kernel\\.perf_event_max_sample_rate = 500: lower it, or raise the limit \\(sysctl kernel\\.perf_event_max_sample_rate=999\\)" \
		"$TEST_TMP/out"
else
	skip "oncpu_frequency above the kernel's limit" "cannot lower kernel.perf_event_max_sample_rate here"
fi
# The sampler takes its stacks in the kernel: dwarf cannot be its fallback.
printf '[tracerig]\nname = fbd\n[ebpf]\ncallchain = cfi\noncpu = yes\ncfi_fallback = dwarf\n' \
	>"$TEST_TMP/fbd.ini"
run_tracerig --check -c "$TEST_TMP/fbd.ini"
check_eq "oncpu with cfi_fallback = dwarf: --check exit 2" 2 "$rc"
check_grep "said at its line, with what to use" \
	"fbd\\.ini:6: \\[ebpf\\] cfi_fallback: oncpu samples cannot fall back to dwarf.*use cfi_fallback = fp or refuse" \
	"$TEST_TMP/out"
printf '[tracerig]\nname = pcfi\n[perf_events]\ncallchain = cfi\n' >"$TEST_TMP/pcfi.ini"
run_tracerig --check -c "$TEST_TMP/pcfi.ini"
check_eq "perf_events callchain = cfi: --check exit 2" 2 "$rc"
check_grep "said at its line, with what to use" \
	"pcfi\\.ini:4: \\[perf_events\\] callchain: cfi walks stacks in a BPF program.*use callchain = dwarf here" \
	"$TEST_TMP/out"
done_testing

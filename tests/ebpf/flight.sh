#!/usr/bin/env bash
# The ebpf backend in a flight recorder: a snapshot holds the off-CPU time
# of the last window only.  The workload (tests/ebpf/flight/phases.c) has
# one thread that blocks in blocked_in_phase_a for 3 s, then in
# blocked_in_phase_b; once B has gone on for 6 s (far more than the 2 s
# window and its 0.25 s bucket) a SIGUSR1 snapshot must name B, with about
# a window of blocked time, and hold nothing of A; a snapshot of the whole
# session would hold A's 3 s and more than 6 s of B.  The workload then
# moves to blocked_in_phase_c, and the stop's final snapshot must hold C
# and neither A nor B.  Every step waits on a file the workload or
# tracerig writes, not on the clock.  All of it with callchain = fp (the
# kernel's totals) and callchain = dwarf (the table unwound in user
# space), where the build has it.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf
phases="$top_builddir/tests/ebpf/flight/phases"
[ -x "$phases" ] || skip_all "tests/ebpf/flight/phases is not built"
export TMPDIR="$TEST_TMP"

cat >"$TEST_TMP/f.ini" <<'INI'
[tracerig]
name = ef
mode = flight
window = 2s
trigger_crash = no
required = ebpf

[ebpf]
INI

"$TRACERIG" -c "$TEST_TMP/f.ini" --check >"$TEST_TMP/check" 2>&1
check_eq "--check accepts ebpf in a flight profile" 0 "$?"
check_no_grep "--check no longer says ebpf does not support flight mode" \
	'not supported' "$TEST_TMP/check"

# wait_for FILE [TENTHS]: until FILE exists (60 s by default).
wait_for() {
	for _ in $(seq "${2:-600}"); do [ -e "$1" ] && return 0; sleep 0.1; done
	return 1
}

# flight_run CALLCHAIN: the whole scenario, files in $TEST_TMP/CALLCHAIN.
flight_run() {
	local cc=$1 d="$TEST_TMP/$1" wp tp rc first final f f2 m b c cov kept
	mkdir -p "$d/w" "$d/a"
	"$phases" "$d/w" &
	wp=$!
	on_exit "kill $wp 2>/dev/null"
	"$TRACERIG" -v -c "$TEST_TMP/f.ini" --set ebpf.callchain="$cc" -p "$wp" -o "$d/a" >"$d/out" 2>&1 </dev/null &
	tp=$!
	on_exit "kill -9 $tp 2>/dev/null"
	for _ in $(seq 300); do grep -q collecting "$d/out" 2>/dev/null && break; sleep 0.1; done
	check_grep "$cc: the flight session collects with ebpf" collecting "$d/out"
	check_no_grep "$cc: ebpf is not left out" 'not supported' "$d/out"
	# The workload starts phase A once tracerig collects: A is in the
	# session's totals, and must be left out of the window.
	touch "$d/w/go"

	check "$cc: the workload reaches phase B, and 6 s of it" wait_for "$d/w/b-ready" 900
	kill -USR1 "$tp"
	for _ in $(seq 600); do [ -n "$(ls "$d/a"/ef-*.trace.zip 2>/dev/null)" ] && break; sleep 0.1; done
	first=$(ls "$d/a"/ef-*.trace.zip 2>/dev/null | head -1)
	check "$cc: SIGUSR1 writes a snapshot" test -n "$first"
	unzip_archive "$first" "$d/s1"
	f="$d/s1/offcpu.folded"
	check "$cc: the snapshot has offcpu.folded" test -s "$f"
	check_grep "$cc: and offcpu.svg" '<svg' "$d/s1/offcpu.svg"
	check_grep "$cc: it names phase B's function, then the kernel's sleep" \
		"^phases-$wp;phases-$wp;.*;blocked_in_phase_b;.*do_nanosleep" "$f"
	check_no_grep "$cc: it holds nothing of phase A, which ended 6 s before" blocked_in_phase_a "$f"
	# About a window: at least 90 % of it (the thread is off the CPU all but
	# microseconds), at most the window, a bucket and 2.25 s of slack for the
	# snapshot to be read after its trigger on a loaded machine; the whole
	# session would hold more than 6 s of B.
	b=$(fn_total "$f" blocked_in_phase_b)
	if [ "${b:-0}" -ge 1800000 ] && [ "${b:-0}" -le 4500000 ]; then
		ok "$cc: B's blocked time is about the 2 s window ($((b / 1000)) ms)"
	else
		not_ok "$cc: B's blocked time is about the 2 s window" "expected 1800 to 4500 ms, got $((${b:-0} / 1000)) ms"
	fi
	m="$d/s1/manifest.json"
	check_grep "$cc: the manifest says the snapshot's coverage" '"snapshot_covers_ms": *[0-9]' "$m"
	cov=$(sed -n 's/.*"snapshot_covers_ms": *\([0-9]*\).*/\1/p' "$m" | head -1)
	if [ "${cov:-0}" -ge 2000 ] && [ "${cov:-0}" -le 4500 ]; then
		ok "$cc: it covers the window and at most a bucket and the slack more (${cov} ms)"
	else
		not_ok "$cc: it covers the window and at most a bucket and the slack more" "got ${cov:-none} ms"
	fi
	# The counters are the window's: its kept intervals are B's 10 ms sleeps
	# (200 in 2 s), not the session's (more than 900 by now).
	kept=$(sed -n 's/.*"intervals_kept": *\([0-9]*\).*/\1/p' "$m" | head -1)
	if [ "${kept:-0}" -ge 100 ] && [ "${kept:-0}" -le 600 ]; then
		ok "$cc: intervals_kept counts the window's intervals ($kept)"
	else
		not_ok "$cc: intervals_kept counts the window's intervals" "expected 100 to 600, got ${kept:-none}"
	fi

	if [ "$cc" = dwarf ]; then
		# B's stacks came from the table unwound in user space, and its
		# counter is the window's too.
		kept=$(sed -n 's/.*"dwarf_stacks_unwound": *\([0-9]*\).*/\1/p' "$m" | head -1)
		if [ "${kept:-0}" -ge 100 ] && [ "${kept:-0}" -le 600 ]; then
			ok "$cc: dwarf_stacks_unwound counts the window's stacks ($kept)"
		else
			not_ok "$cc: dwarf_stacks_unwound counts the window's stacks" \
				"expected 100 to 600, got ${kept:-none}"
		fi
	fi

	# Phase C; the stop's snapshot holds it alone.
	touch "$d/w/go-c"
	check "$cc: the workload reaches phase C, and 4 s of it" wait_for "$d/w/c-ready" 900
	kill -INT "$tp"
	rc=0
	wait "$tp" || rc=$?
	check_eq "$cc: the flight session ends with exit 0" 0 "$rc"
	[ "$rc" = 0 ] || sed 's/^/# /' "$d/out"
	touch "$d/w/end"
	wait "$wp"
	final=""
	for a in "$d/a"/ef-*.trace.zip; do
		unzip -p "$a" manifest.json 2>/dev/null | grep -q '"trigger": "stop"' && final=$a
	done
	check "$cc: the stop writes a final snapshot" test -n "$final"
	unzip_archive "$final" "$d/s2"
	f2="$d/s2/offcpu.folded"
	check_grep "$cc: it names phase C's function" ";blocked_in_phase_c;" "$f2"
	check_no_grep "$cc: and neither A" blocked_in_phase_a "$f2"
	check_no_grep "$cc: nor B" blocked_in_phase_b "$f2"
	# The final snapshot's range ends once the sources stopped (the core
	# stops them first): collection ended a little before its end, by as long
	# as stopping took.
	c=$(fn_total "$f2" blocked_in_phase_c)
	if [ "${c:-0}" -ge 1000000 ] && [ "${c:-0}" -le 4500000 ]; then
		ok "$cc: C's blocked time is about the window ($((c / 1000)) ms)"
	else
		not_ok "$cc: C's blocked time is about the window" "expected 1000 to 4500 ms, got $((${c:-0} / 1000)) ms"
	fi
	check "$cc: no staging is left behind" sh -c "! ls -d '$TEST_TMP'/tracerig-*.staging-* 2>/dev/null"
}

flight_run fp
# callchain = dwarf where this build has it (libdw, x86_64).
if grep -q '^#define HAVE_LIBDW 1' "$top_builddir/config.h" && [ "$(uname -m)" = x86_64 ]; then
	flight_run dwarf
else
	skip "dwarf: flight mode" "callchain = dwarf is not available in this build"
fi
done_testing

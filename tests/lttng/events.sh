#!/bin/sh
# The archive holds the test app's LTTng-UST events, with the vpid, vtid and
# procname contexts matching the pid/tid the app wrote into each event, in
# the CTF layout TraceEvent reads; log-level and filter keys narrow them; a
# session daemon tracerig started is gone afterwards.
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lttng/lib-lttng.sh"
lttng_prereqs

daemon_before=$(sessiond_pid || true)

# --- 1: every tracerig_test event of a launched two-thread app -------------
write_profile "$TEST_TMP/all.ini" 'events=tracerig_test:*' 'start_sessiond=yes'
run_tracerig -c "$TEST_TMP/all.ini" -d 20 -o "$TEST_TMP/all.trace.zip" -- "$LTTNG_APP" -n 20 -T 2 -i 1000
check_eq "tracerig exits 0 (launched command)" 0 "$rc"
[ "$rc" = 0 ] || cat "$TEST_TMP/out" | sed 's/^/# /'
unzip_archive "$TEST_TMP/all.trace.zip" "$TEST_TMP/all"
meta=$(ls "$TEST_TMP"/all/lttngTrace/ust/uid/*/64-bit/metadata 2>/dev/null | head -1)
if [ -n "$meta" ]; then ok "per-UID CTF layout lttngTrace/ust/uid/N/64-bit/metadata"
else not_ok "per-UID CTF layout lttngTrace/ust/uid/N/64-bit/metadata" "$(cd "$TEST_TMP/all" && find . | head -20)"; fi
# TraceEvent only reads streams named channel*_CPU beside the metadata.
if ls "$TEST_TMP"/all/lttngTrace/ust/uid/*/64-bit/channel*_[0-9]* >/dev/null 2>&1; then ok "channel*_CPU stream files next to the metadata (what TraceEvent reads)"
else not_ok "channel*_CPU stream files next to the metadata (what TraceEvent reads)" "$(ls "$TEST_TMP"/all/lttngTrace/ust/uid/*/64-bit/)"; fi

bt_text "$TEST_TMP/all" >"$TEST_TMP/all.txt"
check_eq "babeltrace2 reads the trace" "" "$(grep -v '^$' "$TEST_TMP/bt.err" | head -3)"
check_eq "40 hello events (20 per thread, 2 threads)" 40 "$(grep -c 'tracerig_test:hello:' "$TEST_TMP/all.txt")"
check_eq "40 tick events" 40 "$(grep -c 'tracerig_test:tick:' "$TEST_TMP/all.txt")"
# vpid/vtid contexts must equal the pid/tid payload the app recorded itself.
bad=$(grep 'tracerig_test:hello:' "$TEST_TMP/all.txt" | sed -n 's/.*vpid = \([0-9]*\), vtid = \([0-9]*\), procname = "\([^"]*\)".*pid = \([0-9]*\), tid = \([0-9]*\), magic = \(0x[0-9a-f]*\), msg = "\([^"]*\)".*/\1 \2 \3 \4 \5 \6 \7/p' |
	awk '$1 != $4 || $2 != $5 || $3 != "lttng-app" || $6 != "0x7472616365726967" || $7 != "tracerig-hello"' | head -3)
check_eq "vpid, vtid and procname contexts match every event's own pid, tid and name" "" "$bad"
check_eq "events come from 2 distinct threads of one process" "1 2" \
	"$(grep 'tracerig_test:hello:' "$TEST_TMP/all.txt" | sed -n 's/.*vpid = \([0-9]*\), vtid = \([0-9]*\).*/\1 \2/p' | sort -u |
	   awk '{p[$1]=1; t[$2]=1} END {print length(p), length(t)}')"
check_grep "manifest records discarded_events = 0" '"discarded_events": *0' "$TEST_TMP/all/manifest.json"
check_grep "manifest records the CTF clock offset" '"clock_offset_ns": *[1-9][0-9]*' "$TEST_TMP/all/manifest.json"
# LTTng's clock is CLOCK_MONOTONIC: its offset from the Epoch must be the
# session's realtime - monotonic (within 50 ms of NTP slewing).
ctf_off=$(tr -d ' \n' <"$TEST_TMP/all/manifest.json" | sed -n 's/.*"clock_offset_ns":\([0-9]*\).*/\1/p')
ses_off=$(tr -d ' \n' <"$TEST_TMP/all/manifest.json" | sed -n 's/.*"realtime_minus_monotonic_ns":\([0-9]*\).*/\1/p')
check_eq "CTF timestamps use the session clock (CLOCK_MONOTONIC)" yes \
	"$(awk -v a="${ctf_off:-0}" -v b="${ses_off:-1}" 'BEGIN { d = a - b; if (d < 0) d = -d; print (d < 5e7 && a > 0) ? "yes" : "no (" a " vs " b ")" }')"
check_grep "the log names the trace clock" "lttng: trace clock 'monotonic'" "$TEST_TMP/all/tracerig.log"

daemon_after=$(sessiond_pid || true)
if [ -z "$daemon_before" ]; then
	check_eq "the session daemon tracerig started is stopped afterwards" "" "$daemon_after"
	check_grep "the log says tracerig started the daemon" 'lttng: started lttng-sessiond \(pid [0-9]+\)' "$TEST_TMP/all/tracerig.log"
else
	check_eq "an already running session daemon is left running" "$daemon_before" "$daemon_after"
	skip "the session daemon tracerig started is stopped afterwards" "a daemon was already running"
fi

# --- 2: log level, filter expression, kernel events without lttng-modules --
own_sessiond
write_profile "$TEST_TMP/narrow.ini" 'events=tracerig_test:*' 'loglevel=info' 'filter=seq < 5' \
	'kernel_events=sched_switch'
sed -i 's/^required = lttng$/required =/' "$TEST_TMP/narrow.ini"
run_tracerig -c "$TEST_TMP/narrow.ini" -d 20 -o "$TEST_TMP/narrow.trace.zip" -- "$LTTNG_APP" -n 20 -T 2 -i 1000
check_eq "tracerig exits 0 (filtered run)" 0 "$rc"
unzip_archive "$TEST_TMP/narrow.trace.zip" "$TEST_TMP/narrow"
bt_text "$TEST_TMP/narrow" >"$TEST_TMP/narrow.txt"
check_eq "filter 'seq < 5' keeps seq 0..4 of each thread" "0 1 2 3 4 " \
	"$(sed -n 's/.*tracerig_test:hello:.* seq = \([0-9]*\),.*/\1/p' "$TEST_TMP/narrow.txt" | sort -un | tr '\n' ' ')"
check_eq "10 hello events pass" 10 "$(grep -c 'tracerig_test:hello:' "$TEST_TMP/narrow.txt")"
check_eq "loglevel=info drops the DEBUG-level tick events" 0 "$(grep -c 'tracerig_test:tick:' "$TEST_TMP/narrow.txt")"
if [ -e /sys/module/lttng_tracer ]; then
	skip "kernel tracer not available said once" "lttng-modules is loaded here"
else
	check_eq "kernel tracer not available said once" 1 "$(grep -c 'kernel tracer not available' "$TEST_TMP/out")"
fi

# --- 3: a bad filter expression fails before anything runs ----------------
write_profile "$TEST_TMP/bad.ini" 'events=tracerig_test:*' 'filter=seq <'
run_tracerig -c "$TEST_TMP/bad.ini" -d 1 -o "$TEST_TMP/bad.trace.zip" -- "$LTTNG_APP" -n 1
if [ "$rc" != 0 ] && grep -q "check the filter expression" "$TEST_TMP/out"; then
	ok "a malformed filter expression is an error naming the filter"
else
	not_ok "a malformed filter expression is an error naming the filter" "rc=$rc" "$(cat "$TEST_TMP/out")"
fi

# --- 4: wrong preset and event names: profile errors, all of them, with
# their lines, before anything runs (no session daemon started) -----------
write_profile "$TEST_TMP/names.ini" 'preset=defualt' 'events=tracerig_test:*, bad name'
run_tracerig -c "$TEST_TMP/names.ini" -d 1 -o "$TEST_TMP/names.trace.zip"
check_eq "wrong names: exit 2 (a profile error)" 2 "$rc"
check_grep "the misspelt preset, at its line, with the presets there are" \
	"^tracerig: $TEST_TMP/names\.ini:[0-9]+: \[lttng\] preset: 'defualt' is not one of: default, gccollectonly, .* \(did you mean 'default'\?\)" \
	"$TEST_TMP/out"
check_grep "and the bad event name too, at its line" \
	"^tracerig: $TEST_TMP/names\.ini:[0-9]+: \[lttng\] events: event name 'bad name' contains a blank" \
	"$TEST_TMP/out"
check_grep "counted as the profile's errors" '^tracerig: 2 errors in the profile; nothing was collected$' \
	"$TEST_TMP/out"
check "and no archive" test ! -e "$TEST_TMP/names.trace.zip"

# --- 5: values the key table cannot judge alone (sizes that are no power
# of two, command_env items that are no NAME=VALUE) the same way, and
# --check says them too, even with no session daemon to ask --------------
write_profile "$TEST_TMP/sizes.ini" 'events=tracerig_test:*' 'subbuf_size=5000' 'subbuf_count=3' \
	'command_env=FOO, =bar, A=b'
run_tracerig -c "$TEST_TMP/sizes.ini" -d 1 -o "$TEST_TMP/sizes.trace.zip" -- true
check_eq "sizes and command_env: exit 2 (a profile error)" 2 "$rc"
check_eq "each wrong value said once, at its line" "1 1 1 1" \
	"$(grep -c "sizes\.ini:7: \[lttng\] subbuf_size: 5000 is not a power of two" "$TEST_TMP/out") $(grep -c "sizes\.ini:8: \[lttng\] subbuf_count: 3 is not a power of two" "$TEST_TMP/out") $(grep -c "sizes\.ini:9: \[lttng\] command_env: 'FOO' is not NAME=VALUE" "$TEST_TMP/out") $(grep -c "sizes\.ini:9: \[lttng\] command_env: '=bar' is not NAME=VALUE" "$TEST_TMP/out")"
check_grep "counted" '^tracerig: 4 errors in the profile; nothing was collected$' "$TEST_TMP/out"
run_tracerig --check -c "$TEST_TMP/sizes.ini" --set lttng.start_sessiond=no
check_eq "--check of it: exit 2" 2 "$rc"
check_grep "--check counts them" "^profile $TEST_TMP/sizes\.ini: 4 errors \(on stderr\)$" "$TEST_TMP/out"
check_grep "--check: lttng NOT USABLE, pointing at them" \
	"^  lttng .*NOT USABLE: the profile's \[lttng\] settings are refused" "$TEST_TMP/out"

# --- 6: said by the plugin's validate: before any backend starts, beside
# another backend's mistakes ---------------------------------------------
write_profile "$TEST_TMP/both.ini" 'events=tracerig_test:*' 'subbuf_count=3'
printf '[testa]\njournal = %s\npayload = refused\n' "$TEST_TMP/journal" >>"$TEST_TMP/both.ini"
run_tracerig -c "$TEST_TMP/both.ini" -d 1 -o "$TEST_TMP/both.trace.zip"
check_eq "two backends' wrong values: exit 2" 2 "$rc"
check_grep "lttng's, at its line" \
	"^tracerig: $TEST_TMP/both\.ini:7: \[lttng\] subbuf_count: 3 is not a power of two" "$TEST_TMP/out"
check_grep "and the other backend's" "both\.ini:10: \[testa\] payload: 'refused' is refused" "$TEST_TMP/out"
check_grep "counted together" '^tracerig: 2 errors in the profile; nothing was collected$' "$TEST_TMP/out"
check_eq "no backend was initialised" "testa validate" "$(paste -sd, "$TEST_TMP/journal")"
run_tracerig --check -c "$TEST_TMP/both.ini"
check_eq "--check of it: exit 2, lttng's said once" "2 1" \
	"$rc $(grep -c "both\.ini:7: \[lttng\] subbuf_count: 3 is not a power of two" "$TEST_TMP/out")"
check_grep "--check: lttng NOT USABLE, pointing at it" \
	"^  lttng .*NOT USABLE: the profile's \[lttng\] settings are refused" "$TEST_TMP/out"

done_testing

#!/usr/bin/env bash
# The flight recorder's automatic triggers, on a workload that says when
# it idles, spikes and crashes (tests/core/flight/spike.c):
#   trigger_cpu / trigger_for: one snapshot when a traced process's CPU use
#   stays at or above the threshold for the time, none during the idle part
#   before, none again for the same spike, holding the spike's function;
#   trigger_crash: a traced process dying on SIGSEGV makes a snapshot of
#   its last seconds while collection goes on (another target lives), and a
#   launched command that crashes ends the session with one final snapshot
#   that says so; trigger_cpu outside flight mode, or not a percentage, is
#   refused with the key named.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
export TMPDIR="$TEST_TMP"
command -v cc >/dev/null || skip_all "no C compiler to build the workload"
command -v python3 >/dev/null || skip_all "python3 reads the manifests"
mkdir -p "$TEST_TMP/w"
cc -O0 -fno-omit-frame-pointer -o "$TEST_TMP/w/spike" "$top_srcdir/tests/core/flight/spike.c" ||
	skip_all "cannot build the workload"
spike="$TEST_TMP/w/spike"

# field FILE PART: when the workload said PART began (CLOCK_MONOTONIC ns).
field() { sed -n "s/^$2 //p" "$1"; }
# wait_part FILE PART: until the workload says PART began (2 minutes at most).
wait_part() {
	for _ in $(seq 1200); do
		[ -n "$(field "$1" "$2")" ] && return 0
		sleep 0.1
	done
	return 1
}
# archives_by DIR TRIGGER: the archives whose manifest names TRIGGER.
archives_by() {
	local a
	for a in "$1"/*.trace.zip; do
		[ -e "$a" ] || continue
		unzip -p "$a" manifest.json 2>/dev/null | grep -q "\"trigger\": \"$2\"" && echo "$a"
	done
	return 0
}
# stop_session PID: SIGINT, then its exit status in $rc.
stop_session() {
	kill -INT "$1" 2>/dev/null
	rc=0
	wait "$1" || rc=$?
}

# ---- 1. trigger_cpu: a spike held for trigger_for ----
# Asleep, the workload uses nothing; spinning, it has at least a tenth of a
# CPU however loaded the machine is: the threshold tells them apart.
cat >"$TEST_TMP/cpu.ini" <<'EOF'
[tracerig]
name = cpu
mode = flight
window = 4s
trigger_cpu = 10%
trigger_for = 2s
trigger_crash = no
required = perf_events

[perf_events]
callchain = fp
EOF
st="$TEST_TMP/cpu.status"
"$spike" "$st" 5 6 &
wp=$!
on_exit "kill $wp 2>/dev/null"
mkdir -p "$TEST_TMP/cpu"
"$TRACERIG" -c "$TEST_TMP/cpu.ini" -p "$wp" -o "$TEST_TMP/cpu" >"$TEST_TMP/cpu.out" 2>&1 </dev/null &
tp=$!
on_exit "kill -9 $tp 2>/dev/null"
check "the workload idles, spikes, and calms down" wait_part "$st" calm
# An archive appears whole (renamed into place): wait for it, as the
# trigger may still be writing it when the spike ends.
for _ in $(seq 300); do
	[ -n "$(archives_by "$TEST_TMP/cpu" cpu)" ] && break
	sleep 0.1
done
stop_session "$tp"
check_eq "the flight session ends with exit 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/cpu.out"
cpu_archives=$(archives_by "$TEST_TMP/cpu" cpu)
check_eq "one snapshot for the one spike" 1 "$(printf '%s' "$cpu_archives" | grep -c .)"
check_eq "and the final one at the stop" 1 "$(archives_by "$TEST_TMP/cpu" stop | grep -c .)"
a=$(printf '%s\n' "$cpu_archives" | head -1)
if [ -n "$a" ]; then
	unzip_archive "$a" "$TEST_TMP/cpu-snap"
	check "it came after the spike had held for the time, not during the idle part" \
		python3 - "$TEST_TMP/cpu-snap/manifest.json" "$(field "$st" spike)" "$(field "$st" calm)" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["flight"]
spike, calm = int(sys.argv[2]), int(sys.argv[3])
print(f)
# Use is measured over 0.5 s intervals: the one the spike began in may
# count from its start.
assert f["to_monotonic_ns"] >= spike + 1.5e9, ("fired too early", f["to_monotonic_ns"] - spike)
assert f["to_monotonic_ns"] <= calm + 1e9, ("fired after the spike", f["to_monotonic_ns"] - calm)
assert f["trigger"] == "cpu" and "trigger_cpu = 10%" in f["trigger_detail"], f
PY
	check_grep "its samples are the spike's function" ';spike_hot ' "$TEST_TMP/cpu-snap/cpu.folded"
else
	skip "the CPU snapshot's range and content" "no snapshot was triggered"
	skip "its samples are the spike's function" "no snapshot was triggered"
fi
kill "$wp" 2>/dev/null; wait "$wp" 2>/dev/null

# ---- 2. trigger_crash: a -p target crashes, another lives on ----
cat >"$TEST_TMP/crash.ini" <<'EOF'
[tracerig]
name = crash
mode = flight
window = 4s
required = perf_events

[perf_events]
callchain = fp
EOF
st="$TEST_TMP/crash.status"
"$spike" "$st" 1 3 crash &
victim=$!
sleep 1000 &
bystander=$!
on_exit "kill $victim $bystander 2>/dev/null"
mkdir -p "$TEST_TMP/crash"
"$TRACERIG" -c "$TEST_TMP/crash.ini" -p "$victim,$bystander" -o "$TEST_TMP/crash" \
	>"$TEST_TMP/crash.out" 2>&1 </dev/null &
tp=$!
on_exit "kill -9 $tp 2>/dev/null"
check "the crashing target crashes" wait_part "$st" crash
for _ in $(seq 300); do
	[ -n "$(archives_by "$TEST_TMP/crash" crash)" ] && break
	sleep 0.1
done
check "collection goes on after the crash snapshot" kill -0 "$tp"
stop_session "$tp"
check_eq "the session ends with exit 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/crash.out"
a=$(archives_by "$TEST_TMP/crash" crash | head -1)
check "a target's crash writes a snapshot" test -n "$a"
if [ -n "$a" ]; then
	unzip_archive "$a" "$TEST_TMP/crash-snap"
	check_grep "its manifest says which process died, and how" \
		"\"trigger_detail\": \"PID $victim killed by SIGSEGV" "$TEST_TMP/crash-snap/manifest.json"
	check_grep "it holds the crashed process's last seconds" ';spike_hot ' "$TEST_TMP/crash-snap/cpu.folded"
else
	skip "the crash snapshot's manifest and content" "no snapshot was triggered"
	skip "it holds the crashed process's last seconds" "no snapshot was triggered"
fi
kill "$bystander" 2>/dev/null; wait "$bystander" 2>/dev/null

# ---- 3. A launched command that crashes: one final snapshot, "crash" ----
st="$TEST_TMP/cmd.status"
mkdir -p "$TEST_TMP/cmd"
run_tracerig -c "$TEST_TMP/crash.ini" -o "$TEST_TMP/cmd" -- "$spike" "$st" 0 2 crash
check "tracerig passes on the command's death (exit $rc)" test "$rc" -ne 0
check_eq "one archive: the final snapshot" 1 "$(ls "$TEST_TMP/cmd"/*.trace.zip 2>/dev/null | wc -l)"
a=$(archives_by "$TEST_TMP/cmd" crash | head -1)
check "it is triggered by the crash" test -n "$a"
if [ -n "$a" ]; then
	unzip_archive "$a" "$TEST_TMP/cmd-snap"
	check_grep "it names the command and the signal" '"trigger_detail": "PID [0-9]+ \(.*spike\) killed by SIGSEGV' \
		"$TEST_TMP/cmd-snap/manifest.json"
	check_grep "it says the command ended the session" '"session_ended_by": "command' "$TEST_TMP/cmd-snap/manifest.json"
	check_grep "it holds the command's last seconds" ';spike_hot ' "$TEST_TMP/cmd-snap/cpu.folded"
else
	skip "the final crash snapshot's manifest and content" "no crash snapshot"
fi

# ---- 4. Refused values ----
printf '[tracerig]\ntrigger_cpu = 80%%\n[testa]\npayload = a\n' >"$TEST_TMP/rec.ini"
run_tracerig -c "$TEST_TMP/rec.ini" -d 1 -o "$TEST_TMP/"
check_eq "trigger_cpu in a recording session is a usage error" 2 "$rc"
check_grep "saying flight mode is needed" 'trigger_cpu = 80%: .*set mode = flight' "$TEST_TMP/out"
printf '[tracerig]\nmode = flight\ntrigger_cpu = lots\n[testa]\npayload = a\n' >"$TEST_TMP/bad.ini"
run_tracerig -c "$TEST_TMP/bad.ini" -d 1 -o "$TEST_TMP/"
check_eq "trigger_cpu that is not a percentage is a usage error" 2 "$rc"
check_grep "naming the key and the value" 'trigger_cpu = lots: not a percentage' "$TEST_TMP/out"
done_testing

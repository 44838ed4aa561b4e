#!/bin/sh
# lttng in a flight recorder ([tracerig] mode = flight): the session is an
# LTTng snapshot session (overwrite rings sized from the window), and each
# trigger records an LTTng snapshot into the archive's lttngTrace/, which
# babeltrace2 reads.  The workload (lttng-app -M) emits a marker event on
# SIGUSR2 and says its seq once emitted: a snapshot taken after that must
# hold it.  Collection goes on between snapshots, the stop writes a final
# one (the session still exists after stop), and no session of ours is
# left, after a normal end or a kill -9 (whose salvaged archive has the
# rings' last snapshot).
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lttng/lib-lttng.sh"
lttng_prereqs
own_sessiond
export TMPDIR="$TEST_TMP"
mkdir -p "$TEST_TMP/a"

cat >"$TEST_TMP/f.ini" <<'INI'
[tracerig]
name = lf
mode = flight
window = 4s
trigger_crash = no
required = lttng

[lttng]
events = tracerig_test:*
INI

no_session_of() { ! lttng list 2>/dev/null | grep -q "tracerig-$1-"; }
archives() { ls "$TEST_TMP/a"/lf-*.trace.zip 2>/dev/null | sort; }
# mark: has the app emit a marker event; prints its seq once emitted.
mark() {
	rm -f "$TEST_TMP/mark"
	kill -USR2 "$app"
	for _ in $(seq 300); do [ -s "$TEST_TMP/mark" ] && break; sleep 0.1; done
	cat "$TEST_TMP/mark" 2>/dev/null
}
# snapshot N: SIGUSR1 to tracerig; unpacks the new archive into s$N.
# (Two in one second are NAME-T.trace.zip and NAME-T-2.trace.zip: the new
# one is told by the listing before, not by its place in the order.)
snapshot() {
	archives >"$TEST_TMP/before"
	kill -USR1 "$tr"
	for _ in $(seq 300); do
		new=$(archives | comm -13 "$TEST_TMP/before" - | head -1)
		[ -n "$new" ] && break
		sleep 0.1
	done
	[ -n "$new" ] && unzip_archive "$new" "$TEST_TMP/s$1"
}
# marked_seq DIR: the seq of every marker event in DIR's trace.
marked_seqs() { grep 'msg = "tracerig-mark"' "$1" | sed -n 's/.* seq = \([0-9]*\),.*/\1/p' | tr '\n' ' '; }
max_seq() { sed -n 's/.*tracerig_test:hello:.* seq = \([0-9]*\),.*/\1/p' "$1" | sort -n | tail -1; }

# Expects everything about snapshot N: lttngTrace/ read by babeltrace2,
# the trigger, the marker MARK; leaves the text in s$N.txt.
check_snapshot() {
	n=$1 trigger=$2 m=$3
	meta=$(ls "$TEST_TMP"/s$n/lttngTrace/ust/uid/*/64-bit/metadata 2>/dev/null | head -1)
	if [ -n "$meta" ]; then ok "snapshot $n: lttngTrace/ust/uid/N/64-bit/metadata, a recording's layout"
	else not_ok "snapshot $n: lttngTrace/ust/uid/N/64-bit/metadata, a recording's layout" \
		"$(cd "$TEST_TMP/s$n" 2>/dev/null && find . | head -20)"; fi
	bt_text "$TEST_TMP/s$n" >"$TEST_TMP/s$n.txt"
	check_eq "snapshot $n: babeltrace2 reads its trace" "" "$(grep -v '^$' "$TEST_TMP/bt.err" | head -3)"
	check_grep "snapshot $n: the manifest says its trigger ($trigger)" "\"trigger\": \"$trigger\"" \
		"$TEST_TMP/s$n/manifest.json"
	case " $(marked_seqs "$TEST_TMP/s$n.txt")" in
	*" $m "*) ok "snapshot $n: holds the marker event (seq $m) emitted just before it" ;;
	*) not_ok "snapshot $n: holds the marker event (seq $m) emitted just before it" \
		"markers: $(marked_seqs "$TEST_TMP/s$n.txt")" "newest seq: $(max_seq "$TEST_TMP/s$n.txt")" ;;
	esac
}

# --- 0: --check: lttng takes part in flight mode; mode = discard does not fit
run_tracerig --check -c "$TEST_TMP/f.ini"
check_eq "--check: the flight profile is usable" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
check_no_grep "--check: lttng is not called unsupported in flight mode" "not supported" "$TEST_TMP/out"
sed 's/^events = .*/&\nmode = discard/' "$TEST_TMP/f.ini" >"$TEST_TMP/discard.ini"
run_tracerig --check -c "$TEST_TMP/discard.ini"
if [ "$rc" = 2 ] && grep -Eq "discard\.ini:[0-9]+: \[lttng\] mode: discard keeps the oldest events" "$TEST_TMP/out"; then
	ok "[lttng] mode = discard in a flight session is a profile error, at its line, saying why"
else
	not_ok "[lttng] mode = discard in a flight session is a profile error, at its line, saying why" "rc=$rc" "$(cat "$TEST_TMP/out")"
fi

# --- 1: two snapshots while collecting, the final one at stop ------------
"$LTTNG_APP" -t 600 -i 2000 -M "$TEST_TMP/mark" &
app=$!
on_exit "kill $app 2>/dev/null; wait $app 2>/dev/null"
"$TRACERIG" -c "$TEST_TMP/f.ini" -p "$app" -o "$TEST_TMP/a" >"$TEST_TMP/out" 2>&1 </dev/null &
tr=$!
on_exit "kill -9 $tr 2>/dev/null"
wait_active "$tr" || not_ok "the snapshot session records" "$(cat "$TEST_TMP/out")"
# 4 s x flight_rate 64K/s = 256 KiB per ring, in 8 sub-buffers.

m1=$(mark)
check "the app emitted marker 1" test -n "$m1"
snapshot 1
check_snapshot 1 SIGUSR1 "$m1"
# 4 s x flight_rate 64K/s = 256 KiB per ring, in 8 sub-buffers.
check_grep "the window sizes the rings: 8 x 32768 bytes, overwrite" \
	"lttng: snapshot session tracerig-$tr-[0-9]+: .* channel 8 x 32768 bytes overwrite" \
	"$TEST_TMP/s1/tracerig.log"

m2=$(mark)
check "collection goes on: marker 2 comes after marker 1" test "${m2:-0}" -gt "${m1:-0}"
snapshot 2
check_snapshot 2 SIGUSR1 "$m2"
check "snapshot 2 holds newer events than snapshot 1" \
	test "$(max_seq "$TEST_TMP/s2.txt")" -gt "$(max_seq "$TEST_TMP/s1.txt")"
check "the app still runs" kill -0 "$app"

m3=$(mark)
kill -INT "$tr"
rc=0
wait "$tr" || rc=$?
check_eq "the flight session ends with exit 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
final=""
for a in $(archives); do
	unzip -p "$a" manifest.json 2>/dev/null | grep -q '"trigger": "stop"' && final=$a
done
check "the stop writes a final snapshot" test -n "$final"
[ -n "$final" ] && unzip_archive "$final" "$TEST_TMP/s3"
check_snapshot 3 stop "$m3"
check_eq "3 archives" 3 "$(archives | wc -l)"
check "no session of tracerig $tr is left" no_session_of "$tr"
check "no staging is left behind" sh -c "! ls -d '$TEST_TMP'/tracerig-*.staging-* 2>/dev/null"
check_no_grep "no error or warning" "lttng: .*(error|failed|warning)" "$TEST_TMP/out"

# --- 2: kill -9 of a flight session: the watchdog records a last snapshot
# of the rings into what it salvages (lf.trace.zip), then destroys the
# session ---
"$TRACERIG" -c "$TEST_TMP/f.ini" -p "$app" -o "$TEST_TMP/a" >"$TEST_TMP/out" 2>&1 </dev/null &
tr=$!
on_exit "kill -9 $tr 2>/dev/null"
wait_active "$tr" || not_ok "the second snapshot session records" "$(cat "$TEST_TMP/out")"
m4=$(mark)
kill -9 "$tr"
wait "$tr" 2>/dev/null
wait_for "kill -9: no session of tracerig $tr is left" no_session_of "$tr"
wait_for "kill -9: the watchdog says it recorded a last snapshot and destroyed the session" \
	said "lttng: tracerig (pid $tr) ended without cleaning up: destroyed LTTng session tracerig-$tr-[0-9]*; its last snapshot is in lttngTrace/"
wait_for "kill -9: the watchdog packages the staging directory" test -s "$TEST_TMP/a/lf.trace.zip"
unzip_archive "$TEST_TMP/a/lf.trace.zip" "$TEST_TMP/s4"
bt_text "$TEST_TMP/s4" >"$TEST_TMP/s4.txt"
check_eq "kill -9: babeltrace2 reads the salvaged lttngTrace/" "" "$(grep -v '^$' "$TEST_TMP/bt.err" | head -3)"
case " $(marked_seqs "$TEST_TMP/s4.txt")" in
*" $m4 "*) ok "kill -9: the salvaged trace holds the marker (seq $m4) emitted before the kill" ;;
*) not_ok "kill -9: the salvaged trace holds the marker (seq $m4) emitted before the kill" \
	"markers: $(marked_seqs "$TEST_TMP/s4.txt")" "$(cat "$TEST_TMP/out")" ;;
esac

# --- 3: before any traced process registered: a snapshot without a trace --
kill "$app"
wait "$app" 2>/dev/null
sleep 600 &
idle=$!
on_exit "kill $idle 2>/dev/null"
rm -f "$TEST_TMP"/a/lf-*.trace.zip
"$TRACERIG" -c "$TEST_TMP/f.ini" -p "$idle" -o "$TEST_TMP/a" >"$TEST_TMP/out" 2>&1 </dev/null &
tr=$!
on_exit "kill -9 $tr 2>/dev/null"
wait_active "$tr" || not_ok "the third snapshot session records" "$(cat "$TEST_TMP/out")"
snapshot 5
check "a snapshot with no registered process is written" test -s "$TEST_TMP/s5/manifest.json"
check "it has no lttngTrace/" test ! -e "$TEST_TMP/s5/lttngTrace"
check_grep "its log says why" "lttng: snapshot: no ring buffer exists yet" "$TEST_TMP/s5/tracerig.log"
kill -INT "$tr"
rc=0
wait "$tr" || rc=$?
check_eq "that session ends with exit 0" 0 "$rc"
check "no session of tracerig $tr is left" no_session_of "$tr"

# --- 4: the session destroyed behind tracerig's back: snapshots go on
# without lttng's data, saying why once -----------------------------------
"$TRACERIG" -c "$TEST_TMP/f.ini" -p "$idle" -o "$TEST_TMP/a" >"$TEST_TMP/out" 2>&1 </dev/null &
tr=$!
on_exit "kill -9 $tr 2>/dev/null"
wait_active "$tr" || not_ok "the fourth snapshot session records" "$(cat "$TEST_TMP/out")"
name=$(lttng list 2>/dev/null | grep -o "tracerig-$tr-[0-9]*")
lttng destroy "$name" >/dev/null
snapshot 6
check "the snapshot is still written" test -s "$TEST_TMP/s6/manifest.json"
check_grep "its log says the daemon no longer knows the session" \
	"lttng: recording a snapshot of session $name failed: the session daemon no longer knows it" \
	"$TEST_TMP/s6/tracerig.log"
kill -INT "$tr"
wait "$tr"
check_eq "the loss is said once, not again at stop or in the final snapshot" 1 \
	"$(grep -c "lttng: .*session $name failed: the session daemon no longer knows it" "$TEST_TMP/out")"
check_no_grep "fini does not ask to destroy a session that is gone" "remove it with 'lttng destroy" "$TEST_TMP/out"

done_testing

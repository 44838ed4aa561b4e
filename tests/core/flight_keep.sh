#!/usr/bin/env bash
# A flight recorder's `keep = N` in a directory others can write to (mode
# 1777, like /tmp): it counts and removes only archives of its own uid
# that are regular files.  Another user's files named like its snapshots
# are neither removed nor counted (newer ones would otherwise push every
# archive of the session out of the bound); an older archive of the same
# uid (a previous run of the same service) is removed, as the bound says.
. "$top_srcdir/tests/lib.sh"
need_root
command -v setpriv >/dev/null || skip_all "needs setpriv (util-linux) to plant files as nobody"
export TMPDIR="$TEST_TMP"
# nobody reaches the shared directory below, and nothing else.
chmod 0711 "$TEST_TMP"
shared="$TEST_TMP/shared"
mkdir -m 1777 "$shared"
J="$TEST_TMP/journal"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

old_theirs="$shared/keep-20200101T000000Z.trace.zip"
new_theirs="$shared/keep-20990101T000000Z.trace.zip"
old_ours="$shared/keep-20200102T000000Z.trace.zip"
as_nobody sh -c 'echo theirs >"$1" && echo theirs too >"$2" && touch -d 2020-01-01 "$1" &&
	touch -d 2099-01-01 "$2"' sh "$old_theirs" "$new_theirs"
echo ours >"$old_ours" && touch -d 2020-01-02 "$old_ours"
check_eq "nobody's files are planted" "65534 65534" "$(stat -c %u "$old_theirs" "$new_theirs" | xargs)"

cat >"$TEST_TMP/keep.ini" <<'EOF'
[tracerig]
name = keep
mode = flight
window = 2s
keep = 1
required = testflight

[testflight]
EOF

wait_for_line() { # FILE PATTERN: bounded poll, no fixed sleep
	for _ in $(seq 1 200); do grep -q -- "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}
"$TRACERIG" -c "$TEST_TMP/keep.ini" -o "$shared" --set testflight.journal="$J" >"$TEST_TMP/out" 2>&1 </dev/null &
pid=$!
on_exit "kill $pid 2>/dev/null"
wait_for_line "$J" 'testflight start'
kill -USR1 "$pid"
wait_for_line "$TEST_TMP/out" 'snapshot /'
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
check_eq "the session exits 0" 0 "$rc"
first=$(sed -n 's/^tracerig: snapshot //p' "$TEST_TMP/out" | head -1)
final=$(sed -n 's/^tracerig: snapshot //p' "$TEST_TMP/out" | tail -1)
check "two snapshots were written" test -n "$first" -a "$first" != "$final"
check "keep = 1: the session's last snapshot stays" test -s "$final"
check "keep = 1: its earlier one went" test ! -e "$first"
check "keep = 1: an older archive of the same uid (a previous run) went" test ! -e "$old_ours"
check "another user's older file is not removed" test -s "$old_theirs"
check "another user's newer file is not removed" test -s "$new_theirs"
check_eq "and nothing else is in the directory" 3 "$(ls -A "$shared" | wc -l)"

done_testing

#!/usr/bin/env bash
# The end of a run (core/session/reaper.c): tracerig exits once its archive is in
# place, and a reaper that shares its memory frees and closes the rest.
# At tracerig's exit the archive is whole, the staging and the output's
# lock are gone; the reaper then goes too.  In the sanitizer pass there is
# no reaper (the leak check runs where the memory was freed).
. "$top_srcdir/tests/lib.sh"
export TMPDIR="$TEST_TMP/tmp"
mkdir -p "$TMPDIR"

two="$top_srcdir/tests/core/profiles/two.ini"
out="$TEST_TMP/r.trace.zip"

run_tracerig -vv -c "$two" -d 1 -o "$out"
check_eq "exit 0" 0 "$rc"
check "at the exit, the archive is whole" unzip -tq "$out"
check_eq "at the exit, no staging is left" "" "$(ls -A "$TMPDIR")"
check_eq "at the exit, no lock or temporary file beside the archive" "r.trace.zip" \
	"$(ls -A "$TEST_TMP" | grep '^\.\?r\.trace' | tr '\n' ' ' | sed 's/ $//')"
reaper=$(sed -n 's/.*the rest is freed by PID \([0-9]*\), after this exit.*/\1/p' "$TEST_TMP/out")
if [ -n "${TRACERIG_KEEP_PLUGINS_LOADED:-}" ]; then
	check_eq "sanitizer pass: no reaper, the process that allocated frees" "" "$reaper"
else
	check "a reaper took the freeing (its PID is said at -vv)" test -n "$reaper"
	gone=no
	for _ in $(seq 1 200); do
		# Gone, or its PID already someone else's.
		if ! [ -e "/proc/$reaper" ] ||
			[ "$(readlink "/proc/$reaper/exe" 2>/dev/null)" != "$(readlink -f "$TRACERIG")" ]; then
			gone=yes
			break
		fi
		sleep 0.05
	done
	check_eq "the reaper exits once it has freed" yes "$gone"
fi
# The archive is what tracerig wrote, the reaper touched nothing of it.
check "after the reaper, the archive is still whole" unzip -tq "$out"
unzip -p "$out" manifest.json >"$TEST_TMP/manifest.json" 2>/dev/null
check_grep "its manifest says how the session ended" '"ended_by": "duration"' "$TEST_TMP/manifest.json"

done_testing

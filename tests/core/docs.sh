#!/usr/bin/env bash
# The documentation matches the program: man pages render cleanly, and the
# profile reference is what the plugins' key tables say today.
. "$top_srcdir/tests/lib.sh"

for page in tracerig.1 tracerig.ini.5; do
	warnings=$(groff -man -Tutf8 -ww -z "$top_srcdir/docs/$page" 2>&1)
	check_eq "man page $page renders without warnings" "" "$warnings"
done
check_grep "tracerig(1) documents every exit status the program uses" '^\.B 127$' "$top_srcdir/docs/tracerig.1"

# The reference covers every in-tree backend only when all are built.
missing=""
for p in perf_events lttng ebpf mapharvest eventpipe zip; do
	[ -e "$top_builddir/plugins/$p/$p.la" ] || missing="$missing $p"
done
if [ -n "$missing" ]; then
	skip "profile reference is up to date" "backends not built here:$missing"
else
	TRACERIG_PLUGIN_PATH= "$TRACERIG" --profile-reference >"$TEST_TMP/ref.md"
	if diff -u "$top_srcdir/docs/profile-reference.md" "$TEST_TMP/ref.md" >"$TEST_TMP/diff"; then
		ok "profile reference is up to date"
	else
		not_ok "profile reference is up to date" "run 'make profile-reference' in the build tree" "$(head -40 "$TEST_TMP/diff")"
	fi
fi
# Every key the core accepts is documented in tracerig.ini(5).
# (A choice key's second line, "one of: ...", names no key.)
# No key at all (the listing empty, failing, or its core section renamed)
# is a failure, not zero checks.
lp_rc=0
"$TRACERIG" --list-plugins -v >"$TEST_TMP/list-plugins" 2>&1 || lp_rc=$?
keys=$(sed -n '/\[tracerig\] (the core)/,$p' "$TEST_TMP/list-plugins" | awk 'NR>1 && !($1 == "one" && $2 == "of:") {print $1}')
if [ "$lp_rc" != 0 ] || [ -z "$keys" ]; then
	not_ok "tracerig --list-plugins -v lists the core's keys" "exit status $lp_rc;" \
		"no key under a '[tracerig] (the core)' line in its output:" "$(head -c 2000 "$TEST_TMP/list-plugins")"
fi
for key in $keys; do
	check_grep "tracerig.ini(5) documents [tracerig] $key" "^\\.BR $key " "$top_srcdir/docs/tracerig.ini.5"
done

done_testing

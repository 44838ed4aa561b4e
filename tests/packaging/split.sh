#!/usr/bin/env bash
# A split install without packages: the built tracerig, copied out of the
# build tree (so it does not search the tree's plugins), with a plugin
# directory that holds only perf_events and zip, as a machine with
# tracerig + tracerig-perf-events has.  An absent optional backend is one
# warning naming its package, --check lists it as not installed, an absent
# required one is an error (exit 2) naming its package.
# tests/packaging/debs.sh checks the same with the real packages.
. "$top_srcdir/tests/lib.sh"
export TMPDIR="$TEST_TMP"

for p in perf_events zip; do
	[ -e "$top_builddir/plugins/$p/.libs/$p.so" ] || skip_all "needs the $p plugin built"
done
# Binaries the tests run stay out of /tmp (other tests mount a private one).
split=$(mktemp -d /var/tmp/tracerig-split.XXXXXX)
on_exit "rm -rf '$split'"
mkdir -p "$split/bin" "$split/plugins"
cp "$TRACERIG" "$split/bin/tracerig"
cp "$top_builddir/plugins/perf_events/.libs/perf_events.so" "$top_builddir/plugins/zip/.libs/zip.so" \
	"$split/plugins/"
split_tracerig() {
	rc=0
	TRACERIG_PLUGIN_PATH=$split/plugins "$split/bin/tracerig" "$@" >"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
}

# The isolation under test: the copied tracerig sees only its plugin
# directory.  If it finds other backends (the build tree's), the split
# install is broken and nothing below would mean anything: a failure.
split_tracerig --list-plugins
if [ "$rc" != 0 ] || grep -Eq '^  (lttng|ebpf|mapharvest|eventpipe) ' "$TEST_TMP/out"; then
	# Only a tracerig installed on this machine (plugins in the compiled-in
	# $(pkglibdir), which every tracerig searches) is not the program's fault.
	leak="" installed=""
	for d in $(sed -n 's/^plugin path: //p' "$TEST_TMP/out" | tr ':' '\n'); do
		case "$d" in
		"$split/plugins") ;;
		"$top_builddir"* | "$top_srcdir"*) leak="$leak $d" ;;
		*) ls "$d"/*.so >/dev/null 2>&1 && installed="$installed $d" ;;
		esac
	done
	if [ "$rc" = 0 ] && [ -z "$leak" ] && [ -n "$installed" ]; then
		skip_all "tracerig is installed here (backends in$installed, which every tracerig searches): uninstall it to test a split install"
	fi
	not_ok "the split install sees only its own plugin directory (perf_events, zip)" \
		"tracerig --list-plugins (exit $rc) with TRACERIG_PLUGIN_PATH=$split/plugins:" "$(cat "$TEST_TMP/out")"
	done_testing
	exit 1
fi
ok "the split install sees only its own plugin directory (perf_events, zip)"

# mapharvest and lttng are optional in dotnet.ini, perf_events required.
split_tracerig --check -c "$top_srcdir/conf/profiles/dotnet.ini"
check_eq "--check, optional backends absent: exit 0" 0 "$rc"
check_grep "--check lists the installed required backend" '^  perf_events +[^ ]+ +required ' "$TEST_TMP/out"
check_grep "--check lists lttng as not installed, with its package" \
	'^  lttng +- +optional +NOT INSTALLED: apt install tracerig-lttng$' "$TEST_TMP/out"
check_grep "--check lists mapharvest as not installed, with its package" \
	'^  mapharvest +- +optional +NOT INSTALLED: apt install tracerig-mapharvest$' "$TEST_TMP/out"
check_no_grep "--check lists no plugin file of an absent backend" '^    (lttng|mapharvest):' "$TEST_TMP/out"

if [ "$(id -u)" = 0 ]; then
	split_tracerig -c "$top_srcdir/conf/profiles/cpu.ini" -d 200ms -o "$TEST_TMP/cpu.trace.zip" -- /bin/true
	check_eq "cpu.ini without mapharvest: the session exits 0" 0 "$rc"
	check_eq "cpu.ini without mapharvest: one warning about it" 1 "$(grep -c 'mapharvest' "$TEST_TMP/out")"
	check_grep "the warning names the package" \
		"^tracerig: warning: .*cpu\\.ini:[0-9]+: \\[mapharvest\\] is not installed; going on without it \\(optional here\\): to use it, install it with \`apt install tracerig-mapharvest\`" \
		"$TEST_TMP/out"
	check "cpu.ini without mapharvest: the archive is written" test -s "$TEST_TMP/cpu.trace.zip"
else
	skip "a session without an optional backend" "needs root (perf_events)"
fi

# wall.ini requires perf_events and ebpf.
split_tracerig -c "$top_srcdir/conf/profiles/wall.ini" -d 200ms -o "$TEST_TMP/wall.trace.zip"
check_eq "a required backend absent: exit 2" 2 "$rc"
check_grep "a required backend absent: the error names its package" \
	"\\[ebpf\\] plugin 'ebpf' is not installed .*, and the profile requires it: install it with \`apt install tracerig-ebpf\`" \
	"$TEST_TMP/out"
check "a required backend absent: nothing is written" test ! -e "$TEST_TMP/wall.trace.zip"

# Every backend of the profile absent and optional: an error, not an empty run.
printf '[tracerig]\nname = none\n[lttng]\n[mapharvest]\n' >"$TEST_TMP/none.ini"
split_tracerig -c "$TEST_TMP/none.ini" -d 200ms -o "$TEST_TMP/none.trace.zip"
check_eq "no backend of the profile installed: exit 2" 2 "$rc"
check_grep "no backend of the profile installed: said so" "none of the profile's backends is installed" "$TEST_TMP/out"

# A misspelt in-tree name stays an error, never a silent skip.
printf '[tracerig]\nname = typo\n[perf_events]\n[lttnq]\n' >"$TEST_TMP/typo.ini"
split_tracerig --check -c "$TEST_TMP/typo.ini"
check_eq "a misspelt backend: exit 2" 2 "$rc"
check_grep "a misspelt backend: did you mean" "\\[lttnq\\] no backend of that name \\(did you mean \\[lttng\\]\\?\\)" "$TEST_TMP/out"

done_testing

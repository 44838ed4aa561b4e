#!/bin/sh
# The flame graph's first screen shows the graph, however deep the stacks:
# core/views/flamegraph.c's SVG opened in headless Chromium at 1280x800, every
# frame of its bottom row in view and not under the header, the Search
# button in view.  A shallow graph, a deep recursion (1000 frames), a
# 127-frame garbage stack beside ordinary ones, and the cpu.svg of a real
# recording of the demo.  With scripts off, the deep graph's first screen is
# empty (the check sees what it is meant to catch).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/clients/lib-clients.sh"
render="$top_builddir/tests/clients/render-flamegraph"
[ -x "$render" ] || skip_all "tests/clients/render-flamegraph is not built"
need_clients

# first_screen SVG [--no-script]: flamegraph.js's verdict (0: the graph is
# on the first screen, 1: it is not, 2: the browser failed).
first_screen() {
	node "$clients_src/flamegraph.js" ${2:-} "$1" 2>&1
}
# shows_graph NAME SVG
shows_graph() {
	local out
	if out=$(first_screen "$2"); then
		ok "$1"
		echo "#   $out"
	else
		not_ok "$1" "$out"
	fi
}

printf 'demo;main;hot 60\ndemo;main;warm 30\ndemo;main;cold 10\n' >"$TEST_TMP/shallow.folded"
awk 'BEGIN {
	s = "deep;main"; for (i = 0; i < 1000; i++) s = s ";recurse"
	print s ";leaf 50"; print "deep;main;other 50"; print "idle;poll 20"
}' >"$TEST_TMP/deep.folded"
awk 'BEGIN {
	s = "app;clone3"; for (i = 0; i < 125; i++) s = s ";[unknown]"
	print s " 1"; print "app;main;work 300"; print "app;main;other 100"
}' >"$TEST_TMP/garbage.folded"
for g in shallow deep garbage; do
	"$render" "$g" <"$TEST_TMP/$g.folded" >"$TEST_TMP/$g.svg" ||
		not_ok "render-flamegraph renders $g.folded"
done

shows_graph "a shallow graph is on the first screen" "$TEST_TMP/shallow.svg"
height=$(sed -n 's/^<svg .* height="\([0-9]*\)".*/\1/p' "$TEST_TMP/deep.svg")
if [ "${height:-0}" -gt 800 ]; then
	ok "the deep graph is taller than the window ($height px)"
else
	not_ok "the deep graph is taller than the window" "height: ${height:-none}"
fi
shows_graph "a 1000-frame recursion's graph starts at its root" "$TEST_TMP/deep.svg"
shows_graph "a 127-frame garbage stack does not push the graph off the first screen" "$TEST_TMP/garbage.svg"
blank="without scripts, the deep graph opens at its top (the check sees a blank first screen)"
verdict=0
out=$(first_screen "$TEST_TMP/deep.svg" --no-script) || verdict=$?
if [ "$verdict" = 1 ]; then
	ok "$blank"
	echo "#   $out"
else
	not_ok "$blank" "flamegraph.js exited $verdict" "$out"
fi

DEMO="$top_builddir/demo/tracerig-demo"
if [ "$(id -u)" = 0 ] && [ -x "$DEMO" ] && [ -e "$top_builddir/plugins/perf_events/perf_events.la" ]; then
	run_tracerig -c "$top_srcdir/conf/profiles/cpu.ini" -o "$TEST_TMP/c.trace.zip" -- "$DEMO" --seconds 1
	check_eq "tracerig records the demo" 0 "$rc"
	unzip_archive "$TEST_TMP/c.trace.zip" "$TEST_TMP/c"
	shows_graph "a recording's cpu.svg is on the first screen" "$TEST_TMP/c/cpu.svg"
else
	skip "a recording's cpu.svg" "needs root, the demo and the perf_events backend"
fi
done_testing

#!/usr/bin/env bash
# Plugins that cannot be used are refused with the file and the cause.
. "$top_srcdir/tests/lib.sh"

for case in \
	"badabi|badabi.*built for plugin ABI 999 but this tracerig has ABI 1 \(rebuild" \
	"nosymbol|nosymbol.* does not export 'tracerig_plugin': not a tracerig plugin" \
	"unresolved|cannot load .*unresolved.*: .*(tracerig_test_symbol_that_does_not_exist|undefined symbol|file not found)"
do
	name=${case%%|*} pattern=${case#*|}
	printf '[%s]\n' "$name" >"$TEST_TMP/p.ini"
	run_tracerig --check -c "$TEST_TMP/p.ini"
	check_eq "$name: refused with exit 2" 2 "$rc"
	check_grep "$name: the message names the file and the cause" "$pattern" "$TEST_TMP/out"
done

# --plugin-dir comes first on the path: a same-named plugin there wins.
mkdir -p "$TEST_TMP/dir"
cp "$top_builddir/tests/plugins/.libs/testb.so" "$TEST_TMP/dir/testa.so"
printf '[testa]\n' >"$TEST_TMP/p.ini"
run_tracerig --check -c "$TEST_TMP/p.ini" --plugin-dir "$TEST_TMP/dir"
check_eq "a renamed plugin whose descriptor names another plugin is refused" 2 "$rc"
check_grep "--plugin-dir is searched before TRACERIG_PLUGIN_PATH" "$TEST_TMP/dir/testa.so is plugin 'testb', not 'testa'" "$TEST_TMP/out"
cp "$top_builddir/tests/plugins/.libs/testa.so" "$TEST_TMP/dir/testa.so"
run_tracerig --check -c "$TEST_TMP/p.ini" --plugin-dir "$TEST_TMP/dir"
check_grep "--check names the plugin file it loaded" "testa: $TEST_TMP/dir/testa.so" "$TEST_TMP/out"

done_testing

#!/usr/bin/env bash
# Plugins that cannot be used are refused with the file and the cause.
. "$top_srcdir/tests/lib.sh"

# The private services' version of this tree, as the loader states it.
internal=$(sed -n 's/^#define TRACERIG_INTERNAL_VERSION \([0-9]*\)$/\1/p' \
	"$top_srcdir/include/tracerig-private/ext.h")
for case in \
	"badabi|badabi.so: plugin 'badabi' was built for plugin ABI 999, this tracerig speaks ABI 3: rebuild it against tracerig-plugin.pc" \
	"abi1|abi1.so: plugin 'abi1' was built for plugin ABI 1, this tracerig speaks ABI 3: rebuild it against tracerig-plugin.pc \(pkg-config --cflags tracerig-plugin\)" \
	"abi2|abi2.so: plugin 'abi2' was built for plugin ABI 2, this tracerig speaks ABI 3: rebuild it against tracerig-plugin.pc \(pkg-config --cflags tracerig-plugin\)" \
	"newcaps|newcaps.so asks for capabilities 0x80 this tracerig does not know \(it was built for a later one\)" \
	"otherrelease|otherrelease.so was built with another release of tracerig \(its private services version 999, this tracerig's $internal\): install the plugin package of the same release as tracerig" \
	"badbind|badbind.so has an unusable key table: key 'level' \(integer\) is bound to a field of 2 bytes; it needs a long long \(an int only with a \[min, max\] that fits one\) \(fix the plugin's tracerig_key table\)" \
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

# Plugins run as root: only from places nobody else can write to.
so="$top_builddir/tests/plugins/.libs/testa.so"
refusal() { # DIR REASON: the two lines that refuse a plugin directory
	printf '%s\n%s' "tracerig: plugin directory $1: refusing to load plugins from it as root: $2" \
		"tracerig: (it is on the plugin path through --plugin-dir, TRACERIG_PLUGIN_PATH or the installation: remove it from there, or fix its permissions)"
}
for mode in 0777 1777 0775; do
	d="$TEST_TMP/open-$mode"
	mkdir -p "$d" && cp "$so" "$d/" && chmod "$mode" "$d"
	case $mode in 0775) who="its group" ;; *) who=everyone ;; esac
	want=$(refusal "$d" "$d is writable by $who (mode $mode) (chmod go-w $d, or use a directory only root can write)")
	run_tracerig --check -c "$TEST_TMP/p.ini" --plugin-dir "$d"
	check_eq "--plugin-dir mode $mode: --check refuses it (exit 1)" 1 "$rc"
	check_eq "--plugin-dir mode $mode: --check says why and what to do" "$want" "$(cat "$TEST_TMP/out")"
	run_tracerig --list-plugins --plugin-dir "$d"
	check_eq "--plugin-dir mode $mode: --list-plugins refuses it" "1 $want" "$rc $(cat "$TEST_TMP/out")"
	run_tracerig --profile-reference --plugin-dir "$d"
	check_eq "--plugin-dir mode $mode: --profile-reference refuses it" "1 $want" "$rc $(cat "$TEST_TMP/out")"
	rc=0
	TRACERIG_PLUGIN_PATH="$d:$TRACERIG_PLUGIN_PATH" "$TRACERIG" -c "$TEST_TMP/p.ini" -o "$TEST_TMP/never.trace.zip" >"$TEST_TMP/out" 2>&1 || rc=$?
	check_eq "TRACERIG_PLUGIN_PATH with a mode $mode dir: a run refuses it, collects nothing" "1 $want" "$rc $(cat "$TEST_TMP/out")"
done
check "nothing was collected from an untrusted path" test ! -e "$TEST_TMP/never.trace.zip"

d="$TEST_TMP/nobodys"
mkdir -p "$d" && cp "$so" "$d/" && chown nobody "$d"
run_tracerig --check -c "$TEST_TMP/p.ini" --plugin-dir "$d"
check_eq "a directory owned by nobody is refused" "1 $(refusal "$d" "$d is owned by nobody (uid $(id -u nobody)), not by root or you (chown root $d, or use a directory only root can write)")" "$rc $(cat "$TEST_TMP/out")"

d="$TEST_TMP/filemodes"
mkdir -p "$d" && cp "$so" "$d/testa.so" && chmod 0646 "$d/testa.so"
run_tracerig --check -c "$TEST_TMP/p.ini" --plugin-dir "$d"
check_eq "an other-writable plugin file is refused (exit 2)" 2 "$rc"
check_eq "an other-writable plugin file: says why and what to do" "tracerig: $TEST_TMP/p.ini:1: [testa] refusing to load $d/testa.so as root: $d/testa.so is writable by everyone (mode 0646) (chmod go-w $d/testa.so, or use a directory only root can write)
tracerig: 1 error in the profile; nothing was collected" "$(cat "$TEST_TMP/out")"
run_tracerig --list-plugins --plugin-dir "$d"
check_grep "--list-plugins shows it unusable, and why" "^  testa +UNUSABLE  refusing to load $d/testa.so as root: $d/testa.so is writable by everyone" "$TEST_TMP/out"
chmod 0664 "$d/testa.so"
run_tracerig --check -c "$TEST_TMP/p.ini" --plugin-dir "$d"
check_grep "a group-writable plugin file is refused" "refusing to load $d/testa.so as root: $d/testa.so is writable by its group \(mode 0664\)" "$TEST_TMP/out"
chmod 0644 "$d/testa.so" && chown nobody "$d/testa.so"
run_tracerig --check -c "$TEST_TMP/p.ini" --plugin-dir "$d"
check_grep "a plugin file owned by nobody is refused" "refusing to load $d/testa.so as root: $d/testa.so is owned by nobody" "$TEST_TMP/out"
chown root "$d/testa.so"
run_tracerig --check -c "$TEST_TMP/p.ini" --plugin-dir "$d"
check_eq "the same file, root's and 0644, is loaded" 0 "$rc"

# A corrupt shared object is reported as what it is, not "file not found".
d="$TEST_TMP/corrupt"
mkdir -p "$d"
printf '[x]\n' >"$TEST_TMP/x.ini"
echo "this is not a library" >"$d/x.so"
run_tracerig --check -c "$TEST_TMP/x.ini" --plugin-dir "$d"
check_eq "a text file named x.so: exit 2" 2 "$rc"
check_eq "a text file named x.so: the dynamic linker's reason" "tracerig: $TEST_TMP/x.ini:1: [x] cannot load $d/x.so: $d/x.so: file too short (a library it needs is missing, it is corrupt, or it was built for another system)" "$(head -n 1 "$TEST_TMP/out")"
head -c 100000 /bin/true >"$d/x.so"
run_tracerig --check -c "$TEST_TMP/x.ini" --plugin-dir "$d"
check_grep "an executable named x.so: the dynamic linker's reason" "\[x\] cannot load $d/x.so: $d/x.so: (cannot dynamically load|invalid ELF header|.*position-independent)" "$TEST_TMP/out"
head -c 3000 "$so" >"$d/x.so"
run_tracerig --check -c "$TEST_TMP/x.ini" --plugin-dir "$d"
check_eq "a truncated plugin: exit 2, not a crash" 2 "$rc"
check_grep "a truncated plugin: says it is truncated" "^tracerig: $TEST_TMP/x\.ini:1: \[x\] cannot load $d/x\.so: truncated or corrupt ELF file \(a segment ends at byte [0-9]+, the file has 3000 bytes\): reinstall or rebuild it$" "$TEST_TMP/out"
check_no_grep "no corrupt plugin is called 'file not found'" "file not found" "$TEST_TMP/out"

done_testing

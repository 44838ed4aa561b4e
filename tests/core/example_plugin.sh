#!/usr/bin/env bash
# A site-specific plugin builds against nothing but what `make install` puts
# on the machine (the header and tracerig-plugin.pc), and tracerig loads it,
# validates its keys, runs it and packages what it wrote: the example of
# docs/writing-a-plugin.md, docs/example/loadavg.c, checked end to end.
. "$top_srcdir/tests/lib.sh"

for tool in make cc nm pkg-config unzip python3; do
	command -v "$tool" >/dev/null 2>&1 || skip_all "needs $tool"
done
[ -r /proc/loadavg ] || skip_all "needs /proc/loadavg"
[ -e "$top_builddir/plugins/zip/zip.la" ] || skip_all "needs the zip packager (libzip-dev)"

example=$top_srcdir/docs/example
root=$TEST_TMP/root

# What a plugin author needs installed, as `make install` installs it, but
# not all of it, and only what `make check` already built: this test must
# neither rebuild nor wait for unrelated parts of the tree (-o: never remake).
# MAKEFLAGS would hand the nested make the jobserver of `make check`.
built_plugins=$(cd "$top_builddir" && find plugins -mindepth 2 -maxdepth 2 -name '*.la' | sort | tr '\n' ' ')
install_targets="install-binPROGRAMS install-pluginLTLIBRARIES install-pkgincludeHEADERS
	install-pkgconfigDATA install-man install-dist_confDATA"
keep_old="-o tracerig"
for la in $built_plugins; do keep_old="$keep_old -o $la"; done
# shellcheck disable=SC2086
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" $keep_old $install_targets \
	plugin_LTLIBRARIES="$built_plugins" DESTDIR="$root" >"$TEST_TMP/install.log" 2>&1; then
	ok "make install DESTDIR=... installs the binary, plugins, header, .pc, man pages, conf"
else
	not_ok "make install DESTDIR=... installs the binary, plugins, header, .pc, man pages, conf" \
		"$(tail -20 "$TEST_TMP/install.log")"
	done_testing
	exit
fi

# ---- what was installed
pc=$(find "$root" -name tracerig-plugin.pc | head -1)
check "tracerig-plugin.pc is installed" test -n "$pc"
[ -n "$pc" ] || { done_testing; exit; }
# Only the installed .pc, never one of the system's; with prefix=/usr its
# -I is a system directory, which pkg-config would otherwise drop.
export PKG_CONFIG_LIBDIR=${pc%/*} PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1
unset PKG_CONFIG_PATH
pcvar() { pkg-config --variable="$1" tracerig-plugin; }
# The sysroot makes -I point into $root, as for a cross or staged build.
cflags=$(PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags tracerig-plugin | sed 's/ *$//')
plugindir=$(pcvar plugindir)
includedir=$(pcvar includedir)

bin=$(find "$root" -path '*/bin/tracerig' -type f | head -1)
check "the tracerig binary is installed" test -n "$bin" -a -x "$bin"
check "the header is installed as <tracerig/plugin.h>, unchanged" \
	cmp "$top_srcdir/include/tracerig/plugin.h" "$root$includedir/tracerig/plugin.h"
check_eq "pkg-config --cflags points at the installed include directory" \
	"-I$root$includedir" "$cflags"
check "the .pc names the plugin directory (plugindir)" test -n "$plugindir"
check_eq "the .pc's abi_version is the header's TRACERIG_ABI_VERSION" \
	"$(sed -n 's/^#define TRACERIG_ABI_VERSION \([0-9]*\).*/\1/p' "$top_srcdir/include/tracerig/plugin.h")" \
	"$(pcvar abi_version)"
for la in "$top_builddir"/plugins/*/*.la; do
	name=$(basename "$la" .la)
	check "plugin $name is installed in the .pc's plugindir" test -f "$root$plugindir/$name.so"
done
check "test-only plugins are not installed" bash -c "! ls '$root$plugindir' | grep -q '^test'"
check "tracerig(1) is installed" bash -c "find '$root' -path '*/man1/tracerig.1' | grep -q ."
check "tracerig.ini(5) is installed" bash -c "find '$root' -path '*/man5/tracerig.ini.5' | grep -q ."
check "tracerig.conf is installed" bash -c "find '$root' -path '*/tracerig/tracerig.conf' | grep -q ."

# ---- the header alone is enough, in C and C++
printf '#include <tracerig/plugin.h>\n' >"$TEST_TMP/only.c"
# shellcheck disable=SC2086
check "the installed header compiles on its own as C99" \
	cc $cflags -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only "$TEST_TMP/only.c"
if command -v g++ >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	check "the installed header compiles as C++" \
		g++ $cflags -x c++ -Wall -Wextra -Werror -fsyntax-only "$TEST_TMP/only.c"
	cat >"$TEST_TMP/cxx.cc" <<'X'
#include <tracerig/plugin.h>
static int init(const struct tracerig_services *, struct tracerig_ctx *, void **) { return 0; }
static int flush(void *, struct tracerig_archive *) { return 0; }
static int run(void *) { return 0; }
TRACERIG_PLUGIN = { TRACERIG_ABI_VERSION, "cxx", "1", TRACERIG_PLUGIN_SOURCE, "C++ plugin",
		    nullptr, nullptr, 0, 0, nullptr, nullptr, init, run, run, flush, nullptr, nullptr,
		    nullptr };
X
	# In C++ a namespace-scope const has internal linkage: the header
	# declares the descriptor extern "C" so that it is exported anyway.
	check "a C++ plugin written with TRACERIG_PLUGIN exports tracerig_plugin" \
		bash -c "g++ $cflags -Wall -Wextra -Werror -shared -fPIC -o '$TEST_TMP/cxx.so' '$TEST_TMP/cxx.cc' &&
			nm -D --defined-only '$TEST_TMP/cxx.so' | grep -qw tracerig_plugin"
	# What docs/writing-a-plugin.md tells C++ authors to write.
	sed 's/^TRACERIG_PLUGIN = /extern "C" TRACERIG_PLUGIN = /' "$TEST_TMP/cxx.cc" >"$TEST_TMP/cxx2.cc"
	check 'a C++ plugin written as extern "C" TRACERIG_PLUGIN (the guide'"'"'s advice) exports tracerig_plugin' \
		bash -c "g++ $cflags -Wall -Wextra -Werror -shared -fPIC -o '$TEST_TMP/cxx2.so' '$TEST_TMP/cxx2.cc' &&
			nm -D --defined-only '$TEST_TMP/cxx2.so' | grep -qw tracerig_plugin"
else
	skip "the installed header compiles as C++" "no g++"
fi

# ---- the example, built out of tree
mkdir -p "$TEST_TMP/plugins"
# shellcheck disable=SC2086
check "docs/example/loadavg.c builds warning-free against the installed header alone" \
	cc $cflags -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes -Wstrict-prototypes \
	-Werror -shared -fPIC -pthread -o "$TEST_TMP/plugins/loadavg.so" "$example/loadavg.c"
check_eq "the example exports tracerig_plugin and nothing else" tracerig_plugin \
	"$(nm -D --defined-only "$TEST_TMP/plugins/loadavg.so" | awk '{print $3}' | tr '\n' ' ' | sed 's/ $//')"
# Its Makefile, as a packager would use it: build elsewhere, stage in $root.
mkdir -p "$TEST_TMP/mk"
check "docs/example/Makefile builds and installs into the .pc's plugindir" \
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PKG_CONFIG_SYSROOT_DIR="$root" \
	make -C "$TEST_TMP/mk" -f "$example/Makefile" srcdir="$example" \
	CFLAGS="-O2 -Wall -Wextra -Werror" plugindir="$plugindir" DESTDIR="$root" install
check "the installed example is in the plugin directory" test -f "$root$plugindir/loadavg.so"

# ---- tracerig lists it, from its key table
run_tracerig --list-plugins -v --plugin-dir "$TEST_TMP/plugins"
check_grep "--list-plugins -v lists the plugin with its description" \
	'^  loadavg +1\.0 +source +load average' "$TEST_TMP/out"
check_grep "--list-plugins -v names the file it loaded" "file: $TEST_TMP/plugins/loadavg.so" "$TEST_TMP/out"
check_grep "--list-plugins -v shows key interval" '^ +interval +duration +default 1s ' "$TEST_TMP/out"
check_grep "--list-plugins -v shows key pressure and its choices" '^ +one of: auto,yes,no$' "$TEST_TMP/out"
check_grep "--list-plugins -v shows key max_rows" '^ +max_rows +integer +default 86400 ' "$TEST_TMP/out"

profile() { cat >"$TEST_TMP/p.ini"; }

profile <<'X'
[tracerig]
name = example
[loadavg]
interval = 100ms
X
run_tracerig --check -c "$TEST_TMP/p.ini" --plugin-dir "$TEST_TMP/plugins"
check_eq "--check: the profile is valid" 0 "$rc"
check_grep "--check: the plugin is usable here" '^  loadavg +1\.0 +optional +usable' "$TEST_TMP/out"

# ---- a session: samples in loadavg.csv, counters in the manifest
out=$TEST_TMP/a.trace.zip
run_tracerig -c "$TEST_TMP/p.ini" -d 1 -o "$out" --plugin-dir "$TEST_TMP/plugins"
check_eq "a 1 s session exits 0" 0 "$rc"
check_grep "the summary shows the plugin's counters" '^  loadavg +ok +[0-9]+ samples, 0 dropped, 0 read errors$' "$TEST_TMP/out"
unzip_archive "$out" "$TEST_TMP/x"
check "loadavg.csv is at the archive root" test -s "$TEST_TMP/x/loadavg.csv"
if [ -r /proc/pressure/cpu ] && head -c1 /proc/pressure/cpu >/dev/null 2>&1; then psi=1; else psi=0; fi
check "loadavg.csv: a sample at start, every 100 ms and at stop, in /proc/loadavg's format" \
	python3 - "$TEST_TMP/x" "$psi" <<'PY'
import csv, json, os, re, sys
root, psi = sys.argv[1], sys.argv[2] == "1"
rows = list(csv.reader(open(os.path.join(root, "loadavg.csv"))))
header = ("monotonic_ns,load1,load5,load15,runnable,entities,last_pid,"
          "cpu_some_avg10,cpu_some_avg60,cpu_some_avg300,cpu_some_total_us,"
          "cpu_full_avg10,cpu_full_avg60,cpu_full_avg300,cpu_full_total_us").split(",")
assert rows[0] == header, rows[0]
rows = rows[1:]
# 1 s at 100 ms is 12 samples; leave room for a loaded machine.
assert len(rows) >= 6, "only %d samples" % len(rows)
load = re.compile(r"^\d+\.\d\d$")
for r in rows:
    assert len(r) == 15, r
    assert all(load.match(v) for v in r[1:4]), r
    assert r[4].isdigit() and r[5].isdigit() and int(r[4]) <= int(r[5]), r
    assert r[6].isdigit(), r
    if psi:
        assert all(load.match(v) for v in r[7:10]) and r[10].isdigit(), r
    else:
        assert r[7:11] == ["", "", "", ""], r
times = [int(r[0]) for r in rows]
assert times == sorted(times) and len(set(times)) == len(times), "not increasing"
m = json.load(open(os.path.join(root, "manifest.json")))
clock = m["clock"]
assert times[0] >= clock["start_monotonic_ns"], "first sample before the session started"
assert times[-1] >= clock["end_monotonic_ns"], "no sample at stop"
PY
check "manifest.json: the plugin ran, with its file and counters" \
	python3 - "$TEST_TMP/x" "$TEST_TMP/plugins/loadavg.so" <<'PY'
import json, os, sys
root, so = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(root, "manifest.json")))
p = [p for p in m["plugins"] if p["name"] == "loadavg"]
assert len(p) == 1, m["plugins"]
p = p[0]
rows = sum(1 for _ in open(os.path.join(root, "loadavg.csv"))) - 1
assert p["status"] == "ok" and p["kind"] == "source" and p["version"] == "1.0", p
assert p["file"] == so, p["file"]
assert p["counters"] == {"samples": rows, "dropped": 0, "read_errors": 0}, p["counters"]
assert "loadavg.csv" in [f["name"] for f in m["files"]]
PY
check_grep "tracerig.log has the plugin's own message" '^[0-9.]+ info +loadavg: [0-9]+ samples in loadavg\.csv$' "$TEST_TMP/x/tracerig.log"

# max_rows bounds memory: the rest is dropped, counted and said once.
run_tracerig -c "$TEST_TMP/p.ini" -d 500ms -o "$out" --plugin-dir "$TEST_TMP/plugins" \
	--set loadavg.max_rows=3 --set loadavg.pressure=no
check_eq "max_rows reached: the session still succeeds" 0 "$rc"
check_grep "max_rows reached: warned with what to do" \
	'^tracerig: loadavg: warning: cannot keep more samples: max_rows reached \(raise max_rows or interval\)$' \
	"$TEST_TMP/out"
check_eq "max_rows reached: warned once" 1 "$(grep -c 'cannot keep more samples' "$TEST_TMP/out")"
check_grep "max_rows reached: dropped samples are counted" '3 samples, [1-9][0-9]* dropped' "$TEST_TMP/out"
unzip_archive "$out" "$TEST_TMP/y"
check_eq "max_rows reached: loadavg.csv holds max_rows samples" 4 "$(wc -l <"$TEST_TMP/y/loadavg.csv")"
check_grep "pressure = no: the pressure columns are empty" '^[0-9]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9]+,[0-9]+,[0-9]+,,,,,,,,$' \
	"$TEST_TMP/y/loadavg.csv"

# ---- profile mistakes are caught from the key table, before anything runs
profile <<'X'
[tracerig]
name = example
[loadavg]
intervall = 1s
X
run_tracerig -c "$TEST_TMP/p.ini" -d 1 -o "$out.bad" --plugin-dir "$TEST_TMP/plugins"
check_eq "misspelt key: exit 2" 2 "$rc"
check_grep "misspelt key: file:line and did you mean" \
	"p\\.ini:4: \\[loadavg\\] unknown key 'intervall' \\(did you mean 'interval'\\?\\)" "$TEST_TMP/out"
check "misspelt key: nothing was written" test ! -e "$out.bad"

profile <<'X'
[loadavg]
interval = 5ms
pressure = maybe
X
run_tracerig --check -c "$TEST_TMP/p.ini" --plugin-dir "$TEST_TMP/plugins"
check_grep "interval below the table's minimum: the range" \
	"p\\.ini:2: \\[loadavg\\] interval: '5ms' is out of range \\(10 ms to 3600000 ms\\)" "$TEST_TMP/out"
check_grep "pressure not one of its choices: the choices" \
	"p\\.ini:3: \\[loadavg\\] pressure: 'maybe' is not one of: auto,yes,no" "$TEST_TMP/out"

# ---- validate: what the key table cannot say, before anything starts
profile <<'X'
[tracerig]
name = fl
mode = flight
window = 30s
[loadavg]
interval = 1s
max_rows = 10
X
mkdir -p "$TEST_TMP/fl"
run_tracerig -c "$TEST_TMP/p.ini" -d 1 -o "$TEST_TMP/fl" --plugin-dir "$TEST_TMP/plugins"
check_eq "flight window beyond max_rows: exit 2" 2 "$rc"
check_grep "flight window beyond max_rows: the plugin's validate says it, with the line" \
	"p\\.ini:7: \\[loadavg\\] max_rows: 10 rows do not hold the flight window \\(30 s at one row every 1000 ms needs 32\\): raise max_rows or interval" \
	"$TEST_TMP/out"
check "flight window beyond max_rows: nothing was written" test -z "$(ls "$TEST_TMP/fl")"

# ---- flight mode through the descriptor's snapshot: the window's rows only
profile <<'X'
[tracerig]
name = fl
mode = flight
window = 1s
[loadavg]
interval = 50ms
X
run_tracerig -c "$TEST_TMP/p.ini" -d 2500ms -o "$TEST_TMP/fl" --plugin-dir "$TEST_TMP/plugins"
check_eq "a flight session with the example exits 0" 0 "$rc"
fl_zip=$(ls "$TEST_TMP/fl"/fl-*.trace.zip 2>/dev/null | head -1)
check "its final snapshot is written" test -n "$fl_zip"
unzip_archive "$fl_zip" "$TEST_TMP/flx"
check "the snapshot's loadavg.csv holds the rows of its window and none before it" \
	python3 - "$TEST_TMP/flx" <<'PY'
import csv, json, os, sys
root = sys.argv[1]
m = json.load(open(os.path.join(root, "manifest.json")))
lo, hi = m["flight"]["from_monotonic_ns"], m["flight"]["to_monotonic_ns"]
rows = list(csv.reader(open(os.path.join(root, "loadavg.csv"))))[1:]
times = [int(r[0]) for r in rows]
# 1 s at 50 ms is about 20 rows; the session ran 2.5 s, so rows older than
# the window existed and must not be here.
assert len(times) >= 5, "only %d rows" % len(times)
assert all(lo <= t <= hi for t in times), (lo, hi, times[:3], times[-3:])
PY

# ---- the installed tracerig finds the installed example on its own
profile <<'X'
[tracerig]
name = installed
[loadavg]
interval = 100ms
X
rc=0
TRACERIG_PLUGIN_PATH=$root$plugindir "$bin" -c "$TEST_TMP/p.ini" -d 300ms -o "$TEST_TMP/i.trace.zip" \
	>"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
check_eq "installed tracerig + installed plugins: the session exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/i.trace.zip" "$TEST_TMP/i"
check "installed tracerig + installed plugins: loadavg.csv is in the archive" test -s "$TEST_TMP/i/loadavg.csv"
check "installed tracerig + installed plugins: loaded from the installed plugindir" \
	python3 -c 'import json, os, sys; m = json.load(open(sys.argv[1]))
files = {p["name"]: os.path.dirname(p["file"]) for p in m["plugins"]}
assert files == {"loadavg": sys.argv[2], "zip": sys.argv[2]}, files' \
	"$TEST_TMP/i/manifest.json" "$root$plugindir"

done_testing

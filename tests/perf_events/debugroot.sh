#!/usr/bin/env bash
# callchain = dwarf through a library whose CFI is only in its separate
# debug file (built without .eh_frame, stripped; the debug file under
# /usr/lib/debug/.build-id): a program on the host is unwound through it
# to main.  The same program in a mount namespace whose /usr/lib/debug
# lacks the file (a container's own root) is not: a debug file is looked
# for in its object's own root only, never in the host's, whatever build
# id the object claims (issue 27, item 2).  Without the file at all, no
# sample reaches main (the control that makes the first check mean
# something).
. "$top_srcdir/tests/perf_events/lib-perf.sh"
export TMPDIR="$TEST_TMP"

without_libdw && skip_all "callchain = dwarf is not available in this build (no libdw)"
command -v unshare >/dev/null || skip_all "needs unshare (util-linux)"
src="$top_srcdir/tests/perf_events/debugroot"
w=$TEST_TMP/w
mkdir -p "$w"
cc -O1 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables -shared -fPIC \
	-Wl,--build-id -o "$w/libdbg.so" "$src/libdbg.c" &&
	objcopy --only-keep-debug "$w/libdbg.so" "$w/libdbg.debug" &&
	strip --strip-debug "$w/libdbg.so" &&
	cc -O1 -g -fomit-frame-pointer -o "$w/prog" "$src/prog.c" -L"$w" -ldbg -Wl,-rpath,"$w" ||
	skip_all "cannot build the workload"
bid=$(readelf -n "$w/libdbg.so" | awk '/Build ID/ { print $3 }')
[ ${#bid} -ge 4 ] || skip_all "the linker gave the library no build id"
check "the library has no CFI of its own" \
	sh -c "! readelf --debug-dump=frames '$w/libdbg.so' 2>/dev/null | grep -q FDE"
debug=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
[ ! -e "$debug" ] || skip_all "$debug exists already: not ours to replace"
mkdir -p "$(dirname "$debug")"
on_exit "rm -f '$debug'; rmdir '$(dirname "$debug")' 2>/dev/null || true"

# reach ZIP: "samples in lib_leaf, of them reaching main" from cpu.folded.
reach() {
	unzip -p "$1" cpu.folded | awk '/;lib_leaf( |;)/ { n += $NF; if (/;main;lib_inner;lib_leaf( |;)/) m += $NF }
		END { print n + 0, m + 0 }'
}
dwarf_ini=$top_srcdir/conf/profiles/cpu-dwarf.ini

# No debug file anywhere: the unwinder has nothing to go on in the library.
run_tracerig -c "$dwarf_ini" -o "$TEST_TMP/none.trace.zip" -- "$w/prog" 2
set -- $(reach "$TEST_TMP/none.trace.zip")
check "no debug file: samples in the library ($1)" test "$1" -ge 100
check_eq "no debug file: none reaches main" 0 "$2"

cp "$w/libdbg.debug" "$debug"
run_tracerig -c "$dwarf_ini" -o "$TEST_TMP/host.trace.zip" -- "$w/prog" 2
check_eq "host: tracerig exits 0" 0 "$rc"
set -- $(reach "$TEST_TMP/host.trace.zip")
check "host: the debug file's CFI takes most of the library's samples to main ($2 of $1)" \
	test "$1" -ge 100 -a $(($2 * 10)) -ge $(($1 * 9))

# The same, every sample unwound once the program has ended (nothing
# unwound or converted while collecting): its root is gone, and its
# library, our root's own file at that path, has its debug file in ours.
run_tracerig -c "$dwarf_ini" -o "$TEST_TMP/late.trace.zip" \
	--set perf_events.convert_while_collecting=no --set perf_events.unwind_queue_bytes=0 \
	-- "$w/prog" 2
check_eq "host, unwound after the end: tracerig exits 0" 0 "$rc"
set -- $(reach "$TEST_TMP/late.trace.zip")
check "host, unwound after the end: the debug file still takes the samples to main ($2 of $1)" \
	test "$1" -ge 100 -a $(($2 * 10)) -ge $(($1 * 9))

# The same program in a mount namespace of its own, /usr/lib/debug an
# empty tmpfs there: the host's file is not its root's.
unshare -m --propagation private sh -c 'mount -t tmpfs none /usr/lib/debug && exec "$0" 8' \
	"$w/prog" &
pid=$!
on_exit "kill $pid 2>/dev/null || true"
for _ in $(seq 50); do
	[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$w/prog" ] && break
	sleep 0.1
done
check "container: /usr/lib/debug is its own (the debug file is not there)" \
	test ! -e "/proc/$pid/root$debug"
run_tracerig -c "$dwarf_ini" -o "$TEST_TMP/ct.trace.zip" -p "$pid" -d 2
check_eq "container: tracerig exits 0" 0 "$rc"
set -- $(reach "$TEST_TMP/ct.trace.zip")
check "container: samples in the library ($1)" test "$1" -ge 100
check_eq "container: the host's debug file is not used (no sample reaches main)" 0 "$2"
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true

done_testing

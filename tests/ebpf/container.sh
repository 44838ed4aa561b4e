#!/bin/sh
# A process in a "container" (its own PID and mount namespaces, its binary
# on a tmpfs only that namespace sees), traced from the host by its host PID:
# its off-CPU stacks resolve against its own binary, through /proc/PID/root.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/ebpf/lib-ebpf.sh"
need_ebpf
command -v unshare >/dev/null || skip_all "needs unshare (util-linux)"

box=/tracerig-ebpf-box.$$
unshare --mount --pid --fork --kill-child sh -c '
	mount --make-rprivate / && mkdir -p "$2" && mount -t tmpfs tmpfs "$2" &&
	cp "$1" "$2/boxed" && exec "$2/boxed" -n incontainer -l' sh "$workload" "/tmp$box" &
launcher=$!
on_exit "rmdir /tmp$box 2>/dev/null"
on_exit_kill_container "$launcher"
pid=""
for _ in $(seq 100); do
	for c in $(pgrep -P "$launcher"); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = incontainer ] && pid=$c
	done
	[ -n "$pid" ] && break
	sleep 0.05
done
[ -n "$pid" ] || skip_all "cannot start a process in new namespaces here"
check "the boxed binary is invisible from the host" test ! -e "/tmp$box/boxed"

run_tracerig -c "$offcpu_profile" -p "$pid" -d 2 -o "$TEST_TMP/c.trace.zip"
check_eq "tracerig -p traces the process by its host PID" 0 "$rc"
unzip_archive "$TEST_TMP/c.trace.zip" "$TEST_TMP/c"
check_grep "its stacks resolve against its own binary" \
	"^incontainer-$pid;incontainer-[0-9]+;.*;sleeper;blocked_in_sleep;.*do_nanosleep_\\[k\\]" "$TEST_TMP/c/offcpu.folded"

# callchain = cfi: the tables are compiled from the objects the process
# maps, opened through its root (its binary exists nowhere else): the walk
# goes through libc's wrapper down to the thread's start.
run_tracerig -c "$top_srcdir/conf/profiles/offcpu-cfi.ini" -p "$pid" -d 2 -o "$TEST_TMP/cfi.trace.zip"
if grep -q "callchain = cfi is not available in this build" "$TEST_TMP/out"; then
	skip "cfi: the boxed process's stacks" "callchain = cfi is not available in this build (no libdw)"
else
	check_eq "cfi: tracerig -p traces the boxed process" 0 "$rc"
	unzip_archive "$TEST_TMP/cfi.trace.zip" "$TEST_TMP/cfi"
	check_grep "cfi: its stacks are walked through its own binary, down to the thread start in libc" \
		"^incontainer-$pid;incontainer-[0-9]+;.*start_thread;sleeper;blocked_in_sleep;.*do_nanosleep_\\[k\\]" \
		"$TEST_TMP/cfi/offcpu.folded"
	objects=$(sed -n 's/.*"cfi_objects": *\([0-9]*\).*/\1/p' "$TEST_TMP/cfi/manifest.json")
	check "cfi: tables were compiled for its binary and libc at least (cfi_objects = ${objects:-none})" \
		test "${objects:-0}" -ge 2
fi
done_testing

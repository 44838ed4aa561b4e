#!/usr/bin/env bash
# A process in its own PID and mount namespaces, running a binary that
# exists only inside that mount namespace, traced from the host by its host
# PID: its frames must still be named, from the container's own file.
. "$top_srcdir/tests/perf_events/lib-perf.sh"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"

inner=/tmp/tracerig-ns-$$
mkdir -p "$inner"
on_exit "rmdir $inner 2>/dev/null"
# Inside: a private tmpfs on $inner, the demo copied there, exec'd from it.
unshare --pid --mount --fork --mount-proc --propagation private sh -c "
	mount -t tmpfs none '$inner' && cp '$DEMO' '$inner/ns-demo' &&
	exec '$inner/ns-demo' --seconds 4 --threads 1" 2>/dev/null &
outer=$!
on_exit "kill $outer 2>/dev/null; wait 2>/dev/null; rmdir $inner 2>/dev/null"
hostpid=
for _ in $(seq 50); do
	hostpid=$(pgrep -f "^$inner/ns-demo" | head -1)
	[ -n "$hostpid" ] && break
	sleep 0.1
done
[ -n "$hostpid" ] || skip_all "could not start a process in new PID+mount namespaces"
check "the binary is not visible from the host" test ! -e "$inner/ns-demo"
check_eq "the process has another PID inside its namespace" 1 \
	"$(awk '/^NSpid:/ { print $NF }' /proc/"$hostpid"/status)"

run_tracerig -c "$CPU_INI" -o "$TEST_TMP/n.trace.zip" -p "$hostpid" -d 1
check_eq "traced by its host PID: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/n.trace.zip" "$TEST_TMP/n"
check_eq "the samples carry the host PID" "$hostpid" \
	"$(sample_pids "$TEST_TMP/n/perf.data.txt" | tr '\n' ' ' | sed 's/ $//')"
check_grep "frames are named from the container's own binary" \
	"^	 +[0-9a-f]+ demo_hot \($inner/ns-demo\)$" "$TEST_TMP/n/perf.data.txt"
check_grep "cpu.folded names them too" "^ns-demo-$hostpid;.*demo_hot [0-9]+$" "$TEST_TMP/n/cpu.folded"

done_testing

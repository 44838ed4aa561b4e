#!/usr/bin/env bash
# Files from a container are hostile input: a link planted to /etc/shadow,
# a FIFO nobody writes, an oversize map.  Each is refused with a log line,
# without hanging, and nothing of the host's ends up in the archive.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/mapharvest/lib-mapharvest.sh"

[ -r /etc/shadow ] || skip_all "needs /etc/shadow to attack"
unshare --mount --pid --fork --kill-child sh -c 'mount -t tmpfs tmpfs /tmp &&
	ln -s /etc/shadow /tmp/perf-1.map && mkfifo /tmp/jit-1.dump &&
	head -c 300000 /dev/zero >/tmp/perfinfo-1.map && exec sleep 30' >/dev/null 2>&1 &
cpid=$!
on_exit_kill_container "$cpid"
victim=""
for _ in $(seq 100); do
	for p in $(pgrep -P "$cpid") $(pgrep -P "$(pgrep -P "$cpid" | head -1)" 2>/dev/null); do
		grep -Eq '^NStgid:.*[[:space:]]1$' /proc/$p/status 2>/dev/null &&
			[ -e /proc/$p/root/tmp/perfinfo-1.map ] && victim=$p
	done
	[ -n "$victim" ] && break
	sleep 0.1
done
check "the hostile container runs" test -n "$victim"

printf '[tracerig]\nname = mh\n[mapharvest]\nmax_size = 100K\n' >"$TEST_TMP/p.ini"
trace -c "$TEST_TMP/p.ini" -p "${victim:-1}" -d 1 -o "$TEST_TMP/a.trace.zip"
check_eq "tracerig exits 0 without hanging" 0 "$rc"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
log="$TEST_TMP/a/tracerig.log"
check_grep "the planted link is refused" "refused /tmp/perf-1.map: a symbolic link" "$log"
check_grep "the FIFO is refused" "refused /tmp/jit-1.dump: a FIFO" "$log"
check_grep "the oversize map is refused" "refused /tmp/perfinfo-1.map: 300000 bytes, larger than the 100 KiB limit \\(raise \\[mapharvest\\] max_size" "$log"
check_grep "refusals are counted" "mapharvest +ok +files=0, refused=3" "$log"
check "no map entry in the archive" test -z "$(ls "$TEST_TMP/a" | grep -E '^(perf|perfinfo|jit)-')"
shadow_line=$(head -1 /etc/shadow)
if grep -rqF -- "$shadow_line" "$TEST_TMP/a"; then
	not_ok "no host /etc/shadow content in the archive"
else
	ok "no host /etc/shadow content in the archive"
fi
done_testing

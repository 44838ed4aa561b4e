#!/usr/bin/env bash
# Nothing of the host leaks through files a traced process controls.
#
# Processes run as nobody, each in its own mount namespace with a private
# /tmp, run "JIT code" in anonymous memory (so the symbolizer reads their
# perf maps) and plant one trap each: /tmp/perf-PID.map as a link to a
# root-only file full of perf-map lines (a leak would name every JIT frame
# after it), as a link to /etc/shadow, as a FIFO, as a 1 GiB sparse file and
# a 64 MiB one with no newline; frame names with ';', ESC and CR, a thread
# name with a newline, a jitdump code name with newlines that spell a fake
# frame and a fake sample.  The real tracerig (perf_events + mapharvest)
# traces them all.  Then: no secret in any archive entry, each refusal said
# once, perf.data.txt made only of sample headers, frame lines and blank
# lines, folded stacks with one count per line, host files unchanged.
. "$top_srcdir/tests/lib.sh"
need_root
[ -e "$top_builddir/plugins/perf_events/perf_events.la" ] || skip_all "perf_events not built"
[ -e "$top_builddir/plugins/mapharvest/mapharvest.la" ] || skip_all "mapharvest not built"
command -v unshare >/dev/null 2>&1 || skip_all "needs unshare (util-linux)"
command -v setpriv >/dev/null 2>&1 || skip_all "needs setpriv (util-linux)"
command -v unzip >/dev/null 2>&1 || skip_all "needs unzip"
[ -r /etc/shadow ] || skip_all "needs /etc/shadow to attack"
HOSTILE="$top_builddir/tests/lib/hostile"
[ -x "$HOSTILE" ] || skip_all "tests/lib/hostile is not built"

# The secret lives outside /tmp (each process has its own) and is root's
# only.  Its lines are valid perf-map lines covering every address.
secret_dir=$(mktemp -d /var/tmp/tracerig-secret.XXXXXX)
on_exit "rm -rf '$secret_dir'"
chmod 700 "$secret_dir"
mark="TRSECRET$$x$RANDOM"
printf '0 ffffffffffffffff %s_one\n0 ffffffffffffffff %s_two\n' "$mark" "$mark" >"$secret_dir/secret"
chmod 600 "$secret_dir/secret"
sums() { sha256sum "$secret_dir/secret" /etc/shadow /etc/passwd; stat -c '%n %s %Y %a' "$secret_dir/secret" /etc/shadow; }
sums >"$TEST_TMP/sums.before"

# Each hostile process gets its own tmpfs on /tmp, which hides whatever
# lies under /tmp: a tree cloned there (as CI's is) would hide the program
# itself.  It runs from a copy outside /tmp.
bin_dir=$(mktemp -d /var/tmp/tracerig-hostile.XXXXXX)
on_exit "rm -rf '$bin_dir'"
chmod 755 "$bin_dir"
cp "$HOSTILE" "$bin_dir/hostile"
HOSTILE="$bin_dir/hostile"

# start NAME MODE [ARG]: a hostile process as nobody; sets pid_NAME.
start() {
	local name=$1 out="$TEST_TMP/$1.out" p="" u
	shift
	unshare --mount --fork --kill-child sh -c 'mount -t tmpfs -o mode=1777 tmpfs /tmp &&
		exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$0" "$@"' \
		"$HOSTILE" "$@" >"$out" 2>&1 &
	u=$!
	for _ in $(seq 100); do
		grep -q '^ready$' "$out" 2>/dev/null && break
		sleep 0.1
	done
	p=$(sed -n 's/^pid=//p' "$out")
	# Killed by its PID (setpriv's change of credentials cleared the
	# parent-death signal of unshare --kill-child), then reaped by unshare,
	# which then exits; unshare itself when the process never said its PID.
	on_exit_kill_container "${p:-$u}" "$u"
	if [ -z "$p" ] || ! grep -q '^ready$' "$out"; then
		not_ok "the hostile process '$name' runs" "$(cat "$out")"
		done_testing
		exit 1
	fi
	eval "pid_$name=$p"
}
start secret link "$secret_dir/secret"
start shadow link /etc/shadow
start fifo fifo
start sparse sparse 1073741824
start noline sparse 67108864
start names names
start dump jitdump
check_eq "the hostile processes run as nobody" "65534 65534 65534" \
	"$(stat -c %u /proc/$pid_secret /proc/$pid_names /proc/$pid_dump | tr '\n' ' ' | sed 's/ $//')"

pids="$pid_secret,$pid_shadow,$pid_fifo,$pid_sparse,$pid_noline,$pid_names,$pid_dump"
printf '[tracerig]\nname = hostile\n[perf_events]\nevents = cpu-clock\nfrequency = 999\n[mapharvest]\nmax_size = 1M\n' \
	>"$TEST_TMP/p.ini"
rc=0
timeout 120 "$TRACERIG" -c "$TEST_TMP/p.ini" -p "$pids" -d 2 -o "$TEST_TMP/a.trace.zip" \
	>"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
check_eq "tracerig exits 0 (refusals are warnings)" 0 "$rc"
[ "$rc" = 0 ] || echo "# $(head -c 2000 "$TEST_TMP/out" | tr '\n' '|')"
a="$TEST_TMP/a"
unzip_archive "$TEST_TMP/a.trace.zip" "$a" || { not_ok "the archive unzips"; done_testing; exit 1; }
log="$a/tracerig.log"
txt="$a/perf.data.txt"

# ---- nothing of the secret or of /etc/shadow, in any entry
leaks=""
shadow_line=$(head -1 /etc/shadow)
for e in $(unzip -Z1 "$TEST_TMP/a.trace.zip"); do
	unzip -p "$TEST_TMP/a.trace.zip" "$e" | grep -aqF -- "$mark" && leaks="$leaks $e"
	unzip -p "$TEST_TMP/a.trace.zip" "$e" | grep -aqF -- "$shadow_line" && leaks="$leaks $e(shadow)"
done
check_eq "no archive entry holds the secret or /etc/shadow" "" "$leaks"
check_no_grep "nor does tracerig's output" "$mark" "$TEST_TMP/out"

# ---- each trap is refused, by the symbolizer, once
refusal() { # NAME PID WHY: the symbolizer's line about PID's perf map, exactly once
	local n
	n=$(grep -cF -- "symbols: pid $2: refused /tmp/perf-$2.map: $3" "$log")
	if [ "$n" = 1 ]; then ok "$1"
	else not_ok "$1" "expected once, found $n times: symbols: pid $2: refused /tmp/perf-$2.map: $3" \
		"$(grep -F "refused" "$log" | head -20)"; fi
}
refusal "the link to a root-only secret is refused, once" "$pid_secret" \
	"a symbolic link (links are not followed inside a process's root)"
refusal "the link to /etc/shadow is refused, once" "$pid_shadow" "a symbolic link"
refusal "the FIFO is refused, once, without blocking" "$pid_fifo" "a FIFO"
refusal "the 1 GiB sparse map is refused by its size, once" "$pid_sparse" \
	"1073741824 bytes, larger than the 256 MiB limit"
refusal "the 64 MiB map with no newline is refused after 16 MiB, once" "$pid_noline" \
	"no line ends in its first 16 MiB past offset 0"
check_grep "the refusal says what it costs" "refused /tmp/perf-$pid_secret.map: .*\\(its JIT frames stay unnamed; not read again\\)" "$log"
check_grep "mapharvest refuses the link as well" "mapharvest: pid $pid_secret: refused /tmp/perf-$pid_secret.map: a symbolic link" "$log"

# ---- hostile names: read, and written without their control characters
check_grep "the hostile perf map was read (its name is in perf.data.txt)" \
	"evil:frame\\?\\[2Jname\\?X" "$txt"
check_grep "the jitdump was read: its name is one frame line" \
	"^	 *[0-9a-f]+ fn\\?\\?ffffffffdeadbeef injected_frame \\(/fake\\)\\?\\?fake 1/1 \\[000\\] 1\\.000000: 1 cpu-clock: \\(" "$txt"
check_grep "the thread name keeps its place, newline replaced" "^ev\\?il:co\\?m +$pid_names/" "$txt"
check_no_grep "no injected frame line" "^	ffffffffdeadbeef" "$txt"
check_no_grep "no injected sample line" "^fake 1/1" "$txt"
check_no_grep "no control character in perf.data.txt" $'[\x01-\x08\x0b-\x1f\x7f]' "$txt"
bad=$(grep -Evn -e '^$' \
	-e '^	 *[0-9a-f]+ .+ \(.*\)$' \
	-e '^.+ +[0-9]+/[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: +[0-9]+ cpu-clock: *$' "$txt" | head -5)
check_eq "perf.data.txt: every line a sample header, a frame or blank" "" "$bad"
check "perf.data.txt has samples of the hostile processes" grep -q "^ev?il:co?m" "$txt"

for f in cpu.folded; do
	check "$f exists" test -s "$a/$f"
	bad=$(grep -Evn '^[^ ;][^;]*(;[^;]+)* [0-9]+$' "$a/$f" | head -5)
	check_eq "$f: one stack and one count per line" "" "$bad"
	check_grep "$f: the ';' of a name does not split its frame" ";evil:frame\\?\\[2Jname\\?X [0-9]+$" "$a/$f"
	check_grep "$f: the jitdump name is one frame" ";fn\\?\\?ffffffffdeadbeef injected_frame \\(/fake\\)\\?\\?fake 1/1 \\[000\\] 1\\.000000: 1 cpu-clock: [0-9]+$" "$a/$f"
	check_no_grep "$f: no control character" $'[\x01-\x1f\x7f]' "$a/$f"
done
# perf_events always draws cpu.svg: a missing one fails its checks.
check "cpu.svg exists" test -s "$a/cpu.svg"
check_no_grep "cpu.svg: no control character" $'[\x01-\x08\x0b\x0c\x0e-\x1f]' "$a/cpu.svg"
check_grep "cpu.svg: the hostile names are escaped text" "evil:frame\\?\\[2Jname\\?X" "$a/cpu.svg"

# ---- tracerig report prints no escape sequence of the traced programs
rc=0
"$TRACERIG" report "$TEST_TMP/a.trace.zip" >"$TEST_TMP/report" 2>&1 || rc=$?
check_eq "tracerig report exits 0" 0 "$rc"
check_no_grep "report: no terminal escape" $'[\x01-\x09\x0b-\x1f\x7f]' "$TEST_TMP/report"
check_grep "report: the hostile thread name, defused" "ev\\?il:co\\?m" "$TEST_TMP/report"

# ---- the host's files are as they were
sums >"$TEST_TMP/sums.after"
check "the secret, /etc/shadow and /etc/passwd are unchanged" cmp "$TEST_TMP/sums.before" "$TEST_TMP/sums.after"
done_testing

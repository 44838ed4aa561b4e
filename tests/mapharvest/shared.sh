#!/usr/bin/env bash
# One file under several processes' names (hard links: five processes of
# one user linking a 250 MB map drove tracerig to 3.3 GB of memory and
# 1.25 GB of staging, the limit being per file) is taken once; and all the
# files of a session together stop at max_total, each refusal said.
. "$top_srcdir/tests/lib.sh"
need_root
command -v setpriv >/dev/null 2>&1 || skip_all "needs setpriv (util-linux)"
[ -e "$top_builddir/plugins/mapharvest/mapharvest.la" ] || skip_all "mapharvest not built"

# Processes of nobody's whose /tmp files are nobody's, as a runtime's are.
pids=()
for i in 1 2 3 4 5; do
	setpriv --reuid=65534 --regid=65534 --clear-groups sleep 60 &
	pids+=("$!")
done
files=()
on_exit 'kill '"${pids[*]}"' 2>/dev/null; rm -f "${files[@]}"'
big=$(mktemp /tmp/tracerig-shared.XXXXXX)
files+=("$big")
# About 1.8 MB of perf map lines, nobody's.
awk 'BEGIN { for (i = 0; i < 60000; i++) printf "%x 10 shared_function_%d\n", 0x7f0000000000 + i * 16, i }' \
	>"$big"
chown 65534:65534 "$big"
for p in "${pids[@]}"; do
	ln "$big" "/tmp/perf-$p.map"
	files+=("/tmp/perf-$p.map")
done

printf '[tracerig]\nname = sh\n[mapharvest]\n' >"$TEST_TMP/p.ini"
args=()
for p in "${pids[@]}"; do args+=(-p "$p"); done
run_tracerig -c "$TEST_TMP/p.ini" "${args[@]}" -d 1 -o "$TEST_TMP/a.trace.zip"
check_eq "five processes, one file linked under their names: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
n=$(ls "$TEST_TMP/a" | grep -c '^perf-[0-9]*\.map$')
check_eq "the file is in the archive once" 1 "$n"
check_eq "the four other names are refused, each saying whose it is" 4 \
	"$(grep -c 'refused /tmp/perf-[0-9]*\.map: the same file as pid [0-9]*.s, harvested once (as perf-[0-9]*\.map)' \
		"$TEST_TMP/a/tracerig.log")"
check_grep "and counted" '"refused": 4' "$TEST_TMP/a/manifest.json"

# Three distinct files of 1.8 MB under max_total = 4M: two are taken.
for p in "${pids[@]:0:3}"; do
	rm -f "/tmp/perf-$p.map"
	cp "$big" "/tmp/perf-$p.map"
	chown 65534:65534 "/tmp/perf-$p.map"
done
for p in "${pids[@]:3}"; do rm -f "/tmp/perf-$p.map"; done
run_tracerig -c "$TEST_TMP/p.ini" --set mapharvest.max_total=4M "${args[@]:0:6}" -d 1 \
	-o "$TEST_TMP/b.trace.zip"
check_eq "max_total: exit 0" 0 "$rc"
unzip_archive "$TEST_TMP/b.trace.zip" "$TEST_TMP/b"
check_eq "max_total = 4M: two of the three 1.8 MB maps are taken" 2 \
	"$(ls "$TEST_TMP/b" | grep -c '^perf-[0-9]*\.map$')"
check_grep "the third is refused, saying the total and what to raise" \
	'refused /tmp/perf-[0-9]*\.map: [0-9]* bytes, past what the session keeps of all processes. files together \(max_total = 4194304, [0-9]* taken; raise \[mapharvest\] max_total' \
	"$TEST_TMP/b/tracerig.log"
check "and the staged files stay under it" test "$(cat "$TEST_TMP"/b/perf-*.map | wc -c)" -le 4194304
done_testing

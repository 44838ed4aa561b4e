#!/usr/bin/env bash
# tracerig convert and tracerig report on archives made elsewhere: convert
# writes its files as the archive is written (no link followed, no FIFO
# waited on, nothing replaced unless -f), weights that are no counts or
# overflow are refused or held with a message, no entry inflates past
# --max-size, no stack set grows past it, and a damaged entry is said to be
# damaged, with libzip's reason.  Archives are made with zip; no root.
. "$top_srcdir/tests/lib.sh"
command -v zip >/dev/null || skip_all "zip is not installed"

T=$TEST_TMP
# archive NAME FILE...: NAME.trace.zip from FILEs of $T/src/NAME
archive() {
	local name=$1; shift
	(cd "$T/src/$name" && zip -qX "$T/$name.trace.zip" "$@")
}
# convert ARGS...: output in $T/out, status in $rc
convert() { rc=0; timeout 60 "$TRACERIG" convert "$@" >"$T/out" 2>&1 </dev/null || rc=$?; }
report() { rc=0; timeout 60 "$TRACERIG" report "$@" >"$T/out" 2>&1 </dev/null || rc=$?; }

mkdir -p "$T/src/f"
printf '%s\n' 'app-42;worker-43;main;run;spin 7' 'app-42;app-42;main;idle 3' >"$T/src/f/cpu.folded"
archive f cpu.folded

# ---- item 3: the outputs
mkdir -p "$T/d"
convert --to folded -o "$T/d" "$T/f.trace.zip"
check_eq "convert writes DIR/NAME.cpu.folded" "0 $T/d/f.cpu.folded" "$rc $(cat "$T/out")"
echo mine >"$T/d/f.cpu.folded"
convert --to folded -o "$T/d" "$T/f.trace.zip"
check_eq "a second run writes NAME-2.cpu.folded" "0" "$rc"
check_grep "... and says why" "f.cpu.folded exists: writing .*/f-2" "$T/out"
check_eq "... leaving the first file alone" "mine" "$(cat "$T/d/f.cpu.folded")"
check_eq "... with the stacks in the new one" 10 "$(awk '{ s += $NF } END { print s }' "$T/d/f-2.cpu.folded")"
convert -f --to folded -o "$T/d" "$T/f.trace.zip"
check_eq "-f replaces a regular file" "0 $T/d/f.cpu.folded" "$rc $(grep -v '^tracerig' "$T/out")"
check_eq "... with the stacks" 10 "$(awk '{ s += $NF } END { print s }' "$T/d/f.cpu.folded")"

# A link planted where convert writes, by whoever owns the directory.
mkdir -p "$T/l"
echo precious >"$T/victim"
ln -s "$T/victim" "$T/l/f.cpu.folded"
convert --to folded -o "$T/l" "$T/f.trace.zip"
check_eq "a link at the name: convert writes beside it" "0" "$rc"
check_eq "... and the file it points to is untouched" "precious" "$(cat "$T/victim")"
check "... the link is still a link" test -L "$T/l/f.cpu.folded"
check "... and the stacks are in f-2.cpu.folded" test -s "$T/l/f-2.cpu.folded"
rm -f "$T/l/f-2.cpu.folded"
convert -f --to folded -o "$T/l" "$T/f.trace.zip"
check_eq "-f does not replace a link" "1" "$rc"
check_grep "... and says what is there" "f.cpu.folded: it is a symbolic link, which tracerig never replaces" "$T/out"
check_eq "... the file it points to is untouched" "precious" "$(cat "$T/victim")"

# A FIFO: opening it for writing would wait for a reader forever.
mkdir -p "$T/p"
mkfifo "$T/p/f.cpu.pb.gz"
convert -f -o "$T/p" "$T/f.trace.zip"
check_eq "-f with a FIFO at the name fails (and does not hang)" "1" "$rc"
check_grep "... saying it is a FIFO" "f.cpu.pb.gz: it is a FIFO" "$T/out"
convert -o "$T/p" "$T/f.trace.zip"
check_eq "without -f, a FIFO at the name: writes beside it" "0 $T/p/f-2.cpu.pb.gz" "$rc $(grep -v '^tracerig' "$T/out")"
check_eq "no temporary file is left behind" "" "$(cd "$T" && ls -A d l p | grep '^\.' || true)"

# ---- item 11: numbers from archives
mkdir -p "$T/src/n"
printf '%s\n' 'app-42;worker-43;main;ok 7' 'app-42;worker-43;main;neg -5' \
	'app-42;worker-43;main;huge 99999999999999999999' 'app-42;worker-43;main;big 18446744073709551611' \
	>"$T/src/n/cpu.folded"
printf '%s\n' 'app-42;worker-43;main;wait 2500' 'app-42;worker-43;main;neg -2' \
	'app-42;worker-43;main;over 9223372036854775807' >"$T/src/n/offcpu.folded"
archive n cpu.folded offcpu.folded
report "$T/n.trace.zip"
check_eq "report reads an archive with bad weights" 0 "$rc"
check_grep "negative and huge weights are no samples" "CPU samples: 7 in cpu.folded" "$T/out"
check_grep "... and it says how many lines it skipped" "cpu.folded: 3 line\\(s\\) skipped: their weight is negative or over" "$T/out"
check_grep "off-CPU: only the real 2.5 ms" "Off-CPU time: 0.003 s blocked in 1 stacks" "$T/out"
mkdir -p "$T/nf"
convert --to folded -o "$T/nf" "$T/n.trace.zip"
check_eq "convert reads it" 0 "$rc"
check_eq "... keeping the 7 samples only" "app-42;main;ok 7" "$(cat "$T/nf/n.cpu.folded")"
check_eq "... and the 2500 us only" "app-42;main;wait 2500" "$(cat "$T/nf/n.offcpu.folded")"
check_grep "... saying which lines it skipped" "offcpu.folded: 2 line\\(s\\) skipped" "$T/out"

# Weights each allowed, whose sum is not: held at INT64_MAX, said.
mkdir -p "$T/src/s"
printf '%s\n' 'app;main;wait 9007199254740992' 'app;main;wait 9007199254740992' >"$T/src/s/offcpu.folded"
archive s offcpu.folded
mkdir -p "$T/sf"
convert --to folded -o "$T/sf" "$T/s.trace.zip"
check_eq "sums past 2^63: convert still writes" 0 "$rc"
check_grep "... says they are held" "offcpu.folded: weights add up past 2\\^63: their sums are held at 9223372036854775807" "$T/out"
check_eq "... and the sum is held, not wrapped negative" "app;main;wait 9223372036854775" "$(cat "$T/sf/s.offcpu.folded")"

# A perf.data.txt period no perf writes.
mkdir -p "$T/src/pp/pp.trace"
printf 'app 7/7 [000] 1.000001: 18446744073709551615 cpu-clock:\n\t1000 hot (/x)\n\napp 7/7 [000] 1.000002: 1000000 cpu-clock:\n\t1000 hot (/x)\n\n' \
	>"$T/src/pp/pp.trace/perf.data.txt"
(cd "$T/src/pp" && zip -qrX "$T/pp.trace.zip" pp.trace)
convert --to folded -o "$T/sf" "$T/pp.trace.zip"
check_eq "a sample with a 2^64 - 1 period: convert still writes" 0 "$rc"
check_grep "... and says it skipped it" "perf.data.txt: 1 sample\\(s\\) skipped: their period is over" "$T/out"
check_eq "... keeping the other" "app-7;hot 1" "$(cat "$T/sf/pp.cpu.folded")"

# ---- the inflate cap: 2 MiB of perf.data.txt under a 1 MiB cap
mkdir -p "$T/src/big/big.trace"
awk 'BEGIN { for (i = 0; i < 30000; i++) printf "app 7/7 [000] 1.%06d: 1000000 cpu-clock:\n\t%x fn%d (/x)\n\t1000 main (/x)\n\n", i, 4096 + i, i % 7 }' \
	>"$T/src/big/big.trace/perf.data.txt"
(cd "$T/src/big" && zip -qrX "$T/big.trace.zip" big.trace)
report --max-size 1M "$T/big.trace.zip"
check_eq "report --max-size 1M refuses a 2 MiB entry" 1 "$rc"
check_grep "... naming the entry, its size and the cap" "cannot read perf.data.txt in .*: perf.data.txt inflates to 2\\.[0-9] MiB, over the 1\\.0 MiB cap \\(give a larger --max-size" "$T/out"
mkdir -p "$T/bf"
convert --max-size 1M -o "$T/bf" "$T/big.trace.zip"
check_eq "convert --max-size 1M refuses it too" 1 "$rc"
check_grep "... saying the same" "perf.data.txt inflates to 2\\.[0-9] MiB, over the 1\\.0 MiB cap" "$T/out"
check_eq "... and writes nothing" "" "$(ls -A "$T/bf")"
report "$T/big.trace.zip"
check_eq "under the default cap, report reads it" 0 "$rc"
check_grep "... all of it" "CPU samples: 30000 in perf.data.txt" "$T/out"
report --max-size 1X "$T/big.trace.zip"
check_eq "a --max-size that is no size is a usage error" 2 "$rc"
check_grep "... that says what to give" "--max-size 1X: not a size" "$T/out"

# Distinct stacks: 1 MiB of stack memory is less than 20000 distinct stacks.
mkdir -p "$T/src/many"
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "app-1;app-1;main;f%d 1\n", i }' >"$T/src/many/cpu.folded"
archive many cpu.folded
convert --max-size 1M -o "$T/bf" "$T/many.trace.zip"
check_eq "convert --max-size 1M: 20000 distinct stacks are too many" 1 "$rc"
check_grep "... and it says so" "cannot read cpu.folded in .*: its distinct stacks take more memory than the 1\\.0 MiB cap" "$T/out"
convert -o "$T/bf" "$T/many.trace.zip"
check_eq "under the default cap they convert" 0 "$rc"

# ---- item 19: a damaged entry gets libzip's reason, never "No error".
cp "$T/big.trace.zip" "$T/bad.trace.zip"
size=$(stat -c %s "$T/bad.trace.zip")
printf '%*s' 64 '' | tr ' ' 'Z' | dd of="$T/bad.trace.zip" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
report "$T/bad.trace.zip"
check_eq "report on a damaged entry fails" 1 "$rc"
check_grep "... with libzip's reason and a hint" "cannot read perf.data.txt in .*: perf.data.txt: (CRC error|Zlib error).* \\(the archive is damaged" "$T/out"
check_no_grep "... never 'No error'" "No error|No such file|Success" "$T/out"
convert -o "$T/bf" "$T/bad.trace.zip"
check_eq "convert on it fails" 1 "$rc"
check_grep "... with the same reason" "perf.data.txt: (CRC error|Zlib error)" "$T/out"
check_no_grep "... never 'No error'" "No error|No such file|Success" "$T/out"

done_testing

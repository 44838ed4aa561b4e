#!/usr/bin/env bash
# The zip packager: entries at the root with their contents, compression
# settings honoured, large files streamed rather than loaded, errors clear.
. "$top_srcdir/tests/lib.sh"

two="$top_srcdir/tests/core/profiles/two.ini"
out="$TEST_TMP/z.trace.zip"

run_tracerig -c "$two" -o "$out"
check_eq "default packaging exits 0" 0 "$rc"
check "the archive passes unzip's integrity test" unzip -tq "$out"
unzip -Z -v "$out" >"$TEST_TMP/listing"
check_grep "entries are deflated by default" 'compression method: +deflated' "$TEST_TMP/listing"
check_eq "entries are at the archive root" "manifest.json testa.txt testb.txt tracerig.log" \
	"$(unzip -Z1 "$out" | sort | paste -sd' ')"
check_eq "an entry's content is what the source wrote" "payload from-a" \
	"$(unzip -p "$out" testa.txt | grep '^payload')"

run_tracerig -c "$two" -o "$out" --set zip.compression=0
unzip -Z -v "$out" >"$TEST_TMP/listing"
check_no_grep "compression = 0 stores entries" 'compression method: +deflated' "$TEST_TMP/listing"

run_tracerig -c "$two" -o "$out" --set zip.store=.txt
unzip -Z -v "$out" >"$TEST_TMP/listing"
check_eq "store = .txt stores the .txt entries only" "manifest.json:deflated testa.txt:none (stored) testb.txt:none (stored) tracerig.log:deflated" \
	"$(awk '/^Central directory entry/{getline; getline; getline; name=$0} /compression method:/{sub(/.*: +/,""); print name":"$0}' "$TEST_TMP/listing" | sed 's/^ *//' | sort | paste -sd' ')"

run_tracerig -c "$two" -o "$out" --set zip.compression=12
check_eq "an out-of-range compression level is a profile error" 2 "$rc"
check_grep "the error gives the range" 'compression: .12. is out of range \(0 to 9\)' "$TEST_TMP/out"

# 512 MiB entry: streamed, so the peak RSS stays far below the file size.
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%M' -o "$TEST_TMP/rss" "$TRACERIG" -q -c "$two" -o "$out" \
		--set testa.bulk=512M --set zip.compression=1 >"$TEST_TMP/out" 2>&1
	rss_kb=$(tail -1 "$TEST_TMP/rss")
	check_eq "a 512 MiB entry is archived whole" 536870912 \
		"$(unzip -Z -l "$out" bulk.bin | awk '$NF=="bulk.bin"{print $4}')"
	check "packaging a 512 MiB entry keeps peak RSS under 64 MiB (was ${rss_kb} KiB)" test "$rss_kb" -lt 65536
else
	skip "a 512 MiB entry is streamed" "needs /usr/bin/time (package time)"
fi

done_testing

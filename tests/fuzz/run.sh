#!/usr/bin/env bash
# Fuzzes the parsers of what traced processes and archives control: the
# profile parser and typed values, the symbolizer's perf map, jitdump and
# ELF readers, mapharvest's /proc and jitdump parsers, `tracerig report`,
# the NetTrace reader and the ReadyToRun (PE) reader.
# Each libFuzzer harness starts from its committed corpus (every input that
# once crashed a parser is one of them), then runs a fixed number of
# mutations from a fixed seed: the same inputs on every machine (the time
# cap below only cuts short a machine too loaded to finish, and the TAP
# line then says how many inputs ran).
# A crash, a sanitizer report, a leak, a timeout or a failed check fails
# the target; its reproducer is kept and named.
#
#   FUZZ_RUNS=N      inputs per target (defaults below: ~10 s each here)
#   FUZZ_TIME=S      a cap in seconds per target, for slow machines (default 24:
#                    seven targets, under three minutes)
#   FUZZ_TARGETS=..  a subset of: profile jit mapharvest report elf nettrace r2r
. "$top_srcdir/tests/lib.sh"

env=$top_builddir/tests/fuzz/build.env
[ -r "$env" ] || skip_all "no $env (make check writes it)"
san=$(sed -n 's/^san_cflags=//p' "$env")
# The suite runs once plain and once with gcc's ASan: the harnesses carry
# their own sanitizers (clang's), so one pass is enough.
[ -z "$san" ] || skip_all "the fuzzers run once, in the plain build's pass (they bring clang's own ASan and UBSan)"

max_time=${FUZZ_TIME:-24}
targets=${FUZZ_TARGETS:-$(sed -n 's/^targets=//p' "$env")}
out=$top_builddir/tests/fuzz
artifacts=$out/artifacts

rc=0
bash "$top_srcdir/tests/fuzz/build.sh" "$top_builddir" >"$TEST_TMP/build.log" 2>&1 || rc=$?
if [ "$rc" = 77 ]; then
	skip_all "$(tail -n1 "$TEST_TMP/build.log")"
elif [ "$rc" != 0 ]; then
	not_ok "the harnesses build with clang -fsanitize=fuzzer,address,undefined" \
		"$(tail -n 40 "$TEST_TMP/build.log")"
	done_testing
	exit
fi
ok "the harnesses build with clang -fsanitize=fuzzer,address,undefined"

mkdir -p "$artifacts"
for t in $targets; do
	bin=$out/bin/fuzz_$t
	if [ ! -x "$bin" ]; then
		skip "fuzz_$t" "not built (its plugin is disabled in this build)"
		continue
	fi
	# libFuzzer adds what it finds to the first corpus directory: a copy,
	# so the tree stays as committed.
	corpus=$TEST_TMP/corpus-$t
	cp -r "$top_srcdir/tests/fuzz/corpus/$t" "$corpus"
	# The harnesses differ in speed: a zip written and read per input is
	# slower than a line of /proc/PID/status.
	case $t in
	mapharvest) runs=${FUZZ_RUNS:-100000} ;;
	nettrace) runs=${FUZZ_RUNS:-20000} ;;
	r2r) runs=${FUZZ_RUNS:-100000} ;;
	elf) runs=${FUZZ_RUNS:-20000} ;;
	jit) runs=${FUZZ_RUNS:-10000} ;;
	profile) runs=${FUZZ_RUNS:-5000} ;;
	*) runs=${FUZZ_RUNS:-4000} ;;
	esac
	log=$TEST_TMP/fuzz_$t.log
	rm -f "$artifacts/$t-"*
	rc=0
	# -close_fd_mask=3: the parsers' own messages go nowhere; libFuzzer
	# keeps the sanitizers' reports on its copy of stderr.
	# A smaller quarantine than ASan's 256 MB: joining continuation lines
	# churns through memory, and -rss_limit_mb counts what ASan holds.
	TMPDIR=$TEST_TMP ASAN_OPTIONS=quarantine_size_mb=64:detect_leaks=1 \
		"$bin" -seed=1 -runs="$runs" -max_total_time="$max_time" -timeout=5 \
		-rss_limit_mb=1024 -malloc_limit_mb=512 -max_len=65536 -close_fd_mask=3 \
		-artifact_prefix="$artifacts/$t-" "$corpus" >"$log" 2>&1 || rc=$?
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n1)
	if [ "$rc" = 0 ] && [ -n "$done_line" ]; then
		ok "fuzz_$t: $(echo "$done_line" | awk '{print $1}' | tr -d '#') inputs, no crash, leak or sanitizer report"
	else
		repro=$(ls "$artifacts/$t-"* 2>/dev/null | head -n1)
		not_ok "fuzz_$t: no crash, leak or sanitizer report" \
			"exit status $rc; reproducer: ${repro:-none}" \
			"replay: $bin ${repro:-INPUT}" \
			"$(grep -E 'ERROR|SUMMARY|Assertion|runtime error|==[0-9]+==' "$log" | head -n 20)" \
			"$(tail -n 30 "$log")"
	fi
done
done_testing

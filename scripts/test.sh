#!/usr/bin/env bash
# Installs what is missing, builds tracerig twice (plain, and with ASan +
# UBSan), runs the whole test suite in both, and ends with one line:
#   N passed, N failed[, N skipped]
# Tests need root (perf_events, BPF, namespaces, lttng-sessiond).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

bash scripts/deps.sh --test || { echo "0 passed, 1 failed"; exit 1; }
# Tracepoints and BPF need these mounted; a fresh container may lack them.
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
mountpoint -q /sys/kernel/debug 2>/dev/null || mount -t debugfs nodev /sys/kernel/debug 2>/dev/null || true

# -Werror: a warning fails the build here, as it would be read nowhere else.
builds=("_build/plain:--enable-werror" "_build/asan:--enable-sanitizers --enable-werror")
# Tests run side by side (tests/lock.sh keeps alone those that change
# what all share): more than half of a test's time is waiting, on a flight
# window, a workload, a daemon.  The sanitizer pass runs one more at a time
# than there are CPUs: on 2 CPUs two at a time left them idle 13 % of it,
# and three took it from 492 to about 400 s.  The plain pass runs as many
# as there are CPUs: the sanitizer build beside it takes what they leave,
# and a third test on top made a timing race of the JIT naming show
# (tests/dotnet/frames.sh, once in three runs).
plain_jobs=${TRACERIG_TEST_JOBS:-$(nproc)}
jobs=${TRACERIG_TEST_JOBS:-$(($(nproc) + 1))}
status=0 build_failed=0

# The sanitizer build runs during the plain pass at the lowest priority: it
# takes the CPU time the tests leave rather than time of its own.
build_in_background() {
	local dir=${1%%:*} args=${1#*:}
	mkdir -p "$dir"
	# shellcheck disable=SC2086
	nice -n 19 scripts/build.sh "$dir" $args >"$dir.build.log" 2>&1 &
	background_build=$!
}
build_done() {
	local dir=${1%%:*} args=${1#*:} rc=0
	if [ -n "${background_build:-}" ]; then
		echo "== build $dir ${args:-(default)} (during the plain pass)"
		wait "$background_build" || rc=$?
		cat "$dir.build.log"
		background_build=""
	else
		echo "== build $dir ${args:-(default)}"
		# shellcheck disable=SC2086
		scripts/build.sh "$dir" $args || rc=$?
	fi
	[ "$rc" = 0 ] && return 0
	echo "build in $dir failed"
	return 1
}

# The .NET test apps and tools do not depend on how tracerig was built:
# built once for both passes.
export TRACERIG_DOTNET_CACHE="$top/_build/dotnet"
# one_at_a_time TEST-TIMES: how many seconds of the pass one test ran
# alone, and how many of those were tests that must (tests/lock.sh).
one_at_a_time() {
	awk '{ for (t = $3; t < $3 + $1; t++) { n[t]++; if ($4 == "-x") x[t] = 1 } }
	     END { for (t in n) if (n[t] == 1) { one++; alone += (t in x) }
		   printf "one test at a time for %d s (%d s in tests that run alone)", one, alone }' "$1" 2>/dev/null
}
run_pass() {
	local dir=$1 jobs=$2 started
	echo "== tests in $dir ($jobs at a time)"
	find "$dir" -name '*.trs' -delete
	rm -f "$dir/test-times"
	if [ "$dir" = _build/asan ]; then
		export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
		export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
		export TRACERIG_KEEP_PLUGINS_LOADED=1
	fi
	started=$(date +%s)
	(cd "$dir" && TRACERIG_TEST_TIMES="$top/$dir/test-times" make -s check -j"$jobs" >/dev/null 2>&1) || status=1
	unset ASAN_OPTIONS UBSAN_OPTIONS TRACERIG_KEEP_PLUGINS_LOADED
	# Each test's own time (tests/lock.sh), its wait for others left out:
	# what CI's time limit is spent on.  The seconds only one test ran
	# are what running side by side did not save.
	echo "  $dir: $(($(date +%s) - started)) s, $(one_at_a_time "$dir/test-times"); the slowest:" \
		$(sort -rn "$dir/test-times" 2>/dev/null | head -6 |
			sed -E 's|^([0-9]+) (.*/)?(tests/[^ ]*) .*$|\3 \1 s,|') | sed 's/,$//'
	grep -h '^FAIL:\|^ERROR:\|^XPASS:' "$dir"/test-suite.log 2>/dev/null | sed "s|^|  $dir: |" | head -50
	# CI keeps only what is printed: each failed check with the
	# diagnostics its test wrote under it.
	grep -l '^:test-result: \(FAIL\|ERROR\|XPASS\)' $(find "$dir" -name '*.trs') 2>/dev/null |
		head -10 | while IFS= read -r trs; do
			log=${trs%.trs}.log
			echo "  --- $log"
			# C unit tests print a check's messages before its result
			# line, shell tests after it: keep both sides.
			awk '/^(ok|not ok) / { if ($1 == "not") { for (i = 0; i < nb; i++) print "  " before[i]; keep = 25; print "  " $0 } else keep = 0; nb = 0; next }
			     /^#/ { if (keep > 0) { print "  " $0; keep--; } else if (nb < 25) before[nb++] = $0; next }
			     { keep = 0 }' "$log" 2>/dev/null | head -80
			grep -q '^not ok' "$log" 2>/dev/null || tail -n 15 "$log" 2>/dev/null | sed 's/^/  /'
			grep -h -m5 'ERROR: AddressSanitizer\|runtime error:\|LeakSanitizer' "$log" 2>/dev/null | sed 's/^/  /'
		done
}

if ! build_done "${builds[0]}"; then
	echo "0 passed, 1 failed"
	exit 1
fi
build_in_background "${builds[1]}"
run_pass "${builds[0]%%:*}" "$plain_jobs"
if build_done "${builds[1]}"; then
	run_pass "${builds[1]%%:*}" "$jobs"
else
	find "${builds[1]%%:*}" -name '*.trs' -delete
	build_failed=1
	status=1
fi

passed=0 failed=$build_failed skipped=0
for dir in _build/plain _build/asan; do
	while IFS= read -r f; do
		p=$(grep -c '^:test-result: \(PASS\|XFAIL\)' "$f")
		fl=$(grep -c '^:test-result: \(FAIL\|XPASS\|ERROR\)' "$f")
		s=$(grep -c '^:test-result: SKIP' "$f")
		passed=$((passed + p)) failed=$((failed + fl)) skipped=$((skipped + s))
	done < <(find "$dir" -name '*.trs')
done
# A backend configure left out takes its tests out of `make check` without
# a word: they count as skipped, with configure's reason, and leaving out a
# backend this machine can build (its packages are installed) is a failure.
backend_skips=""
for dir in _build/plain _build/asan; do
	out=$(bash scripts/backends-check.sh "$dir" 2>&1) ||
		out="FAIL scripts/backends-check.sh $dir failed: $out"
	while IFS= read -r l; do
		case "$l" in
		"SKIP "*)
			skipped=$((skipped + 1))
			backend_skips="$backend_skips$dir: ${l#SKIP * }"$'\n'
			;;
		"FAIL "*)
			failed=$((failed + 1))
			echo "  $dir: ${l#FAIL }"
			;;
		esac
	done <<<"$out"
done
if [ "$skipped" -gt 0 ]; then
	echo "Skipped, and why:"
	find _build/plain _build/asan -name '*.log' ! -name test-suite.log -print0 |
		xargs -0 grep -h '# SKIP' 2>/dev/null | sed 's/^/  /' | sort | uniq -c | sed 's/^ */  /' | head -40
	# "N tests of DIR: backend NAME not built: WHY" (the tests it would run).
	printf '%s' "$backend_skips" | sort | uniq -c | sed 's/^ *\([0-9]*\) /  \1 tests of /'
fi
if [ "$failed" -gt 0 ]; then
	echo "Failed tests' logs: $top/_build/*/test-suite.log"
	status=1
fi
line="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
echo "$line"
[ "$passed" -gt 0 ] || status=1
exit $status

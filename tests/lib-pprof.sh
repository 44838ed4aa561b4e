# pprof checks for the tests of tracerig's pprof output (sourced after
# tests/lib.sh).
#
# need_pprof: $PPROF is Google's pprof, built once per build tree from
# Debian's golang-go and golang-github-google-pprof-dev (scripts/deps.sh),
# offline: the same tool `go tool pprof` is.
need_pprof() {
	PPROF="$top_builddir/tests/pprof-tool/pprof"
	cache_locked "$PPROF.lock" build_pprof
}
build_pprof() {
	local dir="$top_builddir/tests/pprof-tool"
	[ -x "$PPROF" ] && return 0
	command -v go >/dev/null 2>&1 || skip_all "no go compiler (golang-go, scripts/deps.sh) to build pprof"
	[ -d /usr/share/gocode/src/github.com/google/pprof ] ||
		skip_all "no pprof sources (golang-github-google-pprof-dev, scripts/deps.sh)"
	mkdir -p "$dir"
	if ! (cd "$dir" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$dir/cache" GOFLAGS= \
		go build -o "$PPROF.tmp" github.com/google/pprof) >"$dir/build.log" 2>&1; then
		echo "not ok 1 - pprof builds from Debian's sources"
		sed 's/^/#   /' "$dir/build.log"
		echo "1..1"
		exit 1
	fi
	mv "$PPROF.tmp" "$PPROF"
}

# need_demo_pprof: root, $PPROF, and $DEMO (the demo program) with the
# perf_events backend built; TMPDIR in the test's files.
need_demo_pprof() {
	need_root
	need_pprof
	export TMPDIR="$TEST_TMP"
	DEMO="$top_builddir/demo/tracerig-demo"
	[ -x "$DEMO" ] && [ -e "$top_builddir/plugins/perf_events/perf_events.la" ] ||
		skip_all "the demo or the perf_events backend is not built"
}

# leaf_samples FILE FUNCTION: samples of perf.data.txt whose leaf is FUNCTION
leaf_samples() {
	awk -v fn="$2" '/^[^ \t]/ { leaf = 1; next }
		leaf && NF { leaf = 0; if ($2 == fn) n++ } END { print n + 0 }' "$1"
}
# pprof_flat FILE FUNCTION [pprof options]: FUNCTION's flat samples
pprof_flat() {
	local file=$1 fn=$2
	shift 2
	"$PPROF" -top -sample_index=samples -nodecount=1000 "$@" "$file" 2>/dev/null |
		awk -v fn="$fn" '$NF == fn { print $1; found = 1 } END { if (!found) print 0 }'
}

# check_leaf_samples TXT PB FUNCTION...: pprof -top gives each FUNCTION
# (at least one) the flat samples perf.data.txt TXT has with it as leaf.
check_leaf_samples() {
	local txt=$1 pb=$2 fn want got
	shift 2
	for fn in "$@"; do
		want=$(leaf_samples "$txt" "$fn")
		got=$(pprof_flat "$pb" "$fn")
		if [ "$want" -gt 0 ] && [ "$got" = "$want" ]; then
			ok "pprof -top gives $fn the $want leaf samples perf.data.txt has"
		else
			not_ok "pprof -top gives $fn the leaf samples perf.data.txt has" "perf.data.txt: $want" "pprof: $got"
		fi
	done
}

# start_two_demos: $one and $two, two demo processes of one thread each,
# running for 30 s (killed when the test ends).
start_two_demos() {
	"$DEMO" --seconds 30 --threads 1 >/dev/null 2>&1 &
	one=$!
	"$DEMO" --seconds 30 --threads 1 >/dev/null 2>&1 &
	two=$!
	on_exit "kill $one $two 2>/dev/null"
	sleep 0.3
}

# check_cpu_pprof TXT PB PID: the CPU profile PB holds the samples of
# perf.data.txt TXT: each demo function's leaf samples, the total, the
# periods as cpu/nanoseconds; -tagfocus=pid=PID keeps that process's
# samples only; samples are labelled comm (the thread's name) and tid.
# Sets $total to TXT's sample count.
check_cpu_pprof() {
	local txt=$1 pb=$2 pid=$3 fn want got ns periods pid_samples
	check_leaf_samples "$txt" "$pb" demo_hot demo_warm demo_cool
	total=$(grep -c '^[^ 	]' "$txt")
	got=$("$PPROF" -top -sample_index=samples "$pb" 2>/dev/null | sed -n 's/.*of \([0-9]*\) total.*/\1/p')
	check_eq "pprof's sample total is perf.data.txt's" "$total" "$got"
	ns=$("$PPROF" -top -sample_index=cpu -unit=ns "$pb" 2>/dev/null | sed -n 's/.*of \([0-9]*\)ns total.*/\1/p')
	periods=$(awk '/^[^ \t]/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/ && $(i + 1) == "cpu-clock:") s += $i } END { printf "%.0f", s }' "$txt")
	check_eq "cpu/nanoseconds totals the samples' periods" "$periods" "$ns"
	pid_samples=$(awk -v p="$pid" '/^[^ \t]/ { split($2, a, "/"); if (a[1] == p) n++ } END { print n + 0 }' "$txt")
	got=$("$PPROF" -top -sample_index=samples -nodefraction=0 -nodecount=100000 -tagfocus="pid=$pid" "$pb" 2>/dev/null |
		sed -n 's/.*accounting for \([0-9]*\),.*/\1/p')
	if [ "$pid_samples" -gt 0 ] && [ "$pid_samples" -lt "$total" ] && [ "$got" = "$pid_samples" ]; then
		ok "-tagfocus=pid=$pid keeps that process's $pid_samples of $total samples"
	else
		not_ok "-tagfocus=pid keeps one process" "perf.data.txt: $pid_samples of $total" "pprof: $got"
	fi
	"$PPROF" -tags "$pb" >"$TEST_TMP/tags" 2>&1
	check_grep "samples carry the comm label (the thread's name, as perf gives it)" '%\): demo-worker' "$TEST_TMP/tags"
	check_grep "samples carry the tid label" 'tid:' "$TEST_TMP/tags"
}

# pprof_time_ns PB: the profile's time_nanos as `pprof -raw` prints it
# ("Time: 2026-11-25 06:35:05.544883938 +0000 UTC"), "" when it has none.
pprof_time_ns() {
	local t
	t=$("$PPROF" -raw "$1" 2>/dev/null | sed -n 's/^Time: \(.*\) [A-Z][A-Z]*$/\1/p')
	[ -n "$t" ] && date -d "$t" +%s%N
}
# pprof_duration_s PB: "SECONDS TOLERANCE", its duration_nanos as the
# header of `pprof -top` prints it ("Duration: 607.16ms, Total ..."; two
# decimals in the unit it picks, so within TOLERANCE seconds), "" when none.
# (`pprof -raw` cuts it to 4 characters, the unit with them.)
pprof_duration_s() {
	"$PPROF" -top "$1" 2>/dev/null | awk '/^Duration: / { d = $2; sub(/,$/, "", d)
		n = d + 0; u = d; sub(/^[0-9.]+/, "", u)
		s = u == "ns" ? 1e-9 : u == "us" || u == "\302\265s" || u == "µs" ? 1e-6 : u == "ms" ? 1e-3 : u == "s" ? 1 : u == "mins" ? 60 : u == "hrs" ? 3600 : 0
		if (s) printf "%.9f %.9f\n", n * s, 0.0051 * s; exit }'
}
# manifest_window_ns MANIFEST: "START_REALTIME_NS DURATION_NS" of the
# session's window (the manifest's numbers, to a few hundred ns).
manifest_window_ns() {
	jq -r '"\(.session.window_start_monotonic_ns) \(.clock.realtime_minus_monotonic_ns) \(.session.window_end_monotonic_ns)"' "$1" |
		awk '{ printf "%.0f %.0f\n", $1 + $2, $3 - $1 }'
}
# check_dated NAME PB MANIFEST: PB is dated by the session's window: its
# time within a microsecond of the window's start (the manifest's numbers
# are doubles), its duration the window's to pprof's two decimals.
check_dated() {
	local name=$1 pb=$2 start dur got gotd
	read -r start dur < <(manifest_window_ns "$3")
	got=$(pprof_time_ns "$pb")
	read -r gotd tol < <(pprof_duration_s "$pb"; echo)
	if [ -n "$got" ] && [ -n "$gotd" ] &&
		[ $(( got - start )) -gt -1000 ] && [ $(( got - start )) -lt 1000 ] &&
		awk -v a="$gotd" -v b="$dur" -v t="$tol" 'BEGIN { d = a - b / 1e9; exit !(d <= t && d >= -t) }'; then
		ok "$name is dated by the session's window (pprof: $gotd s from $got ns)"
	else
		not_ok "$name is dated by the session's window" "manifest: from $start ns for $dur ns" \
			"pprof: from ${got:-nothing} for ${gotd:-nothing} s"
	fi
}

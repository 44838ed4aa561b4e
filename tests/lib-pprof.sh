# pprof checks for the tests of tracerig's pprof output (sourced after
# tests/lib.sh).
#
# need_pprof: $PPROF is Google's pprof, built once per build tree from
# Debian's golang-go and golang-github-google-pprof-dev (scripts/deps.sh),
# offline: the same tool `go tool pprof` is.
need_pprof() {
	local dir="$top_builddir/tests/pprof-tool"
	PPROF="$dir/pprof"
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

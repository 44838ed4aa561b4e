# What the .NET benchmarks (bench/dotnet, bench/eventpipe) share, sourced
# after bench/perf_events/lib.sh with top, bench, D, WARMUP, SETTLE, CONNS,
# FREQ and DOTNET_TRACE_VERSION set: the ASP.NET Core workload
# (tests/dotnet/apps/web, built here from source into the scratch
# directory), its wrk load and measure, a fresh server per run, the tools
# stopped whatever the end, tracerig attached with -p, dotnet-trace
# (installed from NuGet unless DOTNET_TRACE names one) and perfcollect's
# perf pipeline (perf record, then perf inject --jit, perf script, zip).
for tool in dotnet wrk zip unzip perl; do
	command -v $tool >/dev/null || { echo "$bench: needs $tool (scripts/deps.sh; dotnet: the .NET SDK)" >&2; exit 1; }
done
# perfcollect's fields but the CPU, which perf record -p does not sample.
fields=comm,pid,tid,time,period,event,ip,sym,dso
hz=$(getconf CLK_TCK)
# The server gets no DOTNET_ (nor COMPlus_) variable but those a
# configuration gives it.
clean_env=$(compgen -e | grep -E '^(DOTNET_|COMPlus_|CORECLR_)' | sed 's/^/-u /' | tr '\n' ' ' || true)
# The SDK's commands (the build, the tool install) keep their temporary
# directories in the scratch directory, not in /tmp.
mkdir -p "$tmp/sdktmp"
sdk_env="DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 TMPDIR=$tmp/sdktmp"

# Whatever the bench started is stopped at the end, whatever the end: the
# server, wrk, the tools of the run ($tool: tracerig, which packages on its
# SIGTERM, or dotnet-trace; $perfrec: perf record; the lttng-sessiond
# tracerig started, by its id, if it outlived it), and the files the servers
# and perf inject left in /tmp.
server="" wrkpid="" tool="" perfrec="" sessiond=""
servers=()
stop_pid() { # PID SIGNAL SECONDS: the signal, then SIGKILL after SECONDS
	local i
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 0
	kill -"$2" "$1" 2>/dev/null || true
	for i in $(seq $(($3 * 10))); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
leftovers() { # PID: the server's files in /tmp, and perf inject's
	rm -f "/tmp/perf-$1.map" "/tmp/jit-$1.dump" /tmp/dotnet-diagnostic-"$1"-*-socket
	find /tmp -maxdepth 1 -name "jitted-$1-*.so" -delete 2>/dev/null || true
}
cleanup() {
	local p
	stop_pid "$wrkpid" TERM 2
	stop_pid "$tool" TERM 30
	stop_pid "$perfrec" INT 10
	stop_pid "$sessiond" TERM 5
	stop_pid "$server" TERM 10
	for p in "${servers[@]}"; do leftovers "$p"; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s%3N; }
cpu_ms() { awk -v hz="$hz" '{ sub(/.*\) /, ""); printf "%d", ($12 + $13) * 1000 / hz }' "/proc/$1/stat"; }
# until_ready FILE-TEST PID SECONDS: waits until the test holds, while PID lives.
until_ready() {
	local i
	for i in $(seq $(($3 * 10))); do
		eval "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# The workload, built from source as tests/dotnet builds its apps: the
# project copied out of the source tree (which gets no obj/ or bin/), with
# no build server left running afterwards.
echo "$bench: building tests/dotnet/apps/web" >&2
mkdir -p "$tmp/web/src"
cp -R "$top/tests/dotnet/apps/web/." "$tmp/web/src/"
if ! (cd "$tmp/web/src" && env $sdk_env dotnet build Web.csproj -c Release -o "$tmp/web/out" --nologo -v q \
	-nodeReuse:false -p:UseSharedCompilation=false -p:UseRazorBuildServer=false \
	>"$tmp/web/build.log" 2>&1); then
	tail -30 "$tmp/web/build.log" >&2
	exit 1
fi
app=$tmp/web/out/Web.dll
# dotnet-trace: $DOTNET_TRACE, else version DOTNET_TRACE_VERSION installed
# from NuGet into the scratch directory; empty if it could not be.
dotnet_trace=${DOTNET_TRACE:-}
if [ -z "$dotnet_trace" ]; then
	if env $sdk_env dotnet tool install --tool-path "$tmp/tools" dotnet-trace --version "$DOTNET_TRACE_VERSION" \
		>"$tmp/tools.log" 2>&1; then
		dotnet_trace=$tmp/tools/dotnet-trace
	else
		echo "$bench: dotnet-trace could not be installed: $(tail -n 3 "$tmp/tools.log" | tr '\n' ' ')" >&2
	fi
fi

# The load: wrk, one thread, requests cycling through the four endpoints;
# done() prints "RESULT requests duration_us p50_us p99_us errors".
cat >"$tmp/mix.lua" <<'LUA'
local body = '{"customer":"c1","items":[{"sku":"k3","quantity":12,"price":3.5},{"sku":"k1","quantity":1,"price":10},{"sku":"k2","quantity":4,"price":7.25},{"sku":"k9","quantity":0,"price":1}],"coupon":"SAVE5"}'
local reqs, i = {}, 0
init = function(args)
	reqs = {
		wrk.format("GET", "/orders?n=200"),
		wrk.format("GET", "/search?n=200"),
		wrk.format("POST", "/echo", { ["Content-Type"] = "application/json" }, body),
		wrk.format("GET", "/async?n=8"),
	}
end
request = function()
	i = i % #reqs + 1
	return reqs[i]
end
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("RESULT %d %d %d %d %d\n", summary.requests, summary.duration,
		latency:percentile(50), latency:percentile(99),
		e.connect + e.read + e.write + e.status + e.timeout))
end
LUA

load() { # SECONDS
	wrk -t1 -c"$CONNS" -d"$1"s --timeout 5s -s "$tmp/mix.lua" "http://127.0.0.1:$port/" >"$tmp/wrk.out" 2>&1 &
	wrkpid=$!
	wait "$wrkpid" || { wrkpid=""; return 1; }
	wrkpid=""
	grep -q '^RESULT ' "$tmp/wrk.out"
}
# server_start [VAR=VALUE...]: a fresh server with these DOTNET_ variables
# only, on a free loopback port, once it listens and has had WARMUP s of load.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
server_start() {
	port=$(free_port)
	# Its working directory is its content root, which ASP.NET Core watches
	# with inotify, subdirectories included: an empty one, so that neither
	# the checkout nor a tool's staging written under the caller's
	# directory wakes the server at every write.
	mkdir -p "$tmp/server-root"
	# shellcheck disable=SC2086
	(cd "$tmp/server-root" && exec env $clean_env "$@" dotnet "$app" --urls "http://127.0.0.1:$port") \
		>"$tmp/server.out" 2>&1 &
	server=$!
	servers+=("$server")
	until_ready "grep -qs '^ready' '$tmp/server.out'" "$server" 30 || {
		echo "$bench: the server did not start: $(tail -n 5 "$tmp/server.out" | tr '\n' ' ')" >&2
		return 1
	}
	load "$WARMUP"
}
server_stop() {
	stop_pid "$server" TERM 10
	leftovers "$server"
	server=""
}
# measure: the measured load; sets meas to "requests/s p50_ms p99_ms errors
# server_cpu_us_per_request tool_cpu_ms" (tool: the CPU time of $tool and
# $perfrec when the load ends, 0 without one).
measure() {
	local c0 c1 t=0 n dur p50 p99 errs
	sleep "$SETTLE"
	c0=$(cpu_ms "$server")
	load "$D" || return 1
	c1=$(cpu_ms "$server")
	[ -z "$tool" ] || t=$(cpu_ms "$tool")
	[ -z "$perfrec" ] || t=$((t + $(cpu_ms "$perfrec")))
	read -r n dur p50 p99 errs < <(sed -n 's/^RESULT //p' "$tmp/wrk.out")
	meas=$(awk -v n="$n" -v d="$dur" -v a="$p50" -v b="$p99" -v e="$errs" -v c=$((c1 - c0)) -v t="$t" \
		'BEGIN { printf "%.0f %.2f %.2f %d %.0f %d", n * 1e6 / d, a / 1000, b / 1000, e, c * 1000 / n, t }')
}
# stop_all: after a failed step, the run's tools and its server.
stop_all() {
	stop_pid "$tool" TERM 30; tool=""
	stop_pid "$perfrec" INT 10; perfrec=""
	stop_pid "$sessiond" TERM 5; sessiond=""
	server_stop
}

# a: the server untraced; appends meas to r-a.
run_a() {
	server_start || return 1
	measure || { server_stop; return 1; }
	server_stop
	echo "$meas" >>"$tmp/r-a"
}

# tracerig_attach DIR PROFILE ARCHIVE: tracerig -v -c PROFILE -p $server -d 0
# -o ARCHIVE (staging under DIR/stage, its log in DIR/err) until it
# collects; sets tool, and sessiond (the lttng-sessiond it started, if any).
tracerig_attach() {
	mkdir -p "$1/stage"
	TMPDIR=$1/stage "$tracerig" -v -c "$2" -p "$server" -d 0 -o "$3" 2>"$1/err" &
	tool=$!
	if ! until_ready "grep -qs 'collecting pid' '$1/err'" "$tool" 60; then
		echo "$bench: tracerig did not start collecting: $(tail -n 3 "$1/err" | tr '\n' ' ')" >&2
		stop_pid "$tool" TERM 30; tool=""
		return 1
	fi
	sessiond=$(sed -n 's/.*started lttng-sessiond (pid \([0-9]*\)).*/\1/p' "$1/err" | head -n 1)
}
# tracerig_stop: SIGTERM, then tracerig's exit (the archive written); sets
# trc (its exit status) and stop_ms (from the signal to the exit).
tracerig_stop() {
	local t0
	trc=0
	t0=$(now)
	kill -TERM "$tool"
	wait "$tool" || trc=$?
	stop_ms=$(($(now) - t0))
	tool=""
	stop_pid "$sessiond" TERM 5
	sessiond=""
}

# dotnet_trace_start FILE PROVIDERS: dotnet-trace collect -p $server
# --providers PROVIDERS -o FILE (its output in FILE.out) until it writes;
# sets tool.  SIGINT stops dotnet-trace; a background job of a script starts
# with SIGINT ignored, which .NET keeps: perl sets it back to the default.
dotnet_trace_start() {
	env $clean_env perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die "exec: $!"' \
		"$dotnet_trace" collect -p "$server" --providers "$2" -o "$1" \
		</dev/null >"$1.out" 2>&1 &
	tool=$!
	if ! until_ready "[ -s '$1' ]" "$tool" 60; then
		echo "$bench: dotnet-trace did not start: $(tail -n 3 "$1.out" | tr '\n' ' ')" >&2
		stop_pid "$tool" INT 30; tool=""
		return 1
	fi
}
# dotnet_trace_wait FILE: after its SIGINT, dotnet-trace's exit, the
# .nettrace complete (rundown included); 1 if it failed.
dotnet_trace_wait() {
	local rc=0
	wait "$tool" || rc=$?
	tool=""
	if [ "$rc" != 0 ] || ! grep -q 'Trace completed' "$1.out"; then
		echo "$bench: dotnet-trace failed ($rc): $(tail -n 3 "$1.out" | tr '\n' ' ')" >&2
		return 1
	fi
}

# perfcollect's pipeline.  perf_record_start DIR: perf record -k 1 -g -F
# FREQ -p $server into DIR/perf.data, until it writes; sets perfrec.  A
# buildid cache of its own, DIR/debug (perf record and inject copy every
# object, and every jitted-PID-N.so, into it), gone with the scratch
# directory.
perf_failures=0
perf_record_start() {
	(cd "$1" && exec perf --buildid-dir "$1/debug" record -q -k 1 -g -F "$FREQ" -p "$server" -o "$1/perf.data") \
		>"$1/rec.out" 2>"$1/rec.err" &
	perfrec=$!
	if ! until_ready "[ -s '$1/perf.data' ]" "$perfrec" 30; then
		echo "$bench: perf record did not start: $(tail -n 3 "$1/rec.err" | tr '\n' ' ')" >&2
		perf_failures=$((perf_failures + 1))
		stop_pid "$perfrec" INT 10; perfrec=""
		return 1
	fi
}
# perf_record_wait: after its SIGINT, perf record's exit (it re-raises the
# SIGINT it stopped on).
perf_record_wait() {
	wait "$perfrec" || true
	perfrec=""
}
# perf_post DIR PID [FILE...]: what follows perf record's exit: perf inject
# --jit, perf script -F $fields into DIR/perf.data.txt, and DIR/p.zip of the
# text, the injected perf.data, /tmp/perf-PID.map and FILE...; sets t_inject,
# t_script, t_zip (now() after each) and jitted (the jitted-PID-N.so files
# perf inject wrote); 1 if perf inject failed.
perf_post() {
	local d=$1 pid=$2
	shift 2
	if ! perf --buildid-dir "$d/debug" inject --jit -i "$d/perf.data" -o "$d/perf.jit.data" 2>"$d/inject.err"; then
		echo "$bench: perf inject failed: $(tail -n 3 "$d/rec.err" "$d/inject.err" | tr '\n' ' ')" >&2
		perf_failures=$((perf_failures + 1))
		return 1
	fi
	t_inject=$(now)
	perf --buildid-dir "$d/debug" script -i "$d/perf.jit.data" -F "$fields" >"$d/perf.data.txt" 2>"$d/script.err"
	t_script=$(now)
	zip -q -j "$d/p.zip" "$d/perf.data.txt" "$d/perf.jit.data" "/tmp/perf-$pid.map" "$@"
	t_zip=$(now)
	jitted=$(find /tmp -maxdepth 1 -name "jitted-$pid-*.so" | wc -l)
}
# The versions, for the section's reproduce line.
versions() {
	echo "$(dotnet --list-runtimes | awk '/NETCore.App/ { v = $2 } END { print ".NET " v }'), $(perf --version),"
	echo "$(wrk -v 2>&1 | awk 'NR == 1 { print $1, $2 }')$([ -z "$dotnet_trace" ] || echo ", dotnet-trace $DOTNET_TRACE_VERSION")"
}

# Shared helpers of the .NET tests (sourced after lib.sh): the test apps
# under tests/dotnet/apps/ are built here, from source, once per build tree
# (or once per run of scripts/test.sh, whose two builds share
# TRACERIG_DOTNET_CACHE: nothing of them depends on how tracerig was built)
# and rebuilt only when their source changed.  A machine without the .NET
# SDK skips every .NET test, saying so.
need_root
command -v dotnet >/dev/null 2>&1 ||
	skip_all "needs the .NET SDK (dotnet on the PATH): the real runtime is what these tests trace"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export DOTNET_CLI_HOME="${DOTNET_CLI_HOME:-${HOME:-/root}}"
DOTNET_APPS_SRC="$top_srcdir/tests/dotnet/apps"
. "$top_srcdir/tests/dotnet/lib-sweep.sh"

# need_plugins NAME...: skips the whole script unless each backend was built.
need_plugins() {
	for p in "$@"; do
		[ -e "$top_builddir/plugins/$p/$p.la" ] || skip_all "$p not built"
	done
}
DOTNET_CACHE=${TRACERIG_DOTNET_CACHE:-$top_builddir/tests/dotnet}
DOTNET_APPS_OUT="$DOTNET_CACHE/apps"

# dotnet_app NAME: builds tests/dotnet/apps/NAME (Release) unless its build
# is newer than every source file, and sets DOTNET_APP to its .dll.  The
# project is copied into the build tree first, so that the source tree
# gets no obj/ or bin/.  A failed build fails the test script.
dotnet_app() {
	local src="$DOTNET_APPS_SRC/$1" work="$DOTNET_APPS_OUT/$1" proj
	proj=$(cd "$src" && ls ./*.csproj | head -1)
	proj=${proj#./}
	DOTNET_APP="$work/out/${proj%.csproj}.dll"
	cache_locked "$work.lock" dotnet_app_build "$1" "$src" "$work" "$proj"
}
dotnet_app_build() {
	local name=$1 src=$2 work=$3 proj=$4 stamp="$3/out/.built"
	if [ -e "$stamp" ] && [ -z "$(find "$src" -newer "$stamp" -type f | head -1)" ]; then
		return 0
	fi
	mkdir -p "$work/src" && cp -R "$src/." "$work/src/" || return 1
	# TMPDIR: the SDK leaves two empty directories in it per build.
	mkdir -p "$work/tmp" || return 1
	if ! (cd "$work/src" && TMPDIR="$work/tmp" dotnet build "$proj" -c Release -o "$work/out" --nologo -v q \
	      >"$work/build.log" 2>&1); then
		not_ok "dotnet build $name" "$(tail -30 "$work/build.log")"
		done_testing
		exit 1
	fi
	touch "$stamp"
}

# dotnet_tool NAME VERSION: installs a .NET tool from the NuGet feed (once
# per build tree) and sets DOTNET_TOOL to its path; returns 1, with the
# reason in DOTNET_TOOL_WHY, when it cannot be installed.
dotnet_tool() {
	DOTNET_TOOL="$DOTNET_CACHE/tools/$1"
	DOTNET_TOOL_WHY=""
	cache_locked "$DOTNET_TOOL.lock" dotnet_tool_install "$@"
}
dotnet_tool_install() {
	local dir="$DOTNET_CACHE/tools"
	[ -x "$DOTNET_TOOL" ] && return 0
	mkdir -p "$dir"
	if ! TMPDIR="$dir" dotnet tool install --tool-path "$dir" "$1" --version "$2" >"$dir/$1.log" 2>&1; then
		DOTNET_TOOL_WHY="$1 $2 could not be installed from the NuGet feed: $(tail -n 2 "$dir/$1.log" | tr '\n' ' ')"
		return 1
	fi
}

# fake_runtime NAME MODE [TMPDIR]: a process that is not .NET listening
# where a runtime's diagnostic socket would be: a Python process on the
# socket name of its own PID and start time in TMPDIR ($TEST_TMP by
# default).  Sets FAKE_PID.  Modes: mute accepts and never answers; liar
# answers with a header whose size (10) is below the header's own; garbage
# answers with bytes that are no reply; huge with a header that declares
# 65535 bytes, then nothing; flood answers CollectTracing with a session
# id, then streams without end and never answers StopTracing.
fake_runtime() {
	local name=$1 mode=$2 dir=${3:-$TEST_TMP}
	TMPDIR=$dir python3 -c '
import os, socket, sys, threading
d = os.environ["TMPDIR"]
key = open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("%s/dotnet-diagnostic-%d-%s-socket" % (d, os.getpid(), key))
s.listen(4)
print("listening %d" % os.getpid(), flush=True)
mode = sys.argv[1]
kept = []
def flood(c):
    try:
        while True:
            c.sendall(b"\x5a" * 65536)
    except OSError:
        pass
header = lambda size, rid: b"DOTNET_IPC_V1\0" + size.to_bytes(2, "little") + b"\xff" + rid + b"\x00\x00"
first = True
while True:
    c, _ = s.accept()
    kept.append(c)
    if mode == "liar":
        c.recv(20)
        c.sendall(header(10, b"\x00"))
    elif mode == "garbage":
        c.recv(4096)
        c.sendall(os.urandom(64))
    elif mode == "huge":
        c.recv(4096)
        c.sendall(header(65535, b"\x00"))
    elif mode == "flood" and first:
        first = False
        c.recv(65536)
        c.sendall(header(28, b"\x00") + (7).to_bytes(8, "little"))
        threading.Thread(target=flood, args=(c,), daemon=True).start()
' "$mode" >"$TEST_TMP/$name.log" 2>&1 &
	FAKE_PID=$!
	on_exit "kill $FAKE_PID 2>/dev/null"
	for _ in $(seq 100); do
		grep -q '^listening' "$TEST_TMP/$name.log" && break
		sleep 0.1
	done
	# pyenv's shims exec the interpreter: the PID is the same, but trust
	# what it printed.
	FAKE_PID=$(sed -n 's/^listening //p' "$TEST_TMP/$name.log")
	[ -n "$FAKE_PID" ] || { not_ok "the fake runtime $name listens" "$(cat "$TEST_TMP/$name.log")"; return 1; }
	on_exit "kill $FAKE_PID 2>/dev/null"
}

# container_hot OUT ARGS...: the console workload in its own mount and PID
# namespaces with a private /tmp (a tmpfs), started from a copy of its
# build under /dev/shm, output in OUT; sets CONTAINER_PID (the unshare
# process) and CONTAINED_PID (the workload's host PID; empty when it did not
# start).
container_hot() {
	local out=$1 app
	shift
	app=$(mktemp -d /dev/shm/tracerig-hot.XXXXXX)
	on_exit "rm -rf '$app'"
	cp -R "$(dirname "$HOT_DLL")/." "$app/"
	env -u TMPDIR -u DOTNET_PerfMapEnabled unshare --mount --pid --fork --kill-child \
		sh -c 'mount -t tmpfs tmpfs /tmp && app=$0 && exec dotnet "$app/Hot.dll" "$@"' "$app" "$@" \
		>"$out" 2>&1 &
	CONTAINER_PID=$!
	on_exit_kill_container "$CONTAINER_PID"
	for _ in $(seq 300); do grep -q '^ready' "$out" && break; sleep 0.1; done
	CONTAINED_PID=""
	for p in $(pgrep -f "$app/Hot.dll"); do
		grep -Eq '^NSpid:.*[[:space:]]1$' "/proc/$p/status" 2>/dev/null &&
			[ "$(readlink "/proc/$p/exe")" != "$(readlink "/proc/$CONTAINER_PID/exe")" ] && CONTAINED_PID=$p
	done
}

# hot_start SECONDS [MODE...] (environment in HOT_ENV): starts the console
# workload in the background with no DOTNET_ variable but those in HOT_ENV,
# waits until it printed "ready", and sets HOT_PID.
hot_start() {
	local out="$TEST_TMP/hot.$$.$RANDOM.out"
	# shellcheck disable=SC2086
	env -u DOTNET_PerfMapEnabled ${HOT_ENV:-} dotnet "$HOT_DLL" "$@" >"$out" 2>&1 &
	HOT_PID=$!
	HOT_OUT=$out
	on_exit "kill $HOT_PID 2>/dev/null; wait $HOT_PID 2>/dev/null"
	for _ in $(seq 300); do
		grep -q '^ready' "$out" 2>/dev/null && return 0
		kill -0 "$HOT_PID" 2>/dev/null || break
		sleep 0.1
	done
	not_ok "the console workload started" "$(cat "$out")"
	done_testing
	exit 1
}

# An awk function: the PID of a sample header ("comm pid/tid [cpu] ..."),
# found by its shape, since a thread's name may hold spaces (".NET TP
# Worker 4242/4250").
PID_OF='function pid_of(line,   f, i, n) { n = split(line, f, /[ \t]+/); for (i = 1; i <= n; i++) if (f[i] ~ /^-?[0-9]+\/-?[0-9]+$/) { split(f[i], ids, "/"); return ids[1] } return "" } '

# managed_stats PERF_DATA_TXT PID: "SAMPLES UNNAMED" for process PID's
# samples in a perf script text: how many there are, and how many have a
# managed frame left unnamed.  A managed frame is one in JIT code (the
# text names its object after the perf map, as perf does: /tmp/perf-N.map,
# or the W^X double mapping) or in a ReadyToRun image (a .dll mapping).
managed_stats() {
	awk -v pid="$2" "$PID_OF"'
		/^[^\t]/ { mine = pid_of($0) == pid; if (mine) n++; bad = 0; next }
		/^\t/ && mine && !bad && / \[unknown\] \((\/tmp\/perf-[0-9]+\.map|\/memfd:doublemapper.*|.*\.dll)\)$/ {
			bad = 1; unnamed++
		}
		END { printf "%d %d\n", n, unnamed }' "$1"
}

# check_share NAME UNNAMED SAMPLES PERCENT: UNNAMED is at most PERCENT % of
# SAMPLES (and SAMPLES is not 0).
check_share() {
	if [ "$3" -gt 0 ] && [ $(($2 * 100)) -le $(($3 * $4)) ]; then
		ok "$1 ($2 of $3 samples)"
	else
		not_ok "$1" "$2 of $3 samples have an unnamed managed frame (at most $4% allowed)"
	fi
}

# check_unnamed LABEL PERF_DATA_TXT PID ARCHIVE_DIR PERCENT: PID's unnamed
# managed frames, split by tests/dotnet/unnamed-check.py.  Those in code
# the runtime reported (the archive's perf map and jitdump) are tracerig's
# to name: none may be left.  Those in code it never reported (precode and
# call-counting pages, early tiering) are the runtime's, and their share
# grows with machine load (0.2% to 0.7% alone, 1.74% measured beside other
# .NET builds): PERCENT bounds them all together, above what load makes of
# them, and bench/dotnet measures the issue's 1% goal on a quiet machine.
check_unnamed() {
	local label=$1 txt=$2 pid=$3 dir=$4 percent=$5 stats
	stats=$(python3 "$top_srcdir/tests/dotnet/unnamed-check.py" "$txt" "$pid" "$dir" 2>"$TEST_TMP/unnamed.err") ||
		not_ok "$label: unnamed-check.py ran" "$(cat "$TEST_TMP/unnamed.err")"
	set -- $stats
	if [ "${4:-0}" -gt 0 ] && [ "${3:-1}" -eq 0 ]; then
		ok "$label: every frame in code the runtime reported is named ($4 ranges)"
	else
		not_ok "$label: every frame in code the runtime reported is named" \
			"${3:-?} of ${1:-?} samples have a frame the runtime reported left unnamed (${4:-0} ranges in the archive)" \
			"$(cat "$TEST_TMP/unnamed.err")"
	fi
	echo "# $label: ${2:-?} of ${1:-?} samples with an unnamed managed frame (${3:-?} in code the runtime reported)"
	check_share "$label: at most $percent% of samples with an unnamed managed frame" "${2:-0}" "${1:-0}" "$percent"
}

# jit_unnamed PERF_DATA_TXT PID: how many of PID's samples have an unnamed
# frame in JIT code (named after the perf map), ReadyToRun images aside.
jit_unnamed() {
	awk -v pid="$2" "$PID_OF"'/^[^\t]/ { mine = pid_of($0) == pid; bad = 0; next }
		mine && !bad && / \[unknown\] \(\/tmp\/perf-[0-9]+\.map\)$/ { bad = 1; n++ }
		END { print n + 0 }' "$1"
}

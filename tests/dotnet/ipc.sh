#!/usr/bin/env bash
# The .NET diagnostics IPC client (lib/dotnetipc.h) against the real
# runtime, through tests/lib/dnipc-tool: ProcessInfo2 names the runtime
# version `dotnet --list-runtimes` shows and the entry point; EnablePerfMap
# turns perf maps on in a process started without DOTNET_PerfMapEnabled
# (with what it compiled before, ReadyToRun code in the jitdump only), per
# type; DisablePerfMap closes them; the same from the host into a container
# (own mount and PID namespaces, private /tmp).  Then what must be refused:
# a socket file replaced by a link to another runtime's socket or by a
# regular file, a TMPDIR through a link, a process that is not .NET, a
# server that never answers or lies about a reply's size.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/dotnet/lib-dotnet.sh"
command -v unshare >/dev/null 2>&1 || skip_all "needs unshare (util-linux)"
command -v python3 >/dev/null 2>&1 || skip_all "needs python3 (the fake servers)"
TOOL="$top_builddir/tests/lib/dnipc-tool"
[ -x "$TOOL" ] || skip_all "tests/lib/dnipc-tool is not built"

dotnet_app hot
HOT_DLL=$DOTNET_APP
expect_version=$(dotnet --list-runtimes |
	awk '$1 == "Microsoft.NETCore.App" && $2 ~ /^10\./ { print $2 }' | sort -V | tail -1)

# tool NAME ARGS...: runs dnipc-tool, stdout in $TEST_TMP/NAME.out, stderr in
# $TEST_TMP/NAME.err, status in $rc.
tool() {
	local name=$1; shift
	rc=0
	timeout 60 "$TOOL" "$@" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" </dev/null || rc=$?
}
value() { sed -n "s/^$1=//p" "$TEST_TMP/$2.out" | head -1; }
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
# forget_maps PID: the files a runtime of that PID wrote in our /tmp go
# when the test ends, after the process.
forget_maps() { on_exit "kill $1 2>/dev/null; wait $1 2>/dev/null; rm -f /tmp/perf-$1.map /tmp/jit-$1.dump"; }
# start_app [MODE]: a fresh console workload, its PID in $APP.  Only MAIN
# works after "ready" (its tiering makes its map grow); the others idle,
# which leaves the CPUs to the runtimes starting after them.
start_app() {
	hot_start 120 "${1:-idle}"
	APP=$HOT_PID
	forget_maps "$APP"
}

# ---- ProcessInfo2 --------------------------------------------------------
start_app cpu
MAIN=$APP
if tr '\0' '\n' <"/proc/$MAIN/environ" | grep -q '^DOTNET_PerfMapEnabled='; then
	not_ok "the workload runs without DOTNET_PerfMapEnabled"
else
	ok "the workload runs without DOTNET_PerfMapEnabled"
fi
tool info info "$MAIN"
check_eq "info succeeds" 0 "$rc"
check_eq "ProcessInfo2 answered" ProcessInfo2 "$(value command info)"
check_eq "the runtime version is the installed Microsoft.NETCore.App" "$expect_version" "$(value version info)"
check_eq "the entry point assembly is Hot" Hot "$(value entrypoint info)"
check_grep "the command line names the dll" '^commandline=.*/Hot\.dll 120 cpu$' "$TEST_TMP/info.out"
check_eq "the socket has the exact name of its PID and start time" \
	"/tmp/dotnet-diagnostic-$MAIN-$(awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$MAIN/stat")-socket" \
	"$(value socket info)"
check_eq "the runtime's own PID is the host PID outside containers" "$MAIN" "$(value pid info)"
tool unknown raw "$MAIN" 4 127
check_eq "an unknown command gets DS_IPC_E_UNKNOWN_COMMAND (0x80131385)" \
	"error=EREMOTEIO hresult=DS_IPC_E_UNKNOWN_COMMAND" "$(tr '\n' ' ' <"$TEST_TMP/unknown.out" | sed 's/ $//')"

# ---- EnablePerfMap 1 (perf map and jitdump), DisablePerfMap ---------------
map=/tmp/perf-$MAIN.map
dump=/tmp/jit-$MAIN.dump
check "no perf map before EnablePerfMap" test ! -e "$map"
check "no jitdump before EnablePerfMap" test ! -e "$dump"
tool enable1 enable "$MAIN" 1
check_eq "EnablePerfMap 1 succeeds" 0 "$rc"
check "the perf map exists right after the reply" test -s "$map"
# Work::SpinLeaf ran before "ready": only the runtime's catch-up names it.
check_grep "it names methods compiled before it was enabled" \
	'^0x[0-9a-f]+ [0-9a-f]+ int32 \[Hot\] Hot\.Work::SpinLeaf\(int32\)' "$map"
check "the jitdump exists" test -s "$dump"
check_eq "the jitdump starts with its magic" JiTD "$(head -c 4 "$dump" | rev)"
# Precompiled (ReadyToRun) framework code goes to the jitdump only, never to
# the perf map ([PreJIT] is the tier suffix of
# DOTNET_PerfMapShowOptimizationTiers, on by default); see type 2 below.
check_no_grep "ReadyToRun methods are not in the perf map" '\[PreJIT\]' "$map"

# Tiering keeps compiling for a while after start: the map grows while
# enabled, which makes "stops growing" below mean something.
grew=0
s0=$(size "$map")
for _ in $(seq 50); do
	sleep 0.1
	[ "$(size "$map")" -gt "$s0" ] && { grew=1; break; }
done
tool disable disable "$MAIN"
check_eq "DisablePerfMap succeeds" 0 "$rc"
s1=$(size "$map"); d1=$(size "$dump")
if ls -l "/proc/$MAIN/fd" 2>/dev/null | grep -Eq "/tmp/(perf-$MAIN\.map|jit-$MAIN\.dump)"; then
	not_ok "the runtime closed both files" "$(ls -l "/proc/$MAIN/fd")"
else
	ok "the runtime closed both files"
fi
sleep 2
if [ "$grew" = 1 ]; then
	check_eq "the map, which grew while enabled, stops growing" "$s1" "$(size "$map")"
else
	skip "the map stops growing" "it did not grow in 5 s while enabled either"
fi
check_eq "the jitdump stops growing" "$d1" "$(size "$dump")"

# Enabled again, the runtime truncates its map and writes all it compiled:
# appended to, every line written before would be there twice.  (A method
# whose compilation ends while the runtime lists what it compiled may be
# written twice, as on a loaded machine.)
before=$(wc -l <"$map")
tool reenable enable "$MAIN" 3
check_eq "EnablePerfMap 3 after DisablePerfMap succeeds" 0 "$rc"
check_grep "the map names what was compiled" 'Hot\.Work::SpinLeaf\(int32\)' "$map"
twice=$(sort "$map" | uniq -d | wc -l)
check "it was rewritten from the start, not appended to ($twice lines twice, $before before)" \
	test "$before" -ge 20 -a "$twice" -le $((before / 10))
check_eq "type 3 leaves the closed jitdump alone" "$d1" "$(size "$dump")"
tool badtype enable "$MAIN" 4
check_eq "type 4 is refused before anything is sent" "error=EINVAL" "$(cat "$TEST_TMP/badtype.out")"
kill "$MAIN"

# ---- types 2 and 3 on fresh processes -------------------------------------
# .NET 10 reports stubs by 64 KiB block by default, and the jitdump writer
# copies each record's code bytes: a block not yet committed fails writev
# with EFAULT, which ends the jitdump for good, its last record cut
# (dotnet/runtime#120419, #132935; fixed by #122274, backported to 10.0 by
# #133048).  When that happens depends on when the runtime allocates its next
# stub block, so whether the catch-up of EnablePerfMap lands in the jitdump
# is a race.  Stubs reported one by one (granularity 2) avoid it.
HOT_ENV="DOTNET_PerfMapStubGranularity=2" start_app
tool enable2 enable "$APP" 2
check_eq "EnablePerfMap 2 succeeds" 0 "$rc"
check "type 2 writes a jitdump" test -s "/tmp/jit-$APP.dump"
check "naming methods JIT-compiled before it was enabled" \
	grep -aq 'int32 \[Hot\] Hot\.Work::SpinLeaf(int32)' "/tmp/jit-$APP.dump"
check "and ReadyToRun methods loaded before" grep -aq '\[PreJIT\]' "/tmp/jit-$APP.dump"
check "but no perf map" test ! -e "/tmp/perf-$APP.map"
kill "$APP"

start_app
OTHER=$APP
tool enable3 enable "$APP" 3
check_eq "EnablePerfMap 3 succeeds" 0 "$rc"
check_grep "type 3 writes a perf map" 'Hot\.Work::SpinLeaf\(int32\)' "/tmp/perf-$APP.map"
check "but no jitdump" test ! -e "/tmp/jit-$APP.dump"

# ---- a container: own mount and PID namespaces, private /tmp --------------
# start_container NAME [UNSHARE-OPTIONS]: the workload as PID 1 of new
# namespaces with a tmpfs on /tmp.  The build tree may itself be under /tmp:
# the app is copied from the working directory, which the new mount does
# not hide.  Sets CT_PID (host PID of dotnet).
start_container() {
	local name=$1 mark="ipc-$$-$RANDOM"; shift
	# shellcheck disable=SC2016
	unshare --mount --pid --fork --kill-child "$@" sh -c 'cd "$0" &&
		mount -t tmpfs tmpfs /tmp && mkdir /tmp/app && cp -R . /tmp/app/ && cd /tmp/app &&
		exec env -u DOTNET_PerfMapEnabled dotnet Hot.dll 120 idle "$1"' \
		"$(dirname "$HOT_DLL")" "$mark" >"$TEST_TMP/$name.log" 2>&1 &
	local unshare_pid=$!
	CT_PID=""
	for _ in $(seq 300); do
		for p in $(pgrep -f "Hot.dll 120 idle $mark"); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = dotnet ] && CT_PID=$p
		done
		[ -n "$CT_PID" ] && grep -q '^ready' "$TEST_TMP/$name.log" && break
		sleep 0.1
	done
	on_exit_kill_container "${CT_PID:-$unshare_pid}" "$unshare_pid"
	if [ -z "$CT_PID" ] || ! grep -q '^ready' "$TEST_TMP/$name.log"; then
		not_ok "the workload started in its namespaces" "$(cat "$TEST_TMP/$name.log")"
		done_testing
		exit 1
	fi
}

start_container ct
ctns=$(awk '/^NSpid:/ { print $NF }' "/proc/$CT_PID/status")
check_eq "the containerized runtime is PID 1 of its namespace" 1 "$ctns"
tool ctinfo info "$CT_PID"
check_eq "info through the host PID succeeds" 0 "$rc"
check_eq "it reports the runtime version" "$expect_version" "$(value version ctinfo)"
check_eq "and the entry point" Hot "$(value entrypoint ctinfo)"
check_eq "the runtime's own PID is its namespace PID" "$ctns" "$(value pid ctinfo)"
check_eq "the socket is named with the namespace PID in the container's /tmp" \
	"/tmp/dotnet-diagnostic-$ctns-" "$(value socket ctinfo | sed 's/-[0-9]*-socket$/-/')"
# Without a /proc of its own, the runtime read the start time of the host's
# PID 1 for its key (/proc/1/stat): only the newest-of-its-PID rule finds it.
check_eq "its key is not its start time: found by the newest-of-its-PID rule" 0 "$(value exact ctinfo)"
tool ctenable enable "$CT_PID" 1
check_eq "EnablePerfMap through the host PID succeeds" 0 "$rc"
check_grep "the map is in the container's /tmp, named with the namespace PID" \
	'Hot\.Work::SpinLeaf\(int32\)' "/proc/$CT_PID/root/tmp/perf-$ctns.map"
check "and the jitdump" test -s "/proc/$CT_PID/root/tmp/jit-$ctns.dump"
check "nothing in the host's /tmp under its host PID" test ! -e "/tmp/perf-$CT_PID.map"
ct_first=$CT_PID

start_container ctproc --mount-proc
tool ctprocinfo info "$CT_PID"
check_eq "with its own /proc, info succeeds" 0 "$rc"
check_eq "and the socket has the exact name (key = start time)" 1 "$(value exact ctprocinfo)"
kill -KILL "$CT_PID" "$ct_first" 2>/dev/null

# ---- what is refused -------------------------------------------------------
start_app
VICTIM=$APP
tool victim locate "$VICTIM"
vsock=$(value socket victim)
on_exit "rm -f '$vsock' '$vsock.orig'"
# The link goes to a live runtime's socket: followed, it would talk to that one.
msock=/tmp/dotnet-diagnostic-$OTHER-$(awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$OTHER/stat")-socket
check "the other runtime's socket is there" test -S "$msock"
check "the victim's socket is where it should be" test -S "$vsock"
mv "$vsock" "$vsock.orig" && ln -s "$msock" "$vsock"
tool symlink info "$VICTIM"
check_eq "a socket file replaced by a link to another runtime's socket is refused" \
	"1 error=EPERM" "$rc $(cat "$TEST_TMP/symlink.out")"
check_grep "saying it is a symbolic link" "$vsock is a symbolic link" "$TEST_TMP/symlink.err"
rm -f "$vsock" && : >"$vsock"
tool regular info "$VICTIM"
check_eq "a regular file in its place is refused" "1 error=EPERM" "$rc $(cat "$TEST_TMP/regular.out")"
check_grep "saying what it is" "$vsock is a regular file, not a socket" "$TEST_TMP/regular.err"
kill "$VICTIM" "$OTHER"

sleep 300 &
NOTNET=$!
on_exit "kill $NOTNET 2>/dev/null"
tool notnet info "$NOTNET"
check_eq "a process that is not .NET has no diagnostic socket" "1 error=ENOENT" "$rc $(cat "$TEST_TMP/notnet.out")"
check_grep "said in words" "no diagnostic socket dotnet-diagnostic-$NOTNET-\*-socket in ${TMPDIR:-/tmp}" "$TEST_TMP/notnet.err"
kill "$NOTNET"; wait "$NOTNET" 2>/dev/null
tool gone info "$NOTNET"
check_eq "a process that is gone" "1 error=ESRCH" "$rc $(cat "$TEST_TMP/gone.out")"

if fake_runtime mute mute; then
	t0=$(date +%s%N)
	tool mute -t 500 info "$FAKE_PID"
	took=$((($(date +%s%N) - t0) / 1000000))
	check_eq "a server that never answers times out" "1 error=ETIMEDOUT" "$rc $(cat "$TEST_TMP/mute.out")"
	if [ "$took" -lt 3000 ]; then ok "within its 500 ms deadline (took $took ms)"
	else not_ok "within its 500 ms deadline" "took $took ms"; fi
	check_grep "said in words" "no answer to ProcessInfo2 within 500 ms" "$TEST_TMP/mute.err"
	check_grep "found in the TMPDIR of its environment" "$TEST_TMP/dotnet-diagnostic-$FAKE_PID-" "$TEST_TMP/mute.err"
	kill "$FAKE_PID"
fi

if fake_runtime liar liar; then
	tool liar -t 2000 info "$FAKE_PID"
	check_eq "a reply whose declared size is below the header's is refused" \
		"1 error=EBADMSG" "$rc $(cat "$TEST_TMP/liar.out")"
	check_grep "said in words" "below the header's own 20 bytes" "$TEST_TMP/liar.err"
	kill "$FAKE_PID"
fi

mkdir "$TEST_TMP/real" && ln -s "$TEST_TMP/real" "$TEST_TMP/tmplink"
if fake_runtime linked mute "$TEST_TMP/tmplink"; then
	tool linked -t 2000 info "$FAKE_PID"
	check_eq "a TMPDIR through a symbolic link is refused" "1 error=EPERM" "$rc $(cat "$TEST_TMP/linked.out")"
	check_grep "saying so" "a directory of TMPDIR $TEST_TMP/tmplink is a symbolic link" "$TEST_TMP/linked.err"
	kill "$FAKE_PID"
fi

done_testing

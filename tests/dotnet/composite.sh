#!/usr/bin/env bash
# A composite ReadyToRun image (an app published self-contained with
# PublishReadyToRunComposite: the framework's code and the app's in one
# Composite.r2r.dll, each assembly beside it a component that points to it)
# named from the image and its components, as the runtime names it:
#  - the app run with a whole jitdump (DOTNET_PerfMapEnabled=2, stub
#    granularity 2, as tests/dotnet/r2r.sh does), every "[PreJIT]" record
#    in the composite file's mapping asked of lib/r2r (tests/lib/r2r-lookup,
#    which opens the components beside the image): the same name, whole
#    names included (tests/dotnet/r2r-check.py);
#  - a session recorded by tracerig with the app launched, its jitdump off
#    (DOTNET_PerfMapEnabled=3: the runtime names no precompiled method),
#    whose hot method, in the composite image, is named in perf.data.txt
#    from the image alone; and the same with the app in a container's
#    private /tmp (components opened inside the process's root).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/dotnet/lib-dotnet.sh"
. "$top_srcdir/tests/dotnet/lib-publish.sh"
lookup=$top_builddir/tests/lib/r2r-lookup
[ -x "$lookup" ] || skip_all "no $lookup (make check builds it)"
command -v python3 >/dev/null 2>&1 || skip_all "needs python3 (the jitdump checker)"
need_plugins perf_events mapharvest

dotnet_publish composite x64 -r linux-x64 --self-contained true -p:PublishReadyToRun=true \
	-p:PublishReadyToRunComposite=true
app=$DOTNET_PUBLISHED
check "the app's code is in one composite image" test -s "$app/Composite.r2r.dll"
# A component has no code: lib/r2r says where it is.
"$lookup" --dump "$app/System.Private.CoreLib.dll" >/dev/null 2>"$TEST_TMP/component.err"
check_grep "a component assembly is refused, saying its code is in the composite file" \
	'component of a composite ReadyToRun image' "$TEST_TMP/component.err"

# --- the runtime's names for the composite image's code
env -u DOTNET_PerfMapEnabled DOTNET_PerfMapEnabled=2 DOTNET_PerfMapStubGranularity=2 \
	DOTNET_PerfMapJitDumpPath="$TEST_TMP" "$app/Composite" 30 >"$TEST_TMP/app.out" 2>&1 &
pid=$!
on_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
wait_for_grep '^ready' "$TEST_TMP/app.out" 300 ||
	{ not_ok "the app started" "$(cat "$TEST_TMP/app.out")"; done_testing; exit 1; }
dump=$TEST_TMP/jit-$pid.dump
cp "/proc/$pid/maps" "$TEST_TMP/maps" || not_ok "copy /proc/$pid/maps"
check "the runtime writes its jitdump" test -s "$dump"
check_grep "the runtime maps Composite.r2r.dll executable" ' r-xp .*/Composite\.r2r\.dll$' "$TEST_TMP/maps"
python3 "$top_srcdir/tests/dotnet/r2r-check.py" "$dump" "$TEST_TMP/maps" "$lookup" >"$TEST_TMP/check" 2>&1
read -r _ checked _ matched _ images _ outside _ generic _ whole _ < <(head -n1 "$TEST_TMP/check")
# Measured (.NET 10.0.12): about 850 methods (collections, LINQ, JSON,
# the console, the app's own) before it says "ready".
if [ "${checked:-0}" -ge 400 ]; then
	ok "the jitdump names $checked ReadyToRun methods"
else
	not_ok "the jitdump names at least 400 ReadyToRun methods" "$(head -n 30 "$TEST_TMP/check")"
fi
check_eq "all of them in one image, the composite one" 1 "${images:-?}"
check_eq "every [PreJIT] record lies in an executable .dll mapping" 0 "${outside:-?}"
check_eq "the image names every one of them as the runtime does" "$checked" "${matched:-?}"
check_eq "with signatures, every whole name is the runtime's" "$checked" "${whole:-?}"
# Generic instantiations: their entries name the component that defines
# the method by a module override.
if [ "${generic:-0}" -ge 20 ]; then
	ok "$generic methods of generic instantiations among them"
else
	not_ok "at least 20 methods of generic instantiations among them" "$(head -n 30 "$TEST_TMP/check")"
fi
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# --- a recorded session, the hot method named from the image alone
cp "$top_srcdir/conf/profiles/cpu.ini" "$TEST_TMP/cpu.ini"
rc=0
env -u DOTNET_PerfMapEnabled -u DOTNET_PerfMapStubGranularity DOTNET_PerfMapEnabled=3 TMPDIR="$TEST_TMP" \
	timeout 120 "$TRACERIG" -c "$TEST_TMP/cpu.ini" -o "$TEST_TMP/rec.trace.zip" \
	-- "$app/Composite" 4 >"$TEST_TMP/rec.out" 2>&1 </dev/null || rc=$?
check_eq "tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/rec.trace.zip" "$TEST_TMP/rec"
rpid=$(awk '/^ready /{print $2}' "$TEST_TMP/rec.out")
[ -n "$rpid" ] || not_ok "the app ran under tracerig" "$(tail -20 "$TEST_TMP/rec.out")"
on_exit "rm -f /tmp/perf-$rpid.map /tmp/jit-$rpid.dump"
check "no jitdump was written (the runtime named no precompiled method)" \
	sh -c "! unzip -l '$TEST_TMP/rec.trace.zip' | grep -q 'jit-[0-9]*\\.dump'"
# (The text names a ReadyToRun frame's object after the perf map, as it
# does a JIT frame's: tests/dotnet/frames.sh.)
check_grep "the hot method, in the composite image, is named as the runtime's jitdump would" \
	'^	 *[0-9a-f]+ int64 \[Composite\] Composite\.Program::Spin\(float64\)\[PreJIT\] \(/tmp/perf-[0-9]+\.map\)$' \
	"$TEST_TMP/rec/perf.data.txt"
# Spin loops in place for 4 s: most samples (measured 2698 of 2768).
spins=$(awk -v pid="$rpid" "$PID_OF"'
	/^[^\t]/ { mine = pid_of($0) == pid; if (mine) n++; leaf = 1; next }
	/^\t/ && mine && leaf { if (/Composite\.Program::Spin\(float64\)\[PreJIT\]/) s++; leaf = 0 }
	END { printf "%d %d\n", s, n }' "$TEST_TMP/rec/perf.data.txt")
set -- $spins
if [ "${2:-0}" -gt 0 ] && [ $(($1 * 2)) -ge "$2" ]; then
	ok "the hot method is the leaf of $1 of the app's $2 samples"
else
	not_ok "the hot method is the leaf of at least half the app's samples" "$spins"
fi
check_grep "framework code in the composite image is named from its component's metadata" \
	'^	 *[0-9a-f]+ .*\[System\.Private\.CoreLib\] System\..*\[PreJIT\] \(/tmp/perf-[0-9]+\.map\)$' \
	"$TEST_TMP/rec/perf.data.txt"
check_unnamed composite "$TEST_TMP/rec/perf.data.txt" "$rpid" "$TEST_TMP/rec" 3

# --- the same in a container (own mount and PID namespaces): the app is
# copied into its private /tmp, where only its root shows it, and its
# components are found there, beside the composite file.  Copied from the
# working directory: a build tree under /tmp is hidden once the private
# /tmp is mounted over it.
rc=0
env -u DOTNET_PerfMapEnabled -u DOTNET_PerfMapStubGranularity -u TMPDIR DOTNET_PerfMapEnabled=3 \
	timeout 120 "$TRACERIG" -c "$TEST_TMP/cpu.ini" -o "$TEST_TMP/ct.trace.zip" \
	-- unshare --mount --pid --fork --kill-child \
	sh -c 'cd "$0" && mount -t tmpfs tmpfs /tmp && mkdir /tmp/app && cp -R ./. /tmp/app/ && exec /tmp/app/Composite 4' \
	"$app" >"$TEST_TMP/ct.out" 2>&1 </dev/null || rc=$?
check_eq "container: tracerig exits 0" 0 "$rc"
unzip_archive "$TEST_TMP/ct.trace.zip" "$TEST_TMP/ct"
check_grep "container: the app ran as PID 1 of its namespace" '^ready 1$' "$TEST_TMP/ct.out"
check "container: /tmp/app is not the host's" test ! -e /tmp/app/Composite.r2r.dll
check_grep "container: the hot method is named from the image in the container's root" \
	'^	 *[0-9a-f]+ int64 \[Composite\] Composite\.Program::Spin\(float64\)\[PreJIT\] \(/tmp/perf-[0-9]+\.map\)$' \
	"$TEST_TMP/ct/perf.data.txt"

# lib/r2r's self-contained composite case (tests/lib/test_r2r), which ran
# before this script in the suite and skipped it.
R2R_TEST_APPS="$DOTNET_CACHE/apps" check_unit_cases "test_r2r on the published composite" \
	"$top_builddir/tests/lib/test_r2r" a_self_contained_composite_image_is_read
done_testing

#!/usr/bin/env bash
# ReadyToRun (precompiled framework) methods named from the image files
# themselves (lib/r2r.c) agree with the names the runtime writes for them:
# a real process started with a whole jitdump (DOTNET_PerfMapEnabled=2,
# and DOTNET_PerfMapStubGranularity=2 so that its writer does not stop at
# a stub block), each "[PreJIT]" record's code address placed in the
# process's .dll mappings as /proc/PID/maps shows them, the reader asked
# for the method there, and the names compared (tests/dotnet/r2r-check.py):
# Type::Method, and the whole name with its signature.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/dotnet/lib-dotnet.sh"
lookup=$top_builddir/tests/lib/r2r-lookup
[ -x "$lookup" ] || skip_all "no $lookup (make check builds it)"
command -v python3 >/dev/null 2>&1 || skip_all "needs python3 (the jitdump checker)"
dotnet_app hot
HOT_DLL=$DOTNET_APP

HOT_ENV="DOTNET_PerfMapEnabled=2 DOTNET_PerfMapStubGranularity=2 DOTNET_PerfMapJitDumpPath=$TEST_TMP"
hot_start 20
pid=$HOT_PID
dump=$TEST_TMP/jit-$pid.dump
cp "/proc/$pid/maps" "$TEST_TMP/maps" || not_ok "copy /proc/$pid/maps"
check "the runtime writes its jitdump" test -s "$dump"
check_grep "the runtime maps System.Private.CoreLib.dll executable" \
	' r-xp .*/System\.Private\.CoreLib\.dll$' "$TEST_TMP/maps"

python3 "$top_srcdir/tests/dotnet/r2r-check.py" "$dump" "$TEST_TMP/maps" "$lookup" >"$TEST_TMP/check" 2>&1
read -r _ checked _ matched _ images _ outside _ generic _ whole _ < <(head -n1 "$TEST_TMP/check")
# hot runs JSON, LINQ, regular expressions: hundreds of precompiled
# methods of several images before it says "ready".
if [ "${checked:-0}" -ge 500 ] && [ "${images:-0}" -ge 3 ]; then
	ok "the jitdump names $checked ReadyToRun methods in $images images"
else
	not_ok "the jitdump names at least 500 ReadyToRun methods in 3 images" "$(head -n 30 "$TEST_TMP/check")"
fi
check_eq "every [PreJIT] record lies in an executable .dll mapping" 0 "${outside:-?}"
# Measured here (.NET 10.0.12): all of them.  Allowed: 95%.
if [ "${checked:-0}" -gt 0 ] && [ $((matched * 100)) -ge $((checked * 95)) ]; then
	ok "the image names $matched of $checked as the runtime does"
else
	not_ok "the image names at least 95% of the ReadyToRun methods as the runtime does" \
		"$(head -n 30 "$TEST_TMP/check")"
fi
# The whole name, signature included (TR_R2R_SIGNATURES): what the
# jitdump says, so that a frame is one frame whichever named it.
# Measured here: all of them.
if [ "${checked:-0}" -gt 0 ] && [ $((${whole:-0} * 100)) -ge $((checked * 95)) ]; then
	ok "with signatures, $whole of $checked whole names are the runtime's"
else
	not_ok "with signatures, at least 95% of the whole names are the runtime's" \
		"$(head -n 30 "$TEST_TMP/check")"
fi
# Named from InstanceMethodEntryPoints: Dictionary`2[System.__Canon,...].
if [ "${generic:-0}" -ge 20 ]; then
	ok "$generic methods of generic instantiations among them"
else
	not_ok "at least 20 methods of generic instantiations among them" "$(head -n 30 "$TEST_TMP/check")"
fi
check "the process runs on" kill -0 "$pid"
done_testing

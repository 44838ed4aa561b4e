#!/usr/bin/env bash
# LTTng with the real runtime, told as it is.  .NET's LTTng provider
# (libcoreclrtraceptprovider.so) links the liblttng-ust soname of the
# runtime's build machine; where the traced process's root lacks it, the
# runtime runs on and no DotNETRuntime event can ever reach LTTng.  --check,
# the run's log and manifest.json must say exactly that, and what to use
# instead.  Where the provider can load, the events themselves are checked.
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/dotnet/lib-dotnet.sh"
need_plugins lttng
command -v lttng-sessiond >/dev/null 2>&1 || skip_all "needs lttng-sessiond (apt-get install lttng-tools)"
dotnet_app hot
HOT_DLL=$DOTNET_APP

# What the runtime on this machine really needs, read by a tool of its own.
runtime_dir=$(dirname "$(dotnet --list-runtimes | awk '/^Microsoft\.NETCore\.App /{v=$2; d=$3} END{gsub(/[][]/, "", d); print d "/" v "/libcoreclr.so"}')")
provider=$runtime_dir/libcoreclrtraceptprovider.so
[ -e "$provider" ] || skip_all "this .NET runtime ships no LTTng provider ($provider)"
needs=$(readelf -d "$provider" | sed -n 's/.*Shared library: \[\(liblttng-ust\.so\.[0-9]*\)\].*/\1/p' | head -1)
check "the provider links a liblttng-ust soname ($needs)" test -n "$needs"
if ldconfig -p | grep -q "$needs "; then
	loadable=yes
else
	loadable=no
fi

hot_start 60
printf '[tracerig]\nname = dn\n[lttng]\npreset = default\n' >"$TEST_TMP/p.ini"
rc=0
TMPDIR="$TEST_TMP" "$TRACERIG" --check -c "$TEST_TMP/p.ini" -p "$HOT_PID" >"$TEST_TMP/check.out" 2>&1 || rc=$?
if [ "$loadable" = no ]; then
	check_grep "--check names the missing soname and the way out" \
		"pid $HOT_PID: the \\.NET runtime's LTTng provider \\(libcoreclrtraceptprovider\\.so\\) cannot load: it links $needs, which is not in the process's root.*EventPipe" \
		"$TEST_TMP/check.out"
	# LTTng alone can record nothing here: that is an error, not an empty
	# trace reported as success.
	run_tracerig -c "$TEST_TMP/p.ini" -p "$HOT_PID" -d 2 -o "$TEST_TMP/lt-only.trace.zip"
	check_eq "a profile of LTTng alone ends with an error" 1 "$rc"
	check_grep "saying why" "no session is started: the runtime's events come over EventPipe" \
		"$TEST_TMP/out"
	check_grep "and that no backend could start" "no backend could start: nothing to collect" \
		"$TEST_TMP/out"
	check "and writes no archive" test ! -e "$TEST_TMP/lt-only.trace.zip"
	# Beside EventPipe, as in dotnet.ini, the run goes on without it.
	printf '[tracerig]\nname = dn\n[eventpipe]\nproviders = gc\n[lttng]\npreset = default\n' \
		>"$TEST_TMP/p.ini"
	run_tracerig -c "$TEST_TMP/p.ini" -p "$HOT_PID" -d 2 -o "$TEST_TMP/a.trace.zip"
	check_eq "the run still ends normally" 0 "$rc"
	unzip_archive "$TEST_TMP/a.trace.zip" "$TEST_TMP/a"
	check_grep "the run's log says why no runtime event came" \
		"warning +lttng: pid $HOT_PID: .*cannot load: it links $needs" "$TEST_TMP/a/tracerig.log"
	check "manifest.json says it among lttng's warnings, and lttng as skipped" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
lt = [p for p in m["plugins"] if p["name"] == "lttng"][0]
assert lt["status"] == "skipped" and lt["failed_in"] == "init", lt
assert lt["error"] == "nothing to record from these targets", lt
assert any("cannot load: it links " + sys.argv[2] in w for w in lt.get("warnings", [])), lt
assert any("no session is started" in w and "EventPipe" in w for w in lt["warnings"]), lt
' "$TEST_TMP/a/manifest.json" "$needs"
	check "and it holds no runtime event passed off as a trace" \
		sh -c "! unzip -l '$TEST_TMP/a.trace.zip' | grep -q 'lttngTrace/'"
	# A running runtime loads its provider at startup or never: no daemon
	# and no session are started for a recording that must stay empty.
	check_no_grep "no session daemon is started for it" "started lttng-sessiond" \
		"$TEST_TMP/a/tracerig.log"
	check_grep "the end of the run says lttng was left out, not that it failed" \
		"optional backend lttng was left out: nothing it records can come from these targets" \
		"$TEST_TMP/out"
	check_no_grep "and calls nothing a failure" "lttng.*(failed|FAILED)" "$TEST_TMP/out"
	# A profile asking for other userspace events keeps its session: those
	# may come from the target whatever the runtime does.
	printf '[tracerig]\nname = dn\n[lttng]\npreset = default\nevents = myapp:*\n' >"$TEST_TMP/q.ini"
	run_tracerig -c "$TEST_TMP/q.ini" -p "$HOT_PID" -d 1 -o "$TEST_TMP/q.trace.zip"
	check_eq "a profile with other events: the run ends normally" 0 "$rc"
	check_no_grep "and keeps its LTTng session" "left out" "$TEST_TMP/out"
	skip "DotNETRuntime events in the CTF" "$needs is not on this machine: no runtime event can reach LTTng here"
	# A launched command is not given DOTNET_EnableEventLog=1 then: it
	# would cost the application (every EventSource event through the
	# runtime's event logger) for no event at all.
	run_tracerig -c "$TEST_TMP/p.ini" -d 1 -o "$TEST_TMP/l.trace.zip" -- \
		sh -c 'echo "EnableEventLog=${DOTNET_EnableEventLog:-unset}" >"$0/env"' "$TEST_TMP"
	check_eq "a launched command is not given DOTNET_EnableEventLog" "EnableEventLog=unset" \
		"$(cat "$TEST_TMP/env" 2>/dev/null)"
	check_grep "and the log says why, and what to use instead" \
		"not given DOTNET_EnableEventLog=1: the runtimes in .* link $needs for their LTTng provider, which this host lacks.*EventPipe" \
		"$TEST_TMP/out"
	check_grep "and no LTTng session is started for a command whose events cannot come" \
		"lttng: warning: sh: the runtimes in .* link $needs .*no runtime event it starts can reach LTTng" \
		"$TEST_TMP/out"
	check_grep "the run says lttng was left out" "optional backend lttng was left out" "$TEST_TMP/out"
else
	check_no_grep "--check does not call the provider unloadable" 'cannot load' "$TEST_TMP/check.out"
	skip "the unloadable provider's message" "$needs is installed here"
fi
done_testing

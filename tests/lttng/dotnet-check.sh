#!/bin/sh
# `tracerig --check -c dotnet.ini -p PID` tells, for a .NET process, whether
# the runtime's LTTng provider (libcoreclrtraceptprovider.so) is mapped, and
# if not why: no liblttng-ust.so.N in the process's own root (a chroot here,
# as a container's: the host's .so.1 does not count, and a link to it is
# resolved inside that root), or DOTNET_LTTng=0; and whether
# DOTNET_PerfMapEnabled is set.  The stand-in process dlopen()s empty
# shared objects named like the runtime's.
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lttng/lib-lttng.sh"
lttng_prereqs
FIXTURE="$top_builddir/tests/lttng/dotnet-fixture"
[ -x "$FIXTURE" ] || skip_all "$FIXTURE not built (make check builds it)"
command -v cc >/dev/null || skip_all "no C compiler to build the empty shared objects"
profile="$top_srcdir/conf/profiles/dotnet.ini"

rt="$TEST_TMP/dotnet"
mkdir -p "$rt"
for lib in libcoreclr.so libcoreclrtraceptprovider.so liblttng-ust.so.0; do
	cc -shared -o "$rt/$lib" -x c /dev/null || skip_all "cc -shared failed"
done
pids=""
on_exit 'for p in $pids; do kill $p 2>/dev/null; done; wait 2>/dev/null'

# start_fixture NAME [ENV...] -- FIXTURE-ARGS...: runs it, waits until its
# libraries are mapped (it says "ready"), sets $fx to its PID.
start_fixture() {
	local name=$1; shift
	local envs=""
	while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
	shift
	# shellcheck disable=SC2086
	env -i PATH=/usr/bin:/bin $envs "$FIXTURE" "$@" >"$TEST_TMP/$name.ready" 2>&1 &
	fx=$!
	pids="$pids $fx"
	for _ in $(seq 200); do
		grep -q ready "$TEST_TMP/$name.ready" && return 0
		kill -0 "$fx" 2>/dev/null || break
		sleep 0.05
	done
	not_ok "fixture $name is ready" "$(cat "$TEST_TMP/$name.ready")"
}
# lttng_line: the lttng line of --check's output.
lttng_line() { grep '^  lttng ' "$TEST_TMP/out"; }
provider="libcoreclrtraceptprovider.so"

# 1: the provider and liblttng-ust.so.0 are loaded; PerfMap on.
start_fixture loaded DOTNET_PerfMapEnabled=1 -- "$rt/libcoreclr.so" "$rt/liblttng-ust.so.0" "$rt/$provider"
run_tracerig --check -c "$profile" -p "$fx"
check_eq "loaded: --check passes" 0 "$rc"
case "$(lttng_line)" in
*"optional  usable"*) ok "loaded: lttng is usable" ;;
*) not_ok "loaded: lttng is usable" "$(cat "$TEST_TMP/out")" ;;
esac
check_grep "loaded: says the provider is loaded, with its path" \
	"note: .*pid $fx: the \\.NET runtime's LTTng provider is loaded \\($rt/$provider\\)$" "$TEST_TMP/out"

# 2: chrooted into an empty root: no liblttng-ust there, though the host has
# one; and a link to the host's copy, resolved inside that root, leads
# nowhere.
root="$TEST_TMP/root"
mkdir -p "$root/usr/lib/x86_64-linux-gnu"
ln -s /usr/lib/x86_64-linux-gnu/liblttng-ust.so.1 "$root/usr/lib/x86_64-linux-gnu/liblttng-ust.so.1"
ln -s ../../../../../../../../../../usr/lib/x86_64-linux-gnu/liblttng-ust.so.1 "$root/usr/lib/liblttng-ust.so.1"
start_fixture noust -- --chroot "$root" "$rt/libcoreclr.so"
run_tracerig --check -c "$profile" -p "$fx"
check_eq "no liblttng-ust in its root: --check still passes (lttng is optional in dotnet.ini)" 0 "$rc"
check_grep "no liblttng-ust in its root: lttng NOT USABLE, saying why and what to do" \
	"^  lttng .*optional  NOT USABLE: .*pid $fx: the \\.NET runtime's LTTng provider \\($provider\\) is not loaded: neither liblttng-ust\\.so\\.0 nor liblttng-ust\\.so\\.1 is in the process's root \\(install the one its \\.NET build links -- liblttng-ust0 or liblttng-ust1 -- in its image, and restart it\\)$" "$TEST_TMP/out"

# 3: the same root with liblttng-ust.so.0 in it: found there, not on the
# host; the provider sits next to libcoreclr.so in that root too.
cp "$rt/liblttng-ust.so.0" "$root/usr/lib/x86_64-linux-gnu/"
mkdir -p "$root$rt" && cp "$rt/$provider" "$root$rt/"
run_tracerig --check -c "$profile" -p "$fx"
check_grep "liblttng-ust.so.0 in its root: found at its path inside that root" \
	"pid $fx: the \\.NET runtime's LTTng provider \\($provider\\) is not loaded although liblttng-ust\\.so\\.0 is in its root \\(/usr/lib/x86_64-linux-gnu/liblttng-ust\\.so\\.0\\): its \\.NET build may link liblttng-ust\\.so\\.1 instead" "$TEST_TMP/out"

# 4: DOTNET_LTTng=0 in its environment.
start_fixture off DOTNET_LTTng=0 DOTNET_PerfMapEnabled=3 -- "$rt/libcoreclr.so"
run_tracerig --check -c "$profile" -p "$fx"
check_grep "DOTNET_LTTng=0: says the environment disables it" \
	"^  lttng .*NOT USABLE: .*pid $fx: the \\.NET runtime's LTTng provider \\($provider\\) is not loaded: DOTNET_LTTng=0 in its environment disables it \\(start it without DOTNET_LTTng=0\\)$" "$TEST_TMP/out"

# 5: not a .NET process at all.
start_fixture plain -- "$rt/liblttng-ust.so.0"
run_tracerig --check -c "$profile" -p "$fx"
check_grep "a process without libcoreclr.so: says it is not .NET" \
	"NOT USABLE: .*pid $fx: not a \\.NET process \\(no libcoreclr\\.so mapped\\): no runtime events from it" "$TEST_TMP/out"

# 6: a profile without .NET events says nothing about .NET.
write_profile "$TEST_TMP/plain.ini" 'events=tracerig_test:*'
run_tracerig --check -c "$TEST_TMP/plain.ini" -p "$fx"
check_no_grep "a profile without DotNETRuntime events: no .NET verdict" "NET" "$TEST_TMP/out"

done_testing

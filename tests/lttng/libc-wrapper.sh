#!/bin/sh
# lttng-ust's libc wrapper preloaded through command_env gives
# lttng_ust_libc:malloc events of the launched command, under its own PID and
# name; the command also gets DOTNET_EnableEventLog=1 (with no .NET
# installation to judge: DOTNET_ROOT names none; tests/dotnet/lttng.sh has
# the real runtime, whose provider cannot load on Debian 12).
# test-lock: exclusive (the machine has one lttng-sessiond: tests start, stop and kill it)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/lttng/lib-lttng.sh"
lttng_prereqs
wrapper=$(ldconfig -p | sed -n 's/.*liblttng-ust-libc-wrapper\.so\.1 .*=> //p' | head -1)
[ -n "$wrapper" ] || wrapper=$(ldconfig -p | sed -n 's/.*liblttng-ust-libc-wrapper\.so .*=> //p' | head -1)
[ -n "$wrapper" ] || skip_all "liblttng-ust-libc-wrapper.so not installed (apt-get install liblttng-ust-dev)"
own_sessiond

write_profile "$TEST_TMP/w.ini" 'events=lttng_ust_libc:malloc,lttng_ust_libc:free' \
	"command_env=LD_PRELOAD=$wrapper, TRACERIG_TEST_MARK=yes"
export DOTNET_ROOT=/nonexistent
run_tracerig -c "$TEST_TMP/w.ini" -d 20 -o "$TEST_TMP/w.trace.zip" -- \
	sh -c 'echo $$ >"$0/pid"; echo "$DOTNET_EnableEventLog $TRACERIG_TEST_MARK" >"$0/env"; exec ls / >/dev/null' "$TEST_TMP"
check_eq "tracerig exits 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$TEST_TMP/out"
check_eq "the command got DOTNET_EnableEventLog=1 and the profile's command_env" "1 yes" "$(cat "$TEST_TMP/env" 2>/dev/null)"
pid=$(cat "$TEST_TMP/pid" 2>/dev/null)
unzip_archive "$TEST_TMP/w.trace.zip" "$TEST_TMP/w"
bt_text "$TEST_TMP/w" >"$TEST_TMP/w.txt"
n=$(grep 'lttng_ust_libc:malloc:' "$TEST_TMP/w.txt" | grep -c "vpid = $pid, vtid = $pid, procname = \"ls\"")
if [ "$n" -gt 0 ]; then ok "lttng_ust_libc:malloc events of ls (pid $pid): $n"
else not_ok "lttng_ust_libc:malloc events of ls (pid $pid)" "$(head -5 "$TEST_TMP/w.txt")" "$(sed 's/^/out: /' "$TEST_TMP/out")"; fi
check_grep "malloc events carry size and pointer fields" 'lttng_ust_libc:malloc:.*size = [0-9]+, ptr = 0x' "$TEST_TMP/w.txt"
check_grep "free events recorded too" 'lttng_ust_libc:free:' "$TEST_TMP/w.txt"
check_eq "only the launched command is traced" 0 "$(grep -v "vpid = $pid," "$TEST_TMP/w.txt" | grep -c 'vpid = ')"

done_testing

# The runtime leaves its diagnostic socket and debugger pipes in /tmp
# (dotnet-diagnostic-PID-*-socket, clr-debug-pipe-PID-*) when it does not
# shut itself down: a workload killed at the end of a test, the SDK's
# build servers.  At the end of each .NET test, those its processes made
# and left are removed, so that runs do not pile them up in /tmp; a
# process still alive (a build server, another user's) keeps its files.
# Sourced once per test, by lib-dotnet.sh or lib-publish.sh.
if [ -z "${DOTNET_SWEEP_MARK:-}" ]; then
	DOTNET_SWEEP_MARK="$TEST_TMP/.dotnet-started"
	: >"$DOTNET_SWEEP_MARK"
	dotnet_sweep_tmp() {
		local f pid tries
		find /tmp -maxdepth 1 -newer "$DOTNET_SWEEP_MARK" \
			\( -name 'dotnet-diagnostic-*-socket' -o -name 'clr-debug-pipe-*' \) 2>/dev/null |
			while read -r f; do
				pid=${f#/tmp/dotnet-diagnostic-}
				pid=${pid#/tmp/clr-debug-pipe-}
				pid=${pid%%-*}
				# A workload killed by an earlier exit hook may take a
				# moment to go.
				tries=0
				while kill -0 "$pid" 2>/dev/null && [ "$tries" -lt 20 ]; do
					sleep 0.1
					tries=$((tries + 1))
				done
				kill -0 "$pid" 2>/dev/null || rm -f "$f"
			done
	}
	on_exit dotnet_sweep_tmp
fi

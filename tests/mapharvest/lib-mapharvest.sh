# Shared helpers of the mapharvest integration tests (sourced after lib.sh).
need_root
command -v node >/dev/null 2>&1 || skip_all "needs Node.js (apt-get install nodejs)"
command -v unshare >/dev/null 2>&1 || skip_all "needs unshare (util-linux)"
[ -e "$top_builddir/plugins/mapharvest/mapharvest.la" ] || skip_all "mapharvest not built"
HOT_JS="$top_srcdir/tests/mapharvest/hot.js"
have_perf_events=no
[ -e "$top_builddir/plugins/perf_events/perf_events.la" ] && have_perf_events=yes
MARK="mh$$"

# write_profile FILE [EXTRA SECTION TEXT]: perf_events (when built) + mapharvest.
write_profile() {
	{
		printf '[tracerig]\nname = mh\n'
		[ "$have_perf_events" = yes ] && printf '[perf_events]\n'
		printf '[mapharvest]\n%s\n' "${2:-}"
	} >"$1"
}

# start_container SECONDS NODE-FLAGS...: Node.js in its own PID and mount
# namespaces with a private tmpfs /tmp, working directory /tmp/work.  Sets
# NODE_PID to its host PID once it runs as PID 1 of its namespace.
start_container() {
	local seconds=$1; shift
	# The script is read before the private /tmp hides it (the tree may
	# itself be under /tmp).
	unshare --mount --pid --fork --kill-child sh -c 'js=$(cat "$0") &&
		mount -t tmpfs tmpfs /tmp && mkdir /tmp/work && cd /tmp/work &&
		printf "%s\n" "$js" >hot.js && exec node "$@"' "$HOT_JS" "$@" /tmp/work/hot.js "$seconds" "$MARK" \
		>"$TEST_TMP/node.out" 2>&1 &
	CONTAINER_PID=$!
	on_exit_kill_container "$CONTAINER_PID"
	NODE_PID=""
	for _ in $(seq 100); do
		for p in $(pgrep -f "hot.js $seconds $MARK"); do
			if [ "$(cat /proc/$p/comm 2>/dev/null)" = node ] &&
			   grep -Eq '^NStgid:.*[[:space:]]1$' /proc/$p/status 2>/dev/null; then
				NODE_PID=$p
			fi
		done
		[ -n "$NODE_PID" ] && break
		sleep 0.1
	done
	[ -n "$NODE_PID" ] || { not_ok "node started in its namespaces" "$(cat "$TEST_TMP/node.out")"; done_testing; exit 1; }
}

# wait_file PATH: until it exists and is not empty (at most 10 s).
wait_file() {
	for _ in $(seq 100); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# trace ARGS...: tracerig under a time limit (a hang fails the test).
trace() {
	rc=0
	timeout 60 "$TRACERIG" "$@" >"$TEST_TMP/out" 2>&1 </dev/null || rc=$?
}

#!/usr/bin/env bash
# An unprivileged user mounts what it may not read where tracerig reads its
# perf map and jitdump.  In its own user and mount namespaces (unshare -Urm,
# no privilege needed) it bind-mounts a root-only file over its
# /tmp/perf-PID.map and /tmp/jit-PID.dump ("bound"), or a root-owned
# directory over /tmp ("dir").  Both are refused, by mapharvest and by the
# symbolizer, and nothing of them reaches an archive entry or a frame name.
# Its own tmpfs /tmp with the perf map node writes there ("own") is read:
# a container's own mounts are not crossings.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/mapharvest/lib-mapharvest.sh"
command -v setpriv >/dev/null 2>&1 || skip_all "needs setpriv (util-linux)"
command -v unzip >/dev/null 2>&1 || skip_all "needs unzip"
setpriv --reuid=65534 --regid=65534 --clear-groups -- unshare -Urm true 2>/dev/null ||
	skip_all "nobody cannot create user namespaces here (unshare -Urm)"

# Root's only, in a directory nobody may search but not list: the lines
# are perf-map lines covering every address, so a leak names every frame.
secret_dir=$(mktemp -d /var/tmp/tracerig-secret.XXXXXX)
on_exit "rm -rf '$secret_dir'"
chmod 711 "$secret_dir"
mark="TRSECRET$$x$RANDOM"
printf '0 ffffffffffffffff %s_one\n0 ffffffffffffffff %s_two\n' "$mark" "$mark" >"$secret_dir/secret"
chmod 600 "$secret_dir/secret"
mkdir -m 711 "$secret_dir/tmp"
# Node reads its script from outside /tmp, which each process hides.
bin_dir=$(mktemp -d /var/tmp/tracerig-mounts.XXXXXX)
on_exit "rm -rf '$bin_dir'"
chmod 755 "$bin_dir"
cp "$HOT_JS" "$bin_dir/hot.js"
chmod 644 "$bin_dir/hot.js"

# start NAME SETUP NODE-FLAGS...: node as nobody in its own user and mount
# namespaces, after SETUP (sh, $$ is node's PID) ran there once $go exists;
# sets pid_NAME.
go="$secret_dir/go"
start() {
	local name=$1 setup=$2 out="$TEST_TMP/$1.out" p="" u
	shift 2
	setpriv --reuid=65534 --regid=65534 --clear-groups -- unshare -Urm sh -c \
		'echo "pid=$$"; while [ ! -e "$0" ]; do sleep 0.1; done; '"$setup"' && exec node "$@"' \
		"$go" "$@" "$bin_dir/hot.js" 30 "$MARK" >"$out" 2>&1 &
	u=$!
	on_exit "kill -KILL $u 2>/dev/null; wait $u 2>/dev/null"
	for _ in $(seq 100); do
		p=$(sed -n 's/^pid=//p' "$out")
		[ -n "$p" ] && break
		sleep 0.1
	done
	[ -n "$p" ] || { not_ok "the process '$name' starts" "$(cat "$out")"; done_testing; exit 1; }
	on_exit "kill -KILL $p 2>/dev/null"
	eval "pid_$name=$p"
}
start bound 'mount -t tmpfs tmpfs /tmp && : >/tmp/perf-$$.map && : >/tmp/jit-$$.dump &&
	mount --bind '"$secret_dir/secret"' /tmp/perf-$$.map &&
	mount --bind '"$secret_dir/secret"' /tmp/jit-$$.dump'
start dir 'mount --bind '"$secret_dir/tmp"' /tmp'
start own 'mount -t tmpfs tmpfs /tmp' --perf-basic-prof
for f in perf jit; do
	cp "$secret_dir/secret" "$secret_dir/tmp/$f-$pid_dir.$([ $f = perf ] && echo map || echo dump)"
done
chmod 600 "$secret_dir/tmp/"*
touch "$go"
for n in bound dir own; do
	eval p=\$pid_$n
	for _ in $(seq 100); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = node ] && break
		sleep 0.1
	done
	check_eq "'$n' runs node as nobody" "node 65534" \
		"$(cat /proc/$p/comm 2>/dev/null) $(stat -c %u /proc/$p 2>/dev/null)"
done
check "'bound' sees the secret at its perf map" \
	grep -q "$mark" "/proc/$pid_bound/root/tmp/perf-$pid_bound.map"
check "'dir' sees the secret at its perf map" \
	grep -q "$mark" "/proc/$pid_dir/root/tmp/perf-$pid_dir.map"
wait_file "/proc/$pid_own/root/tmp/perf-$pid_own.map" || not_ok "'own' wrote its perf map"

write_profile "$TEST_TMP/p.ini"
trace -c "$TEST_TMP/p.ini" -p "$pid_bound,$pid_dir,$pid_own" -d 2 -o "$TEST_TMP/a.trace.zip"
check_eq "tracerig exits 0 (refusals are warnings)" 0 "$rc"
a="$TEST_TMP/a"
unzip_archive "$TEST_TMP/a.trace.zip" "$a" || { not_ok "the archive unzips"; done_testing; exit 1; }
log="$a/tracerig.log"

leaks=""
for e in $(unzip -Z1 "$TEST_TMP/a.trace.zip"); do
	unzip -p "$TEST_TMP/a.trace.zip" "$e" | grep -aqF -- "$mark" && leaks="$leaks $e"
done
check_eq "no archive entry holds the secret" "" "$leaks"
check_no_grep "nor does tracerig's output" "$mark" "$TEST_TMP/out"

mounted="another file is mounted over it"
owner="owned by uid 0, not by the process's user \\(uid 65534\\)"
check_grep "mapharvest refuses the perf map mounted over" \
	"mapharvest: pid $pid_bound: refused /tmp/perf-$pid_bound.map: $mounted" "$log"
check_grep "mapharvest refuses the jitdump mounted over" \
	"mapharvest: pid $pid_bound: refused /tmp/jit-$pid_bound.dump: $mounted" "$log"
check_grep "mapharvest refuses root's perf map in a directory mounted over /tmp" \
	"mapharvest: pid $pid_dir: refused /tmp/perf-$pid_dir.map: $owner" "$log"
check_grep "mapharvest refuses root's jitdump there" \
	"mapharvest: pid $pid_dir: refused /tmp/jit-$pid_dir.dump: $owner" "$log"
check "no map of theirs in the archive" \
	test ! -e "$a/perf-$pid_bound.map" -a ! -e "$a/jit-$pid_bound.dump" -a \
	! -e "$a/perf-$pid_dir.map" -a ! -e "$a/jit-$pid_dir.dump"
check_grep "the map node wrote in its own tmpfs /tmp is harvested" 'tracerigHotLoop' \
	"$a/perf-$pid_own.map"

if [ "$have_perf_events" = yes ]; then
	check_grep "the symbolizer refuses the perf map mounted over" \
		"symbols: pid $pid_bound: refused /tmp/perf-$pid_bound.map: $mounted" "$log"
	check_grep "the symbolizer refuses root's perf map" \
		"symbols: pid $pid_dir: refused /tmp/perf-$pid_dir.map: $owner" "$log"
	check_grep "perf.data.txt has samples of 'bound'" "^node +$pid_bound/" "$a/perf.data.txt"
	check_grep "perf.data.txt has samples of 'dir'" "^node +$pid_dir/" "$a/perf.data.txt"
	check_grep "the JS function of 'own' is named from its own map" 'tracerigHotLoop' \
		"$a/perf.data.txt"
else
	skip "the symbolizer refuses the mounted files" "perf_events plugin not built"
fi
done_testing

#!/usr/bin/env bash
# `tracerig status`, `stop` and `snapshot` believe the control directory
# only when it is root's alone (owner root, mode 0700, not a symbolic
# link), a socket only when root or the caller serves it, and print what a
# session sends sanitized.  The attacks run as nobody: a directory of
# theirs whose socket answers `stop` with a path of their choosing and
# `status` with escape sequences; a symbolic link as the directory, through
# which `status` removed a file in the link's target; a socket of theirs
# moved into root's directory.
. "$top_srcdir/tests/lib.sh"
need_root
command -v setpriv >/dev/null || skip_all "needs setpriv (util-linux) to run as nobody"
export TMPDIR="$TEST_TMP"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# nobody reaches the directories of theirs below, and nothing else.
chmod 0711 "$TEST_TMP"
py=
for p in /usr/bin/python3 /usr/local/bin/python3; do
	if [ -x "$p" ] && as_nobody "$p" -c pass 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || skip_all "needs a python3 that nobody can run, for the fake sessions"

# A fake session: listens on SOCKET, answers every request with REPLY's
# bytes, and creates READY (beside the socket) once it listens.
cat >"$TEST_TMP/fake.py" <<'EOF'
import os, socket, sys
path, reply, ready = sys.argv[1], open(sys.argv[2], "rb").read(), sys.argv[3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o777)
s.listen(8)
open(ready, "w").close()
while True:
    c, _ = s.accept()
    try:
        c.recv(64)
        c.sendall(reply)
    except OSError:
        pass  # a client that refused it
    c.close()
EOF
printf 'stopping: 1\narchive: /planted/by/nobody.trace.zip\nname: evil\033]0;owned\007\nstate: \033[2Jcollecting\n' \
	>"$TEST_TMP/reply"
chmod 0644 "$TEST_TMP/fake.py" "$TEST_TMP/reply"
# fake AS-WHOM SOCKET: starts one and waits until it listens.
fake() {
	local who=$1 sock=$2 ready="${2%/*}/.ready.$RANDOM"
	# Not through as_nobody: $! must be the fake itself, for its kill.
	if [ "$who" = nobody ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$py" "$TEST_TMP/fake.py" "$sock" "$TEST_TMP/reply" "$ready" >/dev/null 2>&1 &
	else
		"$py" "$TEST_TMP/fake.py" "$sock" "$TEST_TMP/reply" "$ready" >/dev/null 2>&1 &
	fi
	on_exit "kill $! 2>/dev/null"
	for _ in $(seq 100); do [ -e "$ready" ] && return 0; sleep 0.05; done
	return 1
}
# run ARGS...: tracerig, stdout in $TEST_TMP/o, stderr in $TEST_TMP/e, status in $rc.
run() { rc=0; "$TRACERIG" "$@" >"$TEST_TMP/o" 2>"$TEST_TMP/e" </dev/null || rc=$?; }
no_escape() { ! grep -q "$(printf '\033')" "$@"; }

# 1. A directory of nobody's, with nobody's session in it.
nob="$TEST_TMP/nobodys"
mkdir -m 0700 "$nob" && chown 65534:65534 "$nob"
mkdir -m 0700 "$nob/run" && chown 65534:65534 "$nob/run"
fake nobody "$nob/run/evil.sock"
check "nobody's fake session listens" test -S "$nob/run/evil.sock"
for cmd in "stop evil" "snapshot evil" stop status; do
	TRACERIG_RUNTIME_DIR="$nob/run" run $cmd
	check_eq "nobody's directory: tracerig $cmd exits 1" 1 "$rc"
	check_no_grep "nobody's directory: tracerig $cmd prints nothing nobody chose" 'planted|evil|owned' "$TEST_TMP/o"
	check_grep "nobody's directory: tracerig $cmd says the directory is not root's and what to do" \
		"$nob/run is not a directory of root's that only root can use.*owner uid 65534.*remove it" "$TEST_TMP/e"
	check "nobody's directory: tracerig $cmd passes no escape sequence" no_escape "$TEST_TMP/o" "$TEST_TMP/e"
done

# 2. The directory is a symbolic link (nobody's) to a directory of root's
# holding a file named like a dead session's socket.
mkdir -m 0700 "$TEST_TMP/victim"
echo precious >"$TEST_TMP/victim/precious.sock"
ln -s "$TEST_TMP/victim" "$nob/link"
TRACERIG_RUNTIME_DIR="$nob/link" run status
check_eq "a linked directory: status exits 1" 1 "$rc"
check_grep "a linked directory: status says it is a symbolic link" \
	"$nob/link is not a directory of root's.*a symbolic link.*remove it" "$TEST_TMP/e"
check "a linked directory: the file in the link's target is still there" test -s "$TEST_TMP/victim/precious.sock"
TRACERIG_RUNTIME_DIR="$nob/link" run stop precious
check_eq "a linked directory: stop exits 1" 1 "$rc"
check "a linked directory: stop leaves the file too" test -s "$TEST_TMP/victim/precious.sock"

# 3. Root's directory (0700), holding a file that is not a socket and a
# socket nobody serves (bound in nobody's directory, then moved in).
run_dir="$TEST_TMP/run"
mkdir -m 0700 "$run_dir"
export TRACERIG_RUNTIME_DIR="$run_dir"
echo mine >"$run_dir/notasocket.sock"
fake nobody "$nob/moved.sock"
mv "$nob/moved.sock" "$run_dir/moved.sock"
run stop moved
check_eq "a socket nobody serves: stop exits 1" 1 "$rc"
check_no_grep "a socket nobody serves: stop does not print its path" 'planted' "$TEST_TMP/o"
check_grep "a socket nobody serves: stop says whose it is and what to do" \
	"moved.sock is served by neither root nor you.*remove it" "$TEST_TMP/e"
run status
check_eq "a socket nobody serves: status exits 0" 0 "$rc"
check_no_grep "a socket nobody serves: status does not list it" 'planted|evil|owned' "$TEST_TMP/o"
check_grep "a socket nobody serves: status warns of it" "moved.sock is served by neither root nor you" "$TEST_TMP/e"
check "a file that is not a socket is not removed as a dead session's" test -s "$run_dir/notasocket.sock"
check "nor is nobody's socket" test -S "$run_dir/moved.sock"

# 4. A session of root's that sends escape sequences (its profile's path,
# the name of what it traces): printed, but harmless.
fake root "$run_dir/loud.sock"
run status
check_eq "a session sending escape sequences: status exits 0" 0 "$rc"
check_grep "its lines are shown" '^name: evil\?\]0;owned\?$' "$TEST_TMP/o"
check "without the escape sequences" no_escape "$TEST_TMP/o" "$TEST_TMP/e"

done_testing

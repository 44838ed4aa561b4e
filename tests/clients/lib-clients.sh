# Third-party viewers driven in headless Chromium (sourced after tests/lib.sh):
# Debian's chromium (scripts/deps.sh) and the npm packages pinned in
# tests/clients/package-lock.json, installed with `npm ci` into the build
# tree.  npm's own cache (~/.npm) serves the second build's install, so the
# plain and sanitizer passes fetch the packages once.
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
export CHROMIUM
clients_dir="$top_builddir/tests/clients"
clients_src="$top_srcdir/tests/clients"

# need_clients: chromium, node and the pinned packages, or skip_all saying
# which is missing.  A registry that answers but an install that fails is a
# failure, not a skip.
need_clients() {
	[ -x "$CHROMIUM" ] || skip_all "no $CHROMIUM (scripts/deps.sh installs chromium)"
	command -v node >/dev/null 2>&1 || skip_all "no node (scripts/deps.sh installs nodejs)"
	command -v npm >/dev/null 2>&1 || skip_all "no npm (it comes with nodejs)"
	cache_locked "$clients_dir.lock" install_clients
	NODE_PATH="$clients_dir/node_modules"
	export NODE_PATH
}
install_clients() {
	if ! cmp -s "$clients_src/package-lock.json" "$clients_dir/node_modules/.tracerig-lock" 2>/dev/null; then
		mkdir -p "$clients_dir" &&
		cp "$clients_src/package.json" "$clients_src/package-lock.json" "$clients_dir/" || exit 1
		if ! (cd "$clients_dir" && npm ci --prefer-offline --ignore-scripts --no-audit --no-fund) \
			>"$TEST_TMP/npm.log" 2>&1; then
			npm ping >/dev/null 2>&1 ||
				skip_all "npm ci cannot reach the npm registry: $(grep -m1 -i 'err' "$TEST_TMP/npm.log")"
			echo "not ok 1 - npm ci installs tests/clients/package-lock.json"
			sed 's/^/#   /' "$TEST_TMP/npm.log"
			echo "1..1"
			exit 1
		fi
		cp "$clients_src/package-lock.json" "$clients_dir/node_modules/.tracerig-lock"
	fi
}

# speedscope FILE [--import url|browse] [--expect-error] [FUNCTION...]:
# tests/clients/speedscope.js on speedscope's bundled page, its report on
# one line.  Exit 0 and 1 are its verdict on the file.  Anything else (2:
# the browser could not be driven; above 128: node killed by a signal)
# says nothing about the file: the run is tried once more, and the report
# says so and how the first attempt ended.
speedscope_once() {
	node "$clients_src/speedscope.js" "$clients_dir/node_modules/speedscope/dist/release" "$@" 2>&1
}
speedscope() {
	local out rc=0 first=""
	out=$(speedscope_once "$@") || rc=$?
	if [ "$rc" -ge 2 ]; then
		first="first attempt: exit $rc, ${out:-no output}; second: "
		rc=0
		out=$(speedscope_once "$@") || rc=$?
	fi
	[ "$rc" = 0 ] || out="exit $rc: ${out:-no output}"
	printf '%s%s\n' "$first" "$out" | tr '\n' ' ' | sed 's/ *$//'
	echo
	return "$rc"
}

# speedscope_schema FILE: FILE validates against speedscope's file-format schema.
speedscope_schema() {
	node "$clients_src/speedscope-schema.js" \
		"$clients_dir/node_modules/speedscope/dist/release/file-format-schema.json" "$1"
}

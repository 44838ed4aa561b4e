# need_pprof: $PPROF is Google's pprof, built once per build tree from
# Debian's golang-go and golang-github-google-pprof-dev (scripts/deps.sh),
# offline: the same tool `go tool pprof` is.
need_pprof() {
	local dir="$top_builddir/tests/pprof-tool"
	PPROF="$dir/pprof"
	[ -x "$PPROF" ] && return 0
	command -v go >/dev/null 2>&1 || skip_all "no go compiler (golang-go, scripts/deps.sh) to build pprof"
	[ -d /usr/share/gocode/src/github.com/google/pprof ] ||
		skip_all "no pprof sources (golang-github-google-pprof-dev, scripts/deps.sh)"
	mkdir -p "$dir"
	if ! (cd "$dir" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$dir/cache" GOFLAGS= \
		go build -o "$PPROF.tmp" github.com/google/pprof) >"$dir/build.log" 2>&1; then
		echo "not ok 1 - pprof builds from Debian's sources"
		sed 's/^/#   /' "$dir/build.log"
		echo "1..1"
		exit 1
	fi
	mv "$PPROF.tmp" "$PPROF"
}

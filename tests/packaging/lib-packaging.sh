# Shared by the package tests: skips that apply to all, and the cache of
# built packages in the build directory.

# The packages are built with the distribution's flags, not this build's:
# the sanitizer pass would only build and test the same packages again.
skip_in_sanitizer_pass "packages are built with the distribution's flags, not this build's"
version=$("$top_srcdir/packaging/version.sh")
cache=$top_builddir/tests/packaging/cache

# built_packages KIND BUILD-SCRIPT [ARGS...]: sets $pkgdir to
# $cache/KIND-<key>, built there by BUILD-SCRIPT unless a build of the same
# tree is cached.  The key is the content of the copy the build scripts
# build from (packaging/clean-copy.sh), but for tests/packaging/, which
# the packages do not hold.  Returns 1 when the build failed; its log is
# $TEST_TMP/KIND.log.
built_packages() {
	local kind=$1 script=$2 key
	shift 2
	"$top_srcdir/packaging/clean-copy.sh" "$TEST_TMP/tree" >/dev/null
	key=$(cd "$TEST_TMP/tree" && find . -type f ! -path './tests/packaging/*' -print0 | sort -z |
		xargs -0 sha256sum | sha256sum | cut -c1-16)
	rm -rf "$TEST_TMP/tree"
	pkgdir=$cache/$kind-$key
	[ ! -e "$pkgdir/done" ] || return 0
	rm -rf "$cache/$kind"-*
	bash "$top_srcdir/packaging/$script" "$pkgdir" "$@" >"$TEST_TMP/$kind.log" 2>&1 &&
		touch "$pkgdir/done"
}

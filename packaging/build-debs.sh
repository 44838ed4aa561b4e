#!/usr/bin/env bash
# Builds the Debian packages from a clean copy of the tree:
#
#     packaging/build-debs.sh OUTDIR
#
# leaves tracerig*.deb, the .changes and the .buildinfo in OUTDIR.  The copy
# (packaging/clean-copy.sh) gets packaging/debian/ as its debian/, and a
# debian/changelog made from configure.ac's version (packaging/version.sh),
# so the version is written in one place only.  Build dependencies must be
# installed (dpkg-checkbuilddeps says which are missing).
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)

version=$("$top/packaging/version.sh")
# Bumped by hand only when the packaging changes with the same upstream version.
debian_revision=1

# A fixed path: the build directory's name ends up in the binaries
# (TR_ABS_BUILDDIR, the core's "running from the build tree" test).
work=$out/.build
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
src=$work/tracerig-$version
mkdir -p "$src"

what=$("$top/packaging/clean-copy.sh" "$src")
if [ "${what#git }" != "$what" ]; then
	date=$(git -C "$top" log -1 --format=%aD HEAD)
else
	date=$(date -R -r "$top/configure.ac")
fi
# A top-level debian/ in the tree would be a second, diverging copy.
[ ! -e "$src/debian" ] || { echo "build-debs: the tree has a debian/ of its own" >&2; exit 1; }
cp -a "$top/packaging/debian" "$src/debian"
cat >"$src/debian/changelog" <<CHANGELOG
tracerig ($version-$debian_revision) unstable; urgency=medium

  * Upstream $version, $what (packaging/build-debs.sh).

 -- tracerig developers <dev@tracerig.invalid>  $date
CHANGELOG

(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 || {
	tail -40 "$work/build.log" >&2
	echo "build-debs: dpkg-buildpackage failed (log above)" >&2
	exit 1
}
for f in "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo; do
	mv -f "$f" "$out/"
done
cp "$work/build.log" "$out/build.log"
ls "$out"/*.deb

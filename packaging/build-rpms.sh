#!/usr/bin/env bash
# Builds the RPM packages from a clean copy of the tree:
#
#     packaging/build-rpms.sh OUTDIR [rpmbuild options...]
#
# leaves the binary .rpm files in OUTDIR.  The version comes from
# configure.ac.  On a machine that is not RPM-based (Debian with the rpm
# package), pass --nodeps: rpmbuild cannot see the Debian build
# dependencies.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [rpmbuild options...]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift

version=$("$top/packaging/version.sh")

work=$out/.rpmbuild
rm -rf "$work"
mkdir -p "$work/SOURCES"
trap 'rm -rf "$work"' EXIT
"$top/packaging/clean-copy.sh" "$work/tracerig-$version" >/dev/null
tar -C "$work" -czf "$work/SOURCES/tracerig-$version.tar.gz" "tracerig-$version"
rm -rf "${work:?}/tracerig-$version"

rpmbuild -bb --define "_topdir $work" --define "tracerig_version $version" \
	"$@" "$top/packaging/rpm/tracerig.spec" >"$out/rpmbuild.log" 2>&1 || {
	tail -40 "$out/rpmbuild.log" >&2
	echo "build-rpms: rpmbuild failed (log: $out/rpmbuild.log)" >&2
	exit 1
}
find "$work/RPMS" -name '*.rpm' -exec mv -f {} "$out/" \;
ls "$out"/*.rpm

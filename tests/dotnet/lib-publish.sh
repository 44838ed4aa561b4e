# dotnet publish for the ReadyToRun tests (sourced after lib.sh, and after
# lib-dotnet.sh when the script needs root): an app of tests/dotnet/apps
# published for a runtime identifier with ReadyToRun code, as a user ships
# it, which `dotnet build` (lib-dotnet.sh's dotnet_app) does not do.  The
# SDK gets what it needs from NuGet (crossgen2, a runtime pack for another
# architecture or a self-contained app, the app's packages), once per
# build tree; a machine without the SDK, or that cannot reach NuGet, skips.
command -v dotnet >/dev/null 2>&1 ||
	skip_all "needs the .NET SDK (dotnet on the PATH): crossgen2 and the runtime packs come through it"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
. "$top_srcdir/tests/dotnet/lib-sweep.sh"
export DOTNET_CLI_HOME="${DOTNET_CLI_HOME:-${HOME:-/root}}"
DOTNET_CACHE=${TRACERIG_DOTNET_CACHE:-$top_builddir/tests/dotnet}

# dotnet_publish NAME LABEL ARGS...: publishes tests/dotnet/apps/NAME
# (Release) with `dotnet publish ARGS` into
# $DOTNET_CACHE/apps/NAME/LABEL/out unless that is newer than
# every source file; sets DOTNET_PUBLISHED to that directory and
# DOTNET_PUBLISH_OBJ to the project's obj/Release directory (crossgen2's
# maps are under it).  Each LABEL has its own copy of the project: restores
# for two runtime identifiers do not share an obj/.  A publish that fails
# fails the script, but one that could not reach NuGet skips it.
dotnet_publish() {
	local work="$DOTNET_CACHE/apps/$1/$2"
	DOTNET_PUBLISHED=$work/out
	DOTNET_PUBLISH_OBJ=$work/src/obj/Release
	cache_locked "$work.lock" dotnet_publish_once "$@"
}
dotnet_publish_once() {
	local name=$1 label=$2 src="$top_srcdir/tests/dotnet/apps/$1" proj
	local work="$DOTNET_CACHE/apps/$1/$2"
	shift 2
	proj=$(cd "$src" && ls ./*.csproj | head -1)
	proj=${proj#./}
	if [ -e "$work/out/.published" ] &&
	   [ -z "$(find "$src" -newer "$work/out/.published" -type f | head -1)" ]; then
		return 0
	fi
	rm -rf "$work/out" && mkdir -p "$work/src" "$work/tmp" && cp -R "$src/." "$work/src/" || return 1
	# TMPDIR: the SDK leaves two empty directories in it per publish.
	if ! (cd "$work/src" && TMPDIR="$work/tmp" dotnet publish "$proj" -c Release -o "$work/out" --nologo "$@" \
	      >"$work/publish.log" 2>&1); then
		# NU1301: the feed could not be read; NU1101/NU1102: a package not
		# found there (an offline mirror without it).
		if grep -Eq 'NU1301|NU1101|NU1102' "$work/publish.log"; then
			skip_all "dotnet publish $name ($label) could not get its packages from NuGet: $(grep -Em1 'NU1301|NU1101|NU1102' "$work/publish.log")"
		fi
		not_ok "dotnet publish $name ($label)" "$(tail -30 "$work/publish.log")"
		done_testing
		exit 1
	fi
	touch "$work/out/.published"
}

# pe_machine FILE: the PE image's Machine field, in hex (0xfd1d: x64 for
# Linux, 0xd11d: arm64 for Linux, the architecture XORed with 0x7b79).
pe_machine() {
	python3 -c 'import struct, sys; d = open(sys.argv[1], "rb").read(4096); pe = struct.unpack_from("<I", d, 0x3c)[0]; print("0x%04x" % struct.unpack_from("<H", d, pe + 4)[0])' "$1"
}

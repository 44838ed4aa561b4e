#!/usr/bin/env bash
# ReadyToRun code of arm64 images read on any machine: an app and the
# package it uses (Newtonsoft.Json, IL only on NuGet) published for
# linux-arm64 with ReadyToRun code, crossgen2 writing a map of what it
# compiled (--mapcsv); lib/r2r's method table of each image (read by
# tests/lib/r2r-lookup --dump) has every method of the map at its RVA,
# under its name, with its length (tests/dotnet/r2r-map-check.py).  arm64's
# RUNTIME_FUNCTION has no end address: the length is the unwind data's.
# Then the two as one composite image for linux-arm64.  The same app
# published for linux-x64 holds the checker to the exact lengths that x64's
# RUNTIME_FUNCTIONs say.
. "$top_srcdir/tests/lib.sh"
lookup=$top_builddir/tests/lib/r2r-lookup
[ -x "$lookup" ] || skip_all "no $lookup (make check builds it)"
command -v python3 >/dev/null 2>&1 || skip_all "needs python3 (the map checker)"
. "$top_srcdir/tests/dotnet/lib-publish.sh"

# check_map LABEL RID IMAGE.dll MIN: the table of IMAGE.dll against its map.
check_map() {
	local label=$1 rid=$2 dll=$3 min=$4 methods table rva length shorter name
	local map="$DOTNET_PUBLISH_OBJ/net10.0/$rid/R2R/${dll%.dll}.map.csv"
	if ! "$lookup" --dump "$DOTNET_PUBLISHED/$dll" >"$TEST_TMP/$label.dump" 2>"$TEST_TMP/$label.err"; then
		not_ok "$label: lib/r2r reads $dll" "$(cat "$TEST_TMP/$label.err")"
		return
	fi
	ok "$label: lib/r2r reads $dll"
	if [ ! -s "$map" ]; then
		not_ok "$label: crossgen2 wrote a map of $dll" "no $map"
		return
	fi
	python3 "$top_srcdir/tests/dotnet/r2r-map-check.py" "$TEST_TMP/$label.dump" "$map" >"$TEST_TMP/$label.check" 2>&1
	read -r _ methods _ table _ rva _ length _ shorter _ name < <(head -n1 "$TEST_TMP/$label.check")
	if [ "${methods:-0}" -ge "$min" ]; then
		ok "$label: crossgen2 compiled $methods methods of $dll"
	else
		not_ok "$label: crossgen2 compiled at least $min methods of $dll" "$(head -n 30 "$TEST_TMP/$label.check")"
	fi
	check_eq "$label: the table has as many methods as the map" "$methods" "${table:-?}"
	check_eq "$label: each is at the map's RVA" "$methods" "${rva:-?}"
	check_eq "$label: each under the map's name" "$methods" "${name:-?}"
	if [ "$rid" = linux-x64 ]; then
		check_eq "$label: each with the map's length" "$methods" "${length:-?}"
	else
		# The map's length also holds the read-only data (jump tables,
		# constants) crossgen2 appends to arm64 code; the code's own is
		# the unwind data's.  Measured: 3911 of 4054 Newtonsoft.Json
		# methods without such data, the other 143 shorter by it.
		check_eq "$label: each with the map's length, or its code's without the data after it" \
			"$methods" "$((${length:-0} + ${shorter:-0}))"
		if [ $((${length:-0} * 100)) -ge $((methods * 90)) ]; then
			ok "$label: $length of $methods lengths are the map's exactly"
		else
			not_ok "$label: at least 90% of the lengths are the map's exactly" "$(head -n 30 "$TEST_TMP/$label.check")"
		fi
	fi
}

dotnet_publish r2rmap arm64 -r linux-arm64 --self-contained false -p:PublishReadyToRun=true
check_eq "the published Newtonsoft.Json.dll is arm64 code for Linux" 0xd11d \
	"$(pe_machine "$DOTNET_PUBLISHED/Newtonsoft.Json.dll")"
check_map arm64-json linux-arm64 Newtonsoft.Json.dll 2000
check_map arm64-app linux-arm64 R2rMap.dll 5
# Whole names as the runtime writes them in a jitdump, and generic
# instantiations (InstanceMethodEntryPoints) among the names.
check_grep "arm64: a method of Newtonsoft.Json by its whole name" \
	'	instance void \[Newtonsoft\.Json\] Newtonsoft\.Json\.JsonTextWriter::WriteStartObject\(\)$' \
	"$TEST_TMP/arm64-json.dump"
check_grep "arm64: a generic instantiation's method" \
	' Newtonsoft\.Json\.Utilities\.ThreadSafeStore`2\[[^	]*System\.__Canon\]::' "$TEST_TMP/arm64-json.dump"

# The same two assemblies as one composite image (R2rMap.r2r.dll, no
# metadata of its own): named from its components beside it.
dotnet_publish r2rmap arm64-composite -r linux-arm64 --self-contained false -p:PublishReadyToRun=true \
	-p:PublishReadyToRunComposite=true
check_eq "the composite image is arm64 code for Linux" 0xd11d "$(pe_machine "$DOTNET_PUBLISHED/R2rMap.r2r.dll")"
check_map arm64-composite linux-arm64 R2rMap.r2r.dll 2000

dotnet_publish r2rmap x64 -r linux-x64 --self-contained false -p:PublishReadyToRun=true
check_eq "the published Newtonsoft.Json.dll is x64 code for Linux" 0xfd1d \
	"$(pe_machine "$DOTNET_PUBLISHED/Newtonsoft.Json.dll")"
check_map x64-json linux-x64 Newtonsoft.Json.dll 2000

# lib/r2r's composite cases (tests/lib/test_r2r), on the arm64 composite
# published above, hostile components included: the unit test itself ran
# before this script in the suite and skipped them.
R2R_TEST_APPS="$DOTNET_CACHE/apps" check_unit_cases "test_r2r on the published composite" \
	"$top_builddir/tests/lib/test_r2r" a_composite_image_is_named_from_its_components \
	hostile_composites_and_components_are_refused_cleanly
done_testing

#!/usr/bin/env bash
# Writes the index of the backends tracerig ships (core/session/backends.inc,
# built into the core): one "{ NAME, PACKAGE }," a line, read from the descriptor
# (`TRACERIG_PLUGIN = { ... }`) of each in-tree plugin, so the name and the
# package a missing backend's hint gives are the ones its descriptor says,
# written once.  scripts/backends-index.sh OUT plugins/*/plugin.c
set -euo pipefail
out=$1; shift
tmp=$out.tmp
: >"$tmp"
for src in "$@"; do
	# The descriptor's `.name = "x",` and `.package = "y",` lines.
	entry=$(awk '
		function quoted(s) { sub(/^[^"]*"/, "", s); sub(/".*$/, "", s); return s }
		/^TRACERIG_PLUGIN[ \t]*=[ \t]*\{/ { in_desc = 1; next }
		in_desc && /^\}/ { in_desc = 0 }
		in_desc && /^[ \t]*\.name[ \t]*=[ \t]*"[a-z0-9_]+"/ { name = quoted($0) }
		in_desc && /^[ \t]*\.package[ \t]*=[ \t]*"[a-z0-9.+-]+"/ { pkg = quoted($0) }
		END { if (name != "" && pkg != "") printf "\t{ \"%s\", \"%s\" },\n", name, pkg }
	' "$src")
	if [ -z "$entry" ]; then
		echo "$src: no descriptor with a .name and a .package (TRACERIG_PLUGIN = { ... })" >&2
		rm -f "$tmp"
		exit 1
	fi
	printf '%s\n' "$entry" >>"$tmp"
done
sort -o "$tmp" "$tmp"
mv "$tmp" "$out"

#!/usr/bin/env bash
# What configure left out of a build tree, for scripts/test.sh:
#   scripts/backends-check.sh BUILD_DIR
# A backend configure did not build drops its tests from `make check`
# without a word.  For each such backend this prints one line per dropped
# test,
#   SKIP <test> backend <name> not built: <why>
# and, when this machine could have built it (its build packages, from
# scripts/deps.sh --backend-packages, are installed, and for ebpf a
# readable BTF file) although nobody passed --disable-<name>, one line
#   FAIL backend <name> ...
# configure records each backend's fate in config.log
# ("tracerig-backend: NAME yes|no WHY", see TR_BACKEND in configure.ac).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$(cd "$1" && pwd)

[ -r "$dir/config.log" ] || { echo "FAIL $dir has no config.log: not configured"; exit 0; }
# The last record of each backend (configure may have run more than once).
mapfile -t records < <(sed -n 's/^tracerig-backend: //p' "$dir/config.log" |
	awk '{ last[$1] = $0; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
	     END { for (i = 0; i < n; i++) print last[order[i]] }')
if [ ${#records[@]} -eq 0 ]; then
	echo "FAIL $dir/config.log records no backend (no 'tracerig-backend:' line): configure.ac's TR_BACKEND changed?"
	exit 0
fi

printer=$(mktemp "${TMPDIR:-/tmp}/tracerig-printer.XXXXXX")
trap 'rm -f "$printer"' EXIT
printf 'tr-print-tests:\n\t@printf "%%s\\n" $(TESTS)\n' >"$printer"
# tests_with [NAME...]: `make check`'s TESTS in this tree, as configured but
# with the named backends' conditionals (BUILD_PLUGIN_<NAME>) turned on.
tests_with() {
	local sed_args=(-e '') b up
	for b in "$@"; do
		up=BUILD_PLUGIN_$(printf '%s' "$b" | tr '[:lower:]' '[:upper:]')
		sed_args+=(-e "s/@${up}_TRUE@//g" -e "s/@${up}_FALSE@/#/g")
	done
	sed "${sed_args[@]}" "$top/Makefile.in" |
		(cd "$dir" && ./config.status -q --file=-:-) |
		grep -v 'am--include-marker' |
		(cd "$dir" && make -s --no-print-directory -f - -f "$printer" tr-print-tests) | sort -u
}

built=$(tests_with)
[ -n "$built" ] || { echo "FAIL cannot list the tests of $dir (config.status, make)"; exit 0; }
for r in "${records[@]}"; do
	read -r name state why <<<"$r"
	[ "$state" = yes ] && continue
	why=${why:-no reason recorded}
	comm -13 <(printf '%s\n' "$built") <(tests_with "$name") |
		sed "s|^|SKIP |; s|\$| backend $name not built: $why|"
	case "$why" in --disable-*) continue ;; esac
	# Could this machine have built it?
	pkgs=$(bash "$top/scripts/deps.sh" --backend-packages "$name" 2>/dev/null) || {
		echo "FAIL backend $name: configure left it out ($why) and scripts/deps.sh does not know its packages"
		continue
	}
	absent=""
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || absent="$absent $p"
	done
	[ -z "$absent" ] || continue
	if [ "$name" = ebpf ]; then
		btf=$(sed -n "s/^VMLINUX_BTF='\(.*\)'\$/\1/p" "$dir/config.log" | tail -1)
		btf=${btf:-/sys/kernel/btf/vmlinux}
		[ -r "$btf" ] || continue
	fi
	echo "FAIL backend $name: its build packages ($pkgs) are installed, yet configure left it out: $why (see $dir/config.log)"
done

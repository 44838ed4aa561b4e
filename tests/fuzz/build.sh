#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang: tests/fuzz/build.sh BUILDDIR
# (a configured and built tree).  Binaries land in BUILDDIR/tests/fuzz/bin.
# Exits 77 with the reason on stderr when clang or its libFuzzer runtime is
# missing, 1 when the build fails.
#
# Everything comes from BUILDDIR/tests/fuzz/build.env, written by make from
# the very lists and flags tracerig is built from: the core's sources (but
# main.c; libFuzzer has the main) and mapharvest's are compiled with
# coverage and sanitizers into static archives, so each harness pulls in
# only what it uses.
set -euo pipefail
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=$(cd "$1" && pwd)
cc=${FUZZ_CC:-clang}
out=$builddir/tests/fuzz
env=$out/build.env

command -v "$cc" >/dev/null || { echo "no $cc (apt-get install clang)" >&2; exit 77; }
[ -r "$env" ] || { echo "no $env: run make check in $builddir first" >&2; exit 1; }
# Raw lines: the flags hold quotes for the compiler's command line.
while IFS= read -r line; do
	case $line in
	targets=*) targets=${line#*=} ;;
	core_sources=*) core_sources=${line#*=} ;;
	mapharvest_sources=*) mapharvest_sources=${line#*=} ;;
	libtrutil_sources=*) libtrutil_sources=${line#*=} ;;
	cppflags=*) cppflags=${line#*=} ;;
	libs=*) libs=${line#*=} ;;
	esac
done <"$env"

san="-fsanitize=address,undefined -fno-sanitize-recover=all"
cflags="-g -O1 -fno-omit-frame-pointer -pthread $san"
mkdir -p "$out/obj" "$out/bin"
cd "$builddir"

probe=$out/obj/probe
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
	>"$probe.c"
if ! "$cc" $cflags -fsanitize=fuzzer "$probe.c" -o "$probe" 2>"$probe.log"; then
	echo "$cc cannot link libFuzzer ($(head -n1 "$probe.log"); apt-get install libclang-rt-14-dev)" >&2
	exit 77
fi

# The flags as the shell would split and unquote them in make's recipe.
eval "cpp=($cppflags -I$top_srcdir)"
eval "link_libs=($libs)"

# Objects are rebuilt when any source or header of the tree is newer.
newest=$(find "$top_srcdir/core" "$top_srcdir/include" "$top_srcdir/plugins/mapharvest" \
	"$top_srcdir/tests/fuzz" $( [ -d "$top_srcdir/lib" ] && echo "$top_srcdir/lib") \
	"$builddir/config.h" "$env" -newer "$out/obj/stamp" -print -quit 2>/dev/null || echo all)
[ -e "$out/obj/stamp" ] || newest=all

compile() { # SOURCE OBJECT [extra flags]
	local src=$1 obj=$2; shift 2
	mkdir -p "$(dirname "$obj")"
	"$cc" $cflags -fsanitize=fuzzer-no-link "${cpp[@]}" "$@" -c "$src" -o "$obj"
}
archive() { # NAME SOURCES...
	local name=$1 objs=() pids=() src obj; shift
	for src in "$@"; do
		obj=$out/obj/${src%.c}.o
		objs+=("$obj")
		if [ -n "$newest" ] || [ ! -e "$obj" ]; then
			# Two at a time, oldest first: the machine is shared.
			if [ ${#pids[@]} -ge 2 ]; then
				wait "${pids[0]}"
				pids=("${pids[@]:1}")
			fi
			compile "$top_srcdir/$src" "$obj" -w &
			pids+=($!)
		fi
	done
	for pid in "${pids[@]}"; do wait "$pid"; done
	rm -f "$out/obj/lib$name.a"
	ar rcs "$out/obj/lib$name.a" "${objs[@]}"
}

# shellcheck disable=SC2086
archive trcore $core_sources
# shellcheck disable=SC2086
[ -z "${libtrutil_sources:-}" ] || archive trutil $libtrutil_sources
# A libtool convenience library in the program's LDADD: compiled above for
# the fuzzers, else the build's own static archive (no coverage inside).
for i in "${!link_libs[@]}"; do
	case ${link_libs[$i]} in
	*.la) la=${link_libs[$i]} base=$(basename "${la%.la}")
	      if [ -e "$out/obj/$base.a" ]; then
		      link_libs[$i]=$out/obj/$base.a
	      else
		      link_libs[$i]=$(dirname "$la")/.libs/$base.a
	      fi ;;
	esac
done
# shellcheck disable=SC2086
[ -z "$mapharvest_sources" ] || archive mapharvest $mapharvest_sources
for t in $targets; do
	case $t in
	mapharvest) [ -n "$mapharvest_sources" ] || continue; lib=$out/obj/libmapharvest.a ;;
	*) lib= ;;
	esac
	compile "$top_srcdir/tests/fuzz/fuzz_$t.c" "$out/obj/fuzz_$t.o" -Wall -Wextra
	# shellcheck disable=SC2086
	"$cc" $cflags -fsanitize=fuzzer "$out/obj/fuzz_$t.o" $lib \
		"${link_libs[@]}" -o "$out/bin/fuzz_$t"
done
touch "$out/obj/stamp"

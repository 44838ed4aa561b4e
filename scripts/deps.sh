#!/usr/bin/env bash
# Installs the Debian 12 packages tracerig builds, runs and tests with.
# Idempotent: installs only what is missing.  Needs root.
#
#   scripts/deps.sh --build   building every backend and running the main job
#                             (what scripts/quickstart.sh needs)
#   scripts/deps.sh --test    that, plus the test suite's tools (scripts/test.sh)
#   scripts/deps.sh           the same as --test
#   scripts/deps.sh --backend-packages NAME
#                             prints the packages backend NAME is built with
#                             (scripts/test.sh: was a buildable backend left out?)
set -euo pipefail

# ---- build: the core and the program's run time
build_packages=(
	build-essential autoconf automake libtool pkg-config
	# core: plugin loading, profiles, ELF symbols, C++ demangling
	libltdl-dev libinih-dev libelf-dev libiberty-dev
	# core: pprof profiles (the vendored profile.proto through protoc-c; gzip)
	libprotobuf-c-dev protobuf-c-compiler zlib1g-dev
	# core and zip packager: ISA-L's fast deflate for the large entries
	libisal-dev
	# quickstart lists the archive it made
	unzip
)
# ---- build: each backend's own dependencies (configure builds a backend
# when they are all present).  clang compiles the BPF program
# (-target bpf -c: it needs neither llvm nor libclang-rt-14-dev).
declare -A backend_packages=(
	[perf_events]="linux-libc-dev libtraceevent-dev libdw-dev"
	[lttng]="liblttng-ctl-dev"
	[ebpf]="libbpf-dev bpftool clang"
	[mapharvest]="linux-libc-dev"
	[eventpipe]="linux-libc-dev"
	[zip]="libzip-dev"
)
# ---- tests: what the suite runs, compares with and inspects
test_packages=(
	# tests: archive inspection, the tools we compare with, workloads
	zip unzip babeltrace2 linux-perf libbpf-tools nodejs time util-linux procps
	wrk
	# lttng tests: the session daemon, and an application with UST tracepoints
	lttng-tools liblttng-ust-dev
	# tests: Google's pprof, built offline from Debian's Go sources
	golang-go golang-github-google-pprof-dev
	# tests/clients: the archive's files opened in viewers in headless Chromium
	chromium fonts-dejavu-core
	# packaging: the .debs (tests/packaging/debs.sh builds, lints and installs
	# them in a Debian 12 root), the RPM spec
	dpkg-dev debhelper fakeroot lintian mmdebstrap rpm
	# fuzz tests: clang's libFuzzer and sanitizer runtimes (only recommended
	# by clang); llvm's tools (llvm-symbolizer) for their reports
	libclang-rt-14-dev llvm
	# tests/core/format.sh, tidy.sh: the lines a change makes, as
	# clang-format has them and clang-tidy finds nothing in them (with the
	# compile commands bear records)
	clang-format clang-tidy bear git
)

usage() {
	echo "usage: $0 [--build | --test | --backend-packages NAME | --backends]" >&2
	exit 2
}

mode=test
case "${1:-}" in
"" | --test | --all) mode=test ;;
--build) mode=build ;;
--backends)
	printf '%s\n' "${!backend_packages[@]}" | sort
	exit 0
	;;
--backend-packages)
	[ -n "${2:-}" ] || usage
	if [ -z "${backend_packages[$2]+set}" ]; then
		echo "deps: no backend '$2' (known: $(printf '%s\n' "${!backend_packages[@]}" | sort | tr '\n' ' '))" >&2
		exit 2
	fi
	echo "${backend_packages[$2]}"
	exit 0
	;;
*) usage ;;
esac

packages=("${build_packages[@]}")
for b in "${!backend_packages[@]}"; do
	# shellcheck disable=SC2206
	packages+=(${backend_packages[$b]})
done
[ "$mode" = test ] && packages+=("${test_packages[@]}")
# One of each, in a stable order.
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps ($mode): all ${#packages[@]} packages present"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps ($mode): missing ${missing[*]}; run this script as root (or apt-get install them)" >&2
	exit 1
fi
echo "deps ($mode): installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

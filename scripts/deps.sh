#!/usr/bin/env bash
# Installs the Debian 12 packages tracerig builds, tests and benchmarks with.
# Idempotent: installs only what is missing.  Needs root.
set -euo pipefail

packages=(
	# build
	build-essential autoconf automake libtool pkg-config
	# core: plugin loading, profiles, ELF symbols, C++ demangling
	libltdl-dev libinih-dev libelf-dev libiberty-dev
	# core: pprof profiles (the vendored profile.proto through protoc-c; gzip)
	libprotobuf-c-dev protobuf-c-compiler zlib1g-dev
	# core and zip packager: ISA-L's fast deflate for the large entries
	libisal-dev
	# backends
	libzip-dev linux-libc-dev libtraceevent-dev libdw-dev
	liblttng-ctl-dev liblttng-ust-dev lttng-tools
	libbpf-dev bpftool clang llvm
	# tests: archive inspection, the tools we compare with, workloads
	zip unzip babeltrace2 linux-perf libbpf-tools nodejs time util-linux procps
	wrk
	# tests: Google's pprof, built offline from Debian's Go sources
	golang-go golang-github-google-pprof-dev
	# tests/clients: the archive's files opened in viewers in headless Chromium
	chromium fonts-dejavu-core
	# packaging: the .debs (tests/packaging/debs.sh builds, lints and installs
	# them in a Debian 12 root), the RPM spec
	dpkg-dev debhelper fakeroot lintian mmdebstrap rpm
	# fuzz tests: clang's libFuzzer and sanitizer runtimes (only recommended by clang)
	libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#packages[@]} packages present"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing ${missing[*]}; run this script as root (or apt-get install them)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/usr/bin/env bash
# The Debian packages, built and used as a split install would use them:
# packaging/build-debs.sh builds them from a clean copy of the tree, lintian
# checks them, and a minimal Debian 12 root (mmdebstrap) that holds only
# tracerig and tracerig-perf-events runs the cpu profile, names the package
# of each backend a profile lacks, and then, with tracerig-dev added, builds
# the example plugin against the installed header and runs it.
#
# Cached in the build directory (tests/packaging/cache/): the packages, keyed
# by the tree's content, and the archive's .debs the roots are made of, so a
# second run neither rebuilds nor downloads what it has.
. "$top_srcdir/tests/lib.sh"
export TMPDIR="$TEST_TMP"

need_root
. "$top_srcdir/tests/packaging/lib-packaging.sh"
for tool in dpkg-buildpackage dh dh_autoreconf lintian mmdebstrap unshare chroot unzip; do
	command -v "$tool" >/dev/null 2>&1 || skip_all "needs $tool (scripts/deps.sh installs it)"
done
if ! missing=$(dpkg-checkbuilddeps "$top_srcdir/packaging/debian/control" 2>&1); then
	skip_all "build dependencies missing: ${missing##*:}"
fi

# The root lives outside /tmp: other tests mount a private /tmp.
root=$top_builddir/tests/packaging/root
mkdir -p "$cache/apt"

# Every mount of the root is made in a mount namespace of its own, so none
# outlives the command, and removing the root cannot reach the host's /dev.
# The environment is the root's own, not the suite's (TMPDIR,
# TRACERIG_PLUGIN_PATH).
in_root() {
	unshare -m --propagation private sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" &&
		mount --rbind /dev "$r/dev" &&
		exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
			chroot "$r" "$@"' in_root "$root" "$@"
}
remove_root() { [ ! -e "$root" ] || rm -rf --one-file-system "$root"; }
on_exit remove_root

# ---- the packages, from a clean copy of the tree
if built_packages debs build-debs.sh; then
	ok "packaging/build-debs.sh builds the packages from a clean copy of the tree"
else
	not_ok "packaging/build-debs.sh builds the packages from a clean copy of the tree" \
		"$(tail -40 "$TEST_TMP/debs.log")"
	done_testing
	exit
fi
debs=$pkgdir
arch=$(dpkg --print-architecture)
for p in tracerig tracerig-perf-events tracerig-ebpf tracerig-lttng tracerig-mapharvest tracerig-eventpipe tracerig-dev; do
	check "$p ${version}-1 (configure.ac's version) is built" test -f "$debs/${p}_${version}-1_$arch.deb"
done
deb() { echo "$debs/${1}_${version}-1_$arch.deb"; }

# Which plugin lands in which package, and nothing of a backend in the core.
contents() { dpkg-deb -c "$(deb "$1")" | awk '{print $6}' | sed 's,^\./,/,' | grep -v '/$'; }
plugindir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/tracerig
check_eq "tracerig ships the zip packager and no backend" "$plugindir/zip.so" \
	"$(contents tracerig | grep "^$plugindir/")"
for b in perf_events ebpf lttng mapharvest eventpipe; do
	check_eq "tracerig-${b/_/-} ships $b.so and nothing else of plugindir" "$plugindir/$b.so" \
		"$(contents "tracerig-${b/_/-}" | grep -v '^/usr/share/doc/' | grep -v '^/usr/share/lintian/')"
done
check "tracerig ships the binary, tracerig.conf, every profile and both man pages" bash -c '
	c=$(dpkg-deb -c "$1" | awk "{print \$6}")
	for f in usr/bin/tracerig etc/tracerig/tracerig.conf usr/share/man/man1/tracerig.1.gz \
		usr/share/man/man5/tracerig.ini.5.gz; do grep -qx "./$f" <<<"$c" || { echo "no $f"; exit 1; }; done
	for p in "$2"/conf/profiles/*.ini; do
		grep -qx "./etc/tracerig/profiles/${p##*/}" <<<"$c" || { echo "no ${p##*/}"; exit 1; }
	done' _ "$(deb tracerig)" "$top_srcdir"
check "tracerig-dev ships plugin.h, tracerig-plugin.pc, the guide and the example" bash -c '
	c=$(dpkg-deb -c "$1" | awk "{print \$6}")
	for f in usr/include/tracerig/plugin.h "usr/lib/$2/pkgconfig/tracerig-plugin.pc" \
		usr/share/doc/tracerig-dev/writing-a-plugin.md.gz usr/share/doc/tracerig-dev/examples/loadavg.c \
		usr/share/doc/tracerig-dev/examples/Makefile; do
		grep -qx "./$f" <<<"$c" || { echo "no $f"; exit 1; }; done' _ "$(deb tracerig-dev)" \
	"$(dpkg-architecture -qDEB_HOST_MULTIARCH)"
check "tracerig.conf is a conffile" bash -c "dpkg-deb -I '$(deb tracerig)' conffiles | grep -qx /etc/tracerig/tracerig.conf"
check_eq "tracerig-lttng recommends lttng-tools" "lttng-tools" \
	"$(dpkg-deb -f "$(deb tracerig-lttng)" Recommends)"
# The service (conf/systemd/tracerig@.service.in) with the package's paths.
dpkg-deb --fsys-tarfile "$(deb tracerig)" | tar -xO ./lib/systemd/system/tracerig@.service \
	>"$TEST_TMP/unit" 2>/dev/null
check_grep "tracerig ships /lib/systemd/system/tracerig@.service, running /usr/bin/tracerig start --foreground" \
	'^ExecStart=/usr/bin/tracerig start --foreground ' "$TEST_TMP/unit"
check_grep "the unit runs /etc/tracerig/profiles/INSTANCE.ini" '-c /etc/tracerig/profiles/%i\.ini' "$TEST_TMP/unit"

# lintian at its default level: no error and no warning (overrides, each
# with its reason, are in packaging/debian/*.lintian-overrides).
rc=0
lintian --fail-on error,warning "$debs/tracerig_${version}-1_$arch.changes" >"$TEST_TMP/lintian" 2>&1 || rc=$?
check_eq "lintian: no errors or warnings (default level)" "0" "$rc$(grep -E '^[EW]: ' "$TEST_TMP/lintian" | head -20 | sed 's/^/ /')"

# ---- a Debian 12 root holding tracerig and tracerig-perf-events only
remove_root
# The archive's packages come from and go back to the cache; the lists stay
# in the root for the apt-get install of tracerig-dev later.  apt runs dpkg
# in the root, so the local packages are copied into it (/debs) and
# installed by apt-get there (mmdebstrap's --include hands apt paths that
# dpkg, chrooted, cannot see).
rc=0
mmdebstrap --mode=root --variant=apt --skip=cleanup/apt,essential/unlink \
	--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
	--setup-hook="sync-in '$cache/apt' /var/cache/apt/archives/" \
	--setup-hook="mkdir -p \"\$1/debs\" && cp '$(deb tracerig)' '$(deb tracerig-perf-events)' \"\$1/debs/\"" \
	--customize-hook="chroot \"\$1\" apt-get install -y -q --no-install-recommends \
		/debs/tracerig_${version}-1_$arch.deb /debs/tracerig-perf-events_${version}-1_$arch.deb" \
	bookworm "$root.new" >"$TEST_TMP/mmdebstrap.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
	rm -rf --one-file-system "$root.new"
	if grep -Eq 'Failed to fetch|Temporary failure resolving|Could not (resolve|connect)|Unable to connect|Network is unreachable|Release file .* is not available' \
		"$TEST_TMP/mmdebstrap.log"; then
		skip "mmdebstrap makes a Debian 12 root with tracerig and tracerig-perf-events" \
			"mmdebstrap cannot reach the Debian archive ($(grep -Em1 'Failed|failure|Could not|Unable|unreachable|not available' "$TEST_TMP/mmdebstrap.log"))"
		done_testing
		exit
	fi
	not_ok "mmdebstrap makes a Debian 12 root with tracerig and tracerig-perf-events" \
		"$(tail -30 "$TEST_TMP/mmdebstrap.log")"
	done_testing
	exit
fi
remove_root
mv "$root.new" "$root"
ok "mmdebstrap makes a Debian 12 root with tracerig and tracerig-perf-events"
cp -a "$root/var/cache/apt/archives/." "$cache/apt/"
cp "$(deb tracerig-dev)" "$root/debs/"
rm -f "$cache/apt/"tracerig*.deb

installed() { in_root dpkg-query -W -f '${db:Status-Status}' "$1" 2>/dev/null | grep -qx installed; }
check "tracerig is installed" installed tracerig
check "tracerig-perf-events is installed" installed tracerig-perf-events
for p in tracerig-ebpf tracerig-lttng tracerig-mapharvest tracerig-eventpipe tracerig-dev liblttng-ctl0 libbpf1; do
	if installed "$p"; then not_ok "$p is not installed"; else ok "$p is not installed"; fi
done
depends=$(in_root dpkg-query -W -f '${Depends}' tracerig)
check "dpkg -s tracerig: depends on libltdl, inih, libzip, libelf, libprotobuf-c and ISA-L" \
	bash -c 'for l in libltdl7 libinih1 libzip4 libelf1 libprotobuf-c1 libisal2; do grep -q "$l" <<<"$1" || { echo "no $l in: $1"; exit 1; }; done' _ "$depends"
if grep -Eq 'lttng|libbpf|traceevent|tracerig-' <<<"$depends"; then
	not_ok "dpkg -s tracerig: depends on none of the backends' libraries" "Depends: $depends"
else
	ok "dpkg -s tracerig: depends on none of the backends' libraries"
fi
in_root ldd /usr/bin/tracerig >"$TEST_TMP/ldd" 2>&1
check_grep "ldd tracerig: the core's libraries resolve" 'libzip\.so\.[0-9]+ => /' "$TEST_TMP/ldd"
check_no_grep "ldd tracerig: no liblttng-ctl, libbpf or libtraceevent" 'lttng|libbpf|traceevent|not found' "$TEST_TMP/ldd"

# ---- the cpu profile, as shipped, with mapharvest (optional there) absent
rc=0
in_root tracerig -c profiles/cpu.ini -d 1 -o /root/cpu.trace.zip -- /bin/true \
	>"$TEST_TMP/cpu.out" 2>&1 || rc=$?
check_eq "tracerig -c profiles/cpu.ini -d 1 -- /bin/true exits 0" 0 "$rc"
check_eq "the absent optional mapharvest: one warning about it" 1 "$(grep -c 'mapharvest' "$TEST_TMP/cpu.out")"
check_grep "the warning names the package that provides it" \
	'\[mapharvest\] is not installed; going on without it .*apt install tracerig-mapharvest' \
	"$TEST_TMP/cpu.out"
unzip_archive "$root/root/cpu.trace.zip" "$TEST_TMP/cpu"
check "the archive holds perf.data.txt" test -f "$TEST_TMP/cpu/perf.data.txt"
check "the archive holds perf.data" test -s "$TEST_TMP/cpu/perf.data"
check "manifest.json: perf_events ok, loaded from the installed plugindir" \
	python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))
p = {p["name"]: p for p in m["plugins"]}
assert sorted(p) == ["perf_events", "zip"], sorted(p)
assert p["perf_events"]["status"] == "ok", p["perf_events"]
assert p["perf_events"]["file"] == sys.argv[2] + "/perf_events.so", p["perf_events"]["file"]' \
	"$TEST_TMP/cpu/manifest.json" "$plugindir"

# ---- the unit's command line, as installed, for tracerig@cpu: checked on
# the fresh install (the package ships /var/lib/tracerig; the service has
# not run to make it)
check_eq "the package ships /var/lib/tracerig, mode 0700, root's" "700 root" \
	"$(stat -c '%a %U' "$root/var/lib/tracerig" 2>&1)"
rc=0
in_root tracerig start --foreground \
	--name cpu -c /etc/tracerig/profiles/cpu.ini --set tracerig.mode=flight \
	-o /var/lib/tracerig --check >"$TEST_TMP/unitcheck.out" 2>&1 || rc=$?
check_eq "tracerig@cpu.service's command line, with --check, exits 0 in the root" 0 \
	"$rc$([ "$rc" = 0 ] || head -5 "$TEST_TMP/unitcheck.out" | sed 's/^/ /')"

# ---- --check names the package of each backend the profile lacks
rc=0
in_root tracerig --check -c profiles/dotnet.ini >"$TEST_TMP/check.out" 2>&1 || rc=$?
check_eq "--check -c profiles/dotnet.ini exits 0 (lttng and mapharvest are optional there)" 0 "$rc"
check_grep "--check lists perf_events as installed" '^  perf_events +[^ ]+ +required +usable' "$TEST_TMP/check.out"
check_grep "--check names tracerig-lttng for the missing lttng" \
	'^  lttng +- +optional +NOT INSTALLED: apt install tracerig-lttng$' "$TEST_TMP/check.out"
check_grep "--check names tracerig-mapharvest for the missing mapharvest" \
	'^  mapharvest +- +optional +NOT INSTALLED: apt install tracerig-mapharvest$' "$TEST_TMP/check.out"
check_grep "--check names tracerig-eventpipe for the missing eventpipe" \
	'^  eventpipe +- +optional +NOT INSTALLED: apt install tracerig-eventpipe$' "$TEST_TMP/check.out"

# A required backend that is absent is an error, exit 2, with the package.
rc=0
in_root tracerig -c profiles/offcpu.ini -d 1 -o /root/off.trace.zip >"$TEST_TMP/off.out" 2>&1 || rc=$?
check_eq "profiles/offcpu.ini (requires ebpf) exits 2" 2 "$rc"
check_grep "the error says the profile requires ebpf and names tracerig-ebpf" \
	'\[ebpf\] plugin .ebpf. is not installed .*the profile requires it: install it with `apt install tracerig-ebpf`' \
	"$TEST_TMP/off.out"
check "nothing was written" test ! -e "$root/root/off.trace.zip"

# ---- tracerig-dev: the example plugin, built in the root against the
# installed header with pkg-config, installed into plugindir and run
rc=0
in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	/debs/tracerig-dev_*.deb gcc libc6-dev make pkgconf' >"$TEST_TMP/dev.log" 2>&1 || rc=$?
cp -a "$root/var/cache/apt/archives/." "$cache/apt/" 2>/dev/null
rm -f "$cache/apt/"tracerig*.deb
if [ "$rc" -ne 0 ] && grep -Eq 'Failed to fetch|Temporary failure resolving|Could not (resolve|connect)' "$TEST_TMP/dev.log"; then
	skip "tracerig-dev and a compiler are installed in the root" "cannot reach the Debian archive"
	done_testing
	exit
fi
check_eq "apt-get installs tracerig-dev, gcc, make, pkgconf in the root" "0" "$rc$(grep -E '^E:' "$TEST_TMP/dev.log" | sed 's/^/ /')"
check_eq "pkg-config --variable=plugindir tracerig-plugin is the packages' plugindir" "$plugindir" \
	"$(in_root pkg-config --variable=plugindir tracerig-plugin)"
check_eq "pkg-config --modversion tracerig-plugin is the packages' version" "$version" \
	"$(in_root pkg-config --modversion tracerig-plugin)"
check_eq "pkg-config --cflags tracerig-plugin works (the header is in /usr/include)" "0" \
	"$(in_root pkg-config --cflags tracerig-plugin >/dev/null 2>&1; echo $?)"
rc=0
in_root sh -c 'mkdir -p /root/ex && cd /root/ex &&
	make -f /usr/share/doc/tracerig-dev/examples/Makefile srcdir=/usr/share/doc/tracerig-dev/examples \
		CFLAGS="-O2 -Wall -Wextra -Werror" install' >"$TEST_TMP/make.log" 2>&1 || rc=$?
check_eq "the example's Makefile builds loadavg.so warning-free and installs it" 0 "$rc"
check "loadavg.so is in plugindir" test -f "$root$plugindir/loadavg.so"
in_root tracerig --list-plugins >"$TEST_TMP/list.out" 2>&1
check_grep "--list-plugins lists loadavg" '^  loadavg +1\.0 +source ' "$TEST_TMP/list.out"
printf '[tracerig]\nname = ex\n[loadavg]\ninterval = 100ms\n' >"$root/root/ex.ini"
rc=0
in_root tracerig -c /root/ex.ini -d 1 -o /root/ex.trace.zip >"$TEST_TMP/ex.out" 2>&1 || rc=$?
check_eq "a session with the example plugin exits 0" 0 "$rc"
unzip_archive "$root/root/ex.trace.zip" "$TEST_TMP/ex"
check "its archive holds loadavg.csv with samples" \
	test "$(grep -c '^[0-9]' "$TEST_TMP/ex/loadavg.csv" 2>/dev/null || echo 0)" -ge 2

done_testing

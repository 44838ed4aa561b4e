#!/usr/bin/env bash
# The RPM spec builds here (rpmbuild -bb --nodeps: the build dependencies
# are Debian's) into the same split as the Debian packages: the core with
# the zip packager, one package per backend requiring only its own
# libraries, -devel with the header, the .pc and the example.
. "$top_srcdir/tests/lib.sh"
export TMPDIR="$TEST_TMP"

. "$top_srcdir/tests/packaging/lib-packaging.sh"
command -v rpmbuild >/dev/null 2>&1 || skip_all "needs rpmbuild (scripts/deps.sh installs rpm)"
for tool in autoreconf clang bpftool pkg-config; do
	command -v "$tool" >/dev/null 2>&1 || skip_all "needs $tool to build every backend"
done

if built_packages rpms build-rpms.sh --nodeps; then
	ok "packaging/build-rpms.sh OUTDIR --nodeps builds the spec from a clean copy of the tree"
else
	not_ok "packaging/build-rpms.sh OUTDIR --nodeps builds the spec from a clean copy of the tree" \
		"$(tail -40 "$TEST_TMP/rpms.log")"
	done_testing
	exit
fi
arch=$(uname -m)
rpm_of() { echo "$pkgdir/$1-$version-1.$arch.rpm"; }
for p in tracerig tracerig-perf-events tracerig-ebpf tracerig-lttng tracerig-mapharvest tracerig-eventpipe tracerig-devel; do
	check "$p-$version (configure.ac's version) is built" test -f "$(rpm_of "$p")"
done

files() { rpm -qpl "$(rpm_of "$1")" 2>/dev/null | grep -v '^/usr/lib/\.build-id'; }
plugindir=$(files tracerig | grep '/tracerig/zip\.so$' | sed 's,/zip\.so$,,')
check "tracerig ships the zip packager in a tracerig plugin directory" test -n "$plugindir"
check_eq "tracerig ships no backend" "$plugindir/zip.so" "$(files tracerig | grep "^$plugindir/")"
for b in perf_events ebpf lttng mapharvest eventpipe; do
	check_eq "tracerig-${b/_/-} ships $b.so and nothing else" "$plugindir/$b.so" \
		"$(files "tracerig-${b/_/-}")"
done
check "tracerig ships the binary, tracerig.conf (a config file) and every profile" bash -c '
	c=$(rpm -qpl "$1" 2>/dev/null)
	grep -qx /usr/bin/tracerig <<<"$c" || { echo "no binary"; exit 1; }
	rpm -qpc "$1" 2>/dev/null | grep -qx /etc/tracerig/tracerig.conf || { echo "tracerig.conf: no %config"; exit 1; }
	for p in "$2"/conf/profiles/*.ini; do
		grep -qx "/etc/tracerig/profiles/${p##*/}" <<<"$c" || { echo "no ${p##*/}"; exit 1; }
	done' _ "$(rpm_of tracerig)" "$top_srcdir"
check "tracerig ships tracerig@.service in the unit directory" bash -c \
	'rpm -qpl "$1" 2>/dev/null | grep -qx /usr/lib/systemd/system/tracerig@.service' _ "$(rpm_of tracerig)"
# rpm2archive (rpm >= 4.15) turns the payload into a tar: no cpio needed.
if command -v rpm2archive >/dev/null; then
	rpm2archive - <"$(rpm_of tracerig)" 2>/dev/null |
		tar -xzO ./usr/lib/systemd/system/tracerig@.service >"$TEST_TMP/unit" 2>/dev/null
	check_grep "the unit runs /usr/bin/tracerig start --foreground" \
		'^ExecStart=/usr/bin/tracerig start --foreground ' "$TEST_TMP/unit"
	check_grep "the unit runs /etc/tracerig/profiles/INSTANCE.ini" \
		'-c /etc/tracerig/profiles/%i\.ini' "$TEST_TMP/unit"
else
	skip "the unit runs /usr/bin/tracerig start --foreground" "needs rpm2archive"
fi
check "tracerig-devel ships plugin.h, tracerig-plugin.pc and the example" bash -c '
	c=$(rpm -qpl "$1" 2>/dev/null)
	for f in /usr/include/tracerig/plugin.h /tracerig-plugin.pc /example/loadavg.c /writing-a-plugin.md; do
		grep -q -- "$f\$" <<<"$c" || { echo "no $f"; exit 1; }; done' _ "$(rpm_of tracerig-devel)"

requires=$(rpm -qpR "$(rpm_of tracerig)" 2>/dev/null)
if grep -Eq 'lttng|libbpf|traceevent' <<<"$requires"; then
	not_ok "tracerig requires none of the backends' libraries" "$requires"
else
	ok "tracerig requires none of the backends' libraries"
fi
check_grep_s() { if grep -Eq -- "$2" <<<"$3"; then ok "$1"; else not_ok "$1" "no /$2/ in: $3"; fi; }
check_grep_s "tracerig ships /var/lib/tracerig, mode 0700 (the service's archives)" \
	'^drwx------ .* /var/lib/tracerig$' "$(rpm -qplv "$(rpm_of tracerig)" 2>/dev/null)"
check_grep_s "tracerig-perf-events requires libtraceevent" '^libtraceevent\.so' "$(rpm -qpR "$(rpm_of tracerig-perf-events)" 2>/dev/null)"
check_grep_s "tracerig-ebpf requires libbpf" '^libbpf\.so' "$(rpm -qpR "$(rpm_of tracerig-ebpf)" 2>/dev/null)"
check_grep_s "tracerig-lttng requires liblttng-ctl" '^liblttng-ctl\.so' "$(rpm -qpR "$(rpm_of tracerig-lttng)" 2>/dev/null)"
check_grep_s "tracerig-lttng recommends lttng-tools" '^lttng-tools' "$(rpm -qp --recommends "$(rpm_of tracerig-lttng)" 2>/dev/null)"
check_grep_s "each backend requires the same tracerig" "^tracerig\\(.*\\) = $version-1" \
	"$(rpm -qpR "$(rpm_of tracerig-mapharvest)" 2>/dev/null)"

done_testing

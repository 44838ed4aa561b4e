# mapharvest: JIT symbol maps from hosts and containers.
if BUILD_PLUGIN_MAPHARVEST
plugin_LTLIBRARIES += plugins/mapharvest/mapharvest.la
mapharvest_sources = \
	plugins/mapharvest/procinfo.c plugins/mapharvest/procinfo.h \
	plugins/mapharvest/copy.c plugins/mapharvest/copy.h \
	plugins/mapharvest/jitdump.c plugins/mapharvest/jitdump.h \
	plugins/mapharvest/harvest.c plugins/mapharvest/harvest.h \
	plugins/mapharvest/dotnet.c plugins/mapharvest/dotnet.h
plugins_mapharvest_mapharvest_la_SOURCES = plugins/mapharvest/plugin.c $(mapharvest_sources)
plugins_mapharvest_mapharvest_la_CFLAGS = $(AM_CFLAGS)
plugins_mapharvest_mapharvest_la_LIBADD = lib/libtrutil.la
plugins_mapharvest_mapharvest_la_LDFLAGS = $(plugin_ldflags)

# Unit tests: /proc parsing, runtime settings, hostile files, incremental copy.
check_PROGRAMS += tests/mapharvest/test_mapharvest
tests_mapharvest_test_mapharvest_SOURCES = tests/mapharvest/test_mapharvest.c $(mapharvest_sources)
tests_mapharvest_test_mapharvest_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/mapharvest
tests_mapharvest_test_mapharvest_LDADD = lib/libtrutil.la
TESTS += tests/mapharvest/test_mapharvest
UNIT_TESTS += tests/mapharvest/test_mapharvest

# Integration tests (root): Node.js in PID+mount namespaces, exits, attacks.
mapharvest_sh_tests = \
	tests/mapharvest/node.sh \
	tests/mapharvest/exited.sh \
	tests/mapharvest/hostile.sh \
	tests/mapharvest/mounts.sh \
	tests/mapharvest/shared.sh \
	tests/mapharvest/flight.sh
TESTS += $(mapharvest_sh_tests)
TESTS_ALONE += tests/mapharvest/perf-inject.sh
dist_check_SCRIPTS += $(mapharvest_sh_tests) tests/mapharvest/perf-inject.sh
dist_check_DATA += tests/mapharvest/lib-mapharvest.sh tests/mapharvest/hot.js
endif
EXTRA_DIST += bench/mapharvest/run.sh docs/kubernetes.md

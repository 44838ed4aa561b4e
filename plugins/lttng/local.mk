if BUILD_PLUGIN_LTTNG
plugin_LTLIBRARIES += plugins/lttng/lttng.la
plugins_lttng_lttng_la_SOURCES = \
	plugins/lttng/plugin.c \
	plugins/lttng/sessiond.c plugins/lttng/sessiond.h \
	plugins/lttng/presets.c plugins/lttng/presets.h \
	plugins/lttng/session.c plugins/lttng/session.h \
	plugins/lttng/targets.c plugins/lttng/targets.h \
	plugins/lttng/ctf.c plugins/lttng/ctf.h \
	plugins/lttng/dotnet.c plugins/lttng/dotnet.h \
	plugins/lttng/cleanup.c plugins/lttng/cleanup.h
plugins_lttng_lttng_la_CFLAGS = $(AM_CFLAGS) $(LTTNG_CTL_CFLAGS) $(LIBELF_CFLAGS)
plugins_lttng_lttng_la_LIBADD = lib/libtrelf.la lib/libtrutil.la $(LTTNG_CTL_LIBS) $(LIBELF_LIBS)
plugins_lttng_lttng_la_LDFLAGS = $(plugin_ldflags)
EXTRA_DIST += plugins/lttng/presets.md

# Unit test: the presets table against its documentation, list building,
# CTF metadata clock and event parsing, the .NET maps/environ parsers.
check_PROGRAMS += tests/lttng/presets-test
tests_lttng_presets_test_SOURCES = tests/lttng/presets-test.c \
	plugins/lttng/presets.c plugins/lttng/presets.h \
	plugins/lttng/ctf.c plugins/lttng/ctf.h \
	plugins/lttng/dotnet.c plugins/lttng/dotnet.h
tests_lttng_presets_test_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests -I$(top_srcdir)/plugins/lttng
tests_lttng_presets_test_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS)
tests_lttng_presets_test_LDADD = lib/libtrelf.la lib/libtrutil.la $(LIBELF_LIBS)
TESTS += tests/lttng/presets-test

# The test suite's own traced application (LTTng-UST tracepoint provider).
check_PROGRAMS += tests/lttng/lttng-app
tests_lttng_lttng_app_SOURCES = tests/lttng/lttng-app.c tests/lttng/tp.c tests/lttng/tp.h
tests_lttng_lttng_app_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/lttng
tests_lttng_lttng_app_LDADD = -llttng-ust -ldl

# Which daemon answers, for the tests (lib-lttng.sh's sessiond_pid).
check_PROGRAMS += tests/lttng/sessiond-pid
tests_lttng_sessiond_pid_SOURCES = tests/lttng/sessiond-pid.c

# Stands in for a .NET process in dotnet-check.sh.
check_PROGRAMS += tests/lttng/dotnet-fixture
tests_lttng_dotnet_fixture_SOURCES = tests/lttng/dotnet-fixture.c
tests_lttng_dotnet_fixture_LDADD = -ldl

# Integration tests against a real lttng-sessiond (they share one lock:
# a session daemon is per user, so they must not start/stop it concurrently).
lttng_shell_tests = \
	tests/lttng/events.sh \
	tests/lttng/pid-filter.sh \
	tests/lttng/libc-wrapper.sh \
	tests/lttng/no-daemon.sh \
	tests/lttng/output-path.sh \
	tests/lttng/providers.sh \
	tests/lttng/daemon-death.sh \
	tests/lttng/kill9.sh \
	tests/lttng/abort.sh \
	tests/lttng/flight.sh \
	tests/lttng/dotnet-check.sh
TESTS_ALONE += $(lttng_shell_tests)
dist_check_SCRIPTS += $(lttng_shell_tests)
dist_check_DATA += tests/lttng/lib-lttng.sh
EXTRA_DIST += bench/lttng/run.sh conf/profiles/lttng.ini conf/profiles/dotnet.ini \
	docs/lttng-containers.md
endif

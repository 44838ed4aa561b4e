# eventpipe: .NET runtime events over the diagnostics IPC (EventPipe).
if BUILD_PLUGIN_EVENTPIPE
plugin_LTLIBRARIES += plugins/eventpipe/eventpipe.la
eventpipe_sources = \
	plugins/eventpipe/providers.c plugins/eventpipe/providers.h \
	plugins/eventpipe/session.c plugins/eventpipe/session.h \
	plugins/eventpipe/port.c plugins/eventpipe/port.h \
	plugins/eventpipe/segments.c plugins/eventpipe/segments.h
eventpipe_sources += plugins/eventpipe/counts.c plugins/eventpipe/counts.h
plugins_eventpipe_eventpipe_la_SOURCES = plugins/eventpipe/plugin.c $(eventpipe_sources)
plugins_eventpipe_eventpipe_la_CFLAGS = $(AM_CFLAGS)
plugins_eventpipe_eventpipe_la_LIBADD = lib/libtrutil.la
plugins_eventpipe_eventpipe_la_LDFLAGS = $(plugin_ldflags)

# Unit tests: the providers syntax and presets.
check_PROGRAMS += tests/eventpipe/test_providers
tests_eventpipe_test_providers_SOURCES = tests/eventpipe/test_providers.c \
	plugins/eventpipe/providers.c plugins/eventpipe/providers.h
tests_eventpipe_test_providers_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/eventpipe
tests_eventpipe_test_providers_LDADD = lib/libtrutil.la
TESTS += tests/eventpipe/test_providers
UNIT_TESTS += tests/eventpipe/test_providers

# The session protocol against a runtime played over a socket pair, and
# tracerig's diagnostic port.
check_PROGRAMS += tests/eventpipe/test_protocol
tests_eventpipe_test_protocol_SOURCES = tests/eventpipe/test_protocol.c $(eventpipe_sources)
tests_eventpipe_test_protocol_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/eventpipe
tests_eventpipe_test_protocol_LDADD = lib/libtrutil.la -lpthread
TESTS += tests/eventpipe/test_protocol
UNIT_TESTS += tests/eventpipe/test_protocol

# Flight mode's segments: what a snapshot takes, what pruning deletes.
check_PROGRAMS += tests/eventpipe/test_segments
tests_eventpipe_test_segments_SOURCES = tests/eventpipe/test_segments.c \
	plugins/eventpipe/segments.c plugins/eventpipe/segments.h
tests_eventpipe_test_segments_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/eventpipe
tests_eventpipe_test_segments_LDADD = lib/libtrutil.la
TESTS += tests/eventpipe/test_segments
UNIT_TESTS += tests/eventpipe/test_segments

# The manifest's counts of a stream fed in pieces: events by kind, events
# the runtime dropped.
check_PROGRAMS += tests/eventpipe/test_counts
tests_eventpipe_test_counts_SOURCES = tests/eventpipe/test_counts.c tests/lib/nettrace-build.h \
	plugins/eventpipe/counts.c plugins/eventpipe/counts.h
tests_eventpipe_test_counts_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/eventpipe
tests_eventpipe_test_counts_LDADD = lib/libtrutil.la
TESTS += tests/eventpipe/test_counts
UNIT_TESTS += tests/eventpipe/test_counts
endif
EXTRA_DIST += docs/eventpipe.md

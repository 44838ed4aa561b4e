# perf_events: CPU sampling with perf_event_open(2) and mmap ring buffers,
# perf.data written by tracerig itself, perf.data.txt, cpu.folded/.svg.
perf_events_sources = \
	plugins/perf_events/perfdata.c plugins/perf_events/perfdata.h \
	plugins/perf_events/perffile.h \
	plugins/perf_events/bytebuf.c plugins/perf_events/bytebuf.h \
	plugins/perf_events/synth.c plugins/perf_events/synth.h \
	plugins/perf_events/tracefs.c plugins/perf_events/tracefs.h \
	plugins/perf_events/tracingdata.c plugins/perf_events/tracingdata.h
EXTRA_DIST += bench/perf_events/run.sh bench/perf_events/lib.sh bench/recording/run.sh \
	bench/perf_events_dwarf/run.sh bench/perf_events_dwarf/work.c \
	bench/stream/run.sh bench/stream_dwarf/run.sh bench/memory/run.sh bench/memory/load.sh
if BUILD_PLUGIN_PERF_EVENTS
plugin_LTLIBRARIES += plugins/perf_events/perf_events.la
plugins_perf_events_perf_events_la_SOURCES = plugins/perf_events/plugin.c \
	plugins/perf_events/events.c plugins/perf_events/events.h \
	plugins/perf_events/collector.c plugins/perf_events/collector.h \
	plugins/perf_events/window.c plugins/perf_events/window.h \
	plugins/perf_events/livesb.c plugins/perf_events/livesb.h \
	plugins/perf_events/comms.c plugins/perf_events/comms.h \
	plugins/perf_events/script.c plugins/perf_events/script.h \
	plugins/perf_events/livescript.c plugins/perf_events/livescript.h \
	plugins/perf_events/frametexts.c plugins/perf_events/frametexts.h \
	plugins/perf_events/textbuf.c plugins/perf_events/textbuf.h \
	plugins/perf_events/timesort.c plugins/perf_events/timesort.h \
	plugins/perf_events/unwind.c plugins/perf_events/unwind.h \
	plugins/perf_events/unwindbg.c plugins/perf_events/unwindbg.h \
	plugins/perf_events/sample.c plugins/perf_events/sample.h \
	plugins/perf_events/fpcheck.c plugins/perf_events/fpcheck.h \
	$(perf_events_sources)
plugins_perf_events_perf_events_la_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS) $(TRACEEVENT_CFLAGS) \
	$(LIBDW_CFLAGS)
plugins_perf_events_perf_events_la_LIBADD = lib/libtrpprof.la lib/libtrelf.la lib/libtrunwind.la lib/libtrutil.la $(LIBELF_LIBS) \
	$(TRACEEVENT_LIBS) $(LIBDW_LIBS)
plugins_perf_events_perf_events_la_LDFLAGS = $(plugin_ldflags)

# ---- perfdata (the perf.data writer, synthesized records, build ids)
check_PROGRAMS += tests/perf_events/test_perfdata
TESTS += tests/perf_events/test_perfdata
UNIT_TESTS += tests/perf_events/test_perfdata
tests_perf_events_test_perfdata_SOURCES = tests/perf_events/test_perfdata.c $(perf_events_sources)
tests_perf_events_test_perfdata_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/perf_events
tests_perf_events_test_perfdata_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS)
tests_perf_events_test_perfdata_LDADD = lib/libtrelf.la lib/libtrutil.la $(LIBELF_LIBS)
dist_check_DATA += tests/perf_events/golden/features-000.data \
	tests/perf_events/golden/features-101.data tests/perf_events/golden/features-110.data
# ---- end perfdata

# ---- unwind (copied user stacks, unwinding while collecting)
check_PROGRAMS += tests/perf_events/test_unwind
TESTS += tests/perf_events/test_unwind
UNIT_TESTS += tests/perf_events/test_unwind
tests_perf_events_test_unwind_SOURCES = tests/perf_events/test_unwind.c tests/lib/stack-sample.h \
	plugins/perf_events/unwind.c plugins/perf_events/unwindbg.c plugins/perf_events/sample.c
tests_perf_events_test_unwind_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/perf_events
tests_perf_events_test_unwind_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS) $(LIBDW_CFLAGS)
tests_perf_events_test_unwind_LDADD = lib/libtrunwind.la $(tr_core_libs) $(LIBDW_LIBS) $(AX_PTHREAD_LIBS)
# ---- end unwind

# ---- frametexts (frame texts kept per process, generation and address)
check_PROGRAMS += tests/perf_events/test_frametexts
TESTS += tests/perf_events/test_frametexts
UNIT_TESTS += tests/perf_events/test_frametexts
tests_perf_events_test_frametexts_SOURCES = tests/perf_events/test_frametexts.c \
	plugins/perf_events/frametexts.c
tests_perf_events_test_frametexts_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/perf_events
tests_perf_events_test_frametexts_LDADD = lib/libtrutil.la
# ---- end frametexts

# ---- textbuf (perf.data.txt's numbers, as printf would write them)
check_PROGRAMS += tests/perf_events/test_textbuf
TESTS += tests/perf_events/test_textbuf
UNIT_TESTS += tests/perf_events/test_textbuf
tests_perf_events_test_textbuf_SOURCES = tests/perf_events/test_textbuf.c
tests_perf_events_test_textbuf_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/perf_events
# ---- end textbuf

# ---- comms (thread names over time, at once or step by step)
check_PROGRAMS += tests/perf_events/test_comms
TESTS += tests/perf_events/test_comms
UNIT_TESTS += tests/perf_events/test_comms
tests_perf_events_test_comms_SOURCES = tests/perf_events/test_comms.c \
	plugins/perf_events/comms.c
tests_perf_events_test_comms_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/perf_events
tests_perf_events_test_comms_LDADD = lib/libtrutil.la
# ---- end comms

# ---- livesb (flight mode: the side-band of what is alive, kept in memory)
check_PROGRAMS += tests/perf_events/test_livesb
TESTS += tests/perf_events/test_livesb
UNIT_TESTS += tests/perf_events/test_livesb
tests_perf_events_test_livesb_SOURCES = tests/perf_events/test_livesb.c \
	plugins/perf_events/livesb.c
tests_perf_events_test_livesb_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/perf_events
tests_perf_events_test_livesb_LDADD = lib/libtrutil.la
# ---- end livesb

# Integration tests (root): the real tracerig sampling real workloads.
perf_events_sh_tests = \
	tests/perf_events/sampling.sh \
	tests/perf_events/max_stack.sh \
	tests/perf_events/truncated.sh \
	tests/perf_events/targets.sh \
	tests/perf_events/container.sh \
	tests/perf_events/errors.sh \
	tests/perf_events/killed.sh \
	tests/perf_events/exited.sh \
	tests/perf_events/spill.sh \
	tests/perf_events/unmapped.sh \
	tests/perf_events/order.sh \
	tests/perf_events/late.sh \
	tests/perf_events/identity.sh \
	tests/perf_events/dwarf.sh \
	tests/perf_events/debugroot.sh \
	tests/perf_events/fpcheck.sh \
	tests/core/flight_triggers.sh \
	tests/core/flight_sideband.sh
TESTS += $(perf_events_sh_tests)
TESTS_SLOWEST += tests/perf_events/live.sh
TESTS_SLOW += tests/core/flight.sh
dist_check_SCRIPTS += $(perf_events_sh_tests) tests/perf_events/live.sh tests/core/flight.sh
dist_check_DATA += tests/perf_events/lib-perf.sh tests/perf_events/late/late.c tests/perf_events/late/liblate.c tests/perf_events/late/after.c \
	tests/perf_events/dwarf/chain.c tests/perf_events/dwarf/chain.h tests/perf_events/dwarf/libchain.c \
	tests/perf_events/dwarf/jit.c tests/perf_events/debugroot/libdbg.c \
	tests/perf_events/debugroot/prog.c tests/perf_events/fakechain.c tests/core/flight/phases.c tests/core/flight/spike.c \
	tests/core/flight/sblaunch.c tests/core/flight/sbexeced.c tests/core/flight/sbhot.c
endif

# The conversion alone, on a perf.data already recorded (bench/perf_events/convert.c):
# to time and profile it, and to check that a change leaves its output as it was.
if BUILD_PLUGIN_PERF_EVENTS
check_PROGRAMS += bench/perf_events/convert
bench_perf_events_convert_SOURCES = bench/perf_events/convert.c \
	plugins/perf_events/script.c plugins/perf_events/frametexts.c plugins/perf_events/bytebuf.c \
	plugins/perf_events/comms.c plugins/perf_events/events.c plugins/perf_events/tracefs.c \
	plugins/perf_events/textbuf.c plugins/perf_events/timesort.c plugins/perf_events/unwind.c \
	plugins/perf_events/unwindbg.c plugins/perf_events/sample.c
bench_perf_events_convert_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
bench_perf_events_convert_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS) $(TRACEEVENT_CFLAGS) $(LIBDW_CFLAGS)
bench_perf_events_convert_LDADD = lib/libtrunwind.la $(tr_core_libs) $(TRACEEVENT_LIBS) $(LIBDW_LIBS)
endif

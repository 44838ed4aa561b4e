bin_PROGRAMS += tracerig
tracerig_SOURCES = \
	core/main.c \
	core/reaper.c core/reaper.h \
	core/cli.c core/cli.h \
	core/log.c core/log.h \
	core/profile.c core/profile.h \
	core/keys.c core/keys.h \
	core/loader.c core/loader.h \
	core/backends.c core/backends.h \
	core/session.c core/session.h \
	core/ctx.c core/ctx.h \
	core/phase.c core/phase.h \
	core/options.h core/exitcodes.h \
	core/supervise.c core/supervise.h \
	core/watchdog.c core/watchdog.h \
	core/services.c core/services.h core/settings.h \
	core/sideband.c core/sideband.h \
	core/pids.c core/pids.h \
	core/staging.c core/staging.h \
	core/stream.c core/stream.h \
	core/writeback.c core/writeback.h \
	core/output.c core/output.h \
	core/manifest.c core/manifest.h \
	core/json.c core/json.h \
	core/jsonread.c core/jsonread.h \
	core/status.c core/status.h \
	core/target.c core/target.h \
	core/flamegraph.c core/flamegraph.h \
	core/wall.c core/wall.h \
	core/report.c core/report.h \
	$(tr_report_sources) \
	core/control.c core/control.h \
	core/flight.c core/flight.h \
	core/triggers.c core/triggers.h \
	core/cputrigger.c core/cputrigger.h \
	core/exitwatch.c core/exitwatch.h \
	core/remote.c core/remote.h \
	core/detach.c core/detach.h \
	core/stackset.c core/stackset.h \
	core/export.c core/export.h \
	core/convert.c core/convert.h \
	$(tr_symbols_sources)
tracerig_CFLAGS = $(AM_CFLAGS) $(INIH_CFLAGS) $(LIBELF_CFLAGS) $(LIBZIP_CFLAGS) $(ZLIB_CFLAGS)
tracerig_LDADD = lib/libtrzpiece.la lib/libtrpprof.la lib/libtrelf.la lib/libtrutil.la $(LTDL_LIBS) $(INIH_LIBS) $(LIBELF_LIBS) $(DEMANGLE_LIBS) $(LIBZIP_LIBS)

# The index of the in-tree backends (core/backends.h), from their descriptors.
backend_descriptors = $(sort $(wildcard $(top_srcdir)/plugins/*/plugin.c))
BUILT_SOURCES += core/backends.inc
CLEANFILES += core/backends.inc
EXTRA_DIST += scripts/backends-index.sh
core/backends.inc: $(backend_descriptors) $(top_srcdir)/scripts/backends-index.sh
	$(AM_V_GEN)$(MKDIR_P) core && bash $(top_srcdir)/scripts/backends-index.sh $@ $(backend_descriptors)

include core/symbols/local.mk
include core/report/local.mk

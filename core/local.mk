# The core as a convenience library, the program being main.c and it: the
# unit tests link it rather than list the sources they test.
noinst_LTLIBRARIES += core/libtrcore.la
core_libtrcore_la_SOURCES = \
	core/reaper.c core/reaper.h \
	core/cli.c core/cli.h \
	core/log.c core/log.h \
	core/profile.c core/profile.h \
	core/keys.c core/keys.h \
	core/loader.c core/loader.h \
	core/backends.c core/backends.h \
	core/session.c core/session.h \
	core/steps.c core/steps.h \
	core/record.c core/snapshots.c core/salvage.c \
	core/prepare.c core/check.c \
	core/mode.c core/mode.h \
	core/summary.c core/summary.h \
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
core_libtrcore_la_CFLAGS = $(AM_CFLAGS) $(INIH_CFLAGS) $(LIBELF_CFLAGS) $(LIBZIP_CFLAGS) $(ZLIB_CFLAGS)
# What the core's objects need, in link order: for the program and for
# every test that links the core.
tr_core_libs = core/libtrcore.la lib/libtrzpiece.la lib/libtrpprof.la lib/libtrelf.la \
	lib/libtrutil.la $(LTDL_LIBS) $(INIH_LIBS) $(LIBELF_LIBS) $(DEMANGLE_LIBS) $(LIBZIP_LIBS)

bin_PROGRAMS += tracerig
tracerig_SOURCES = core/main.c
tracerig_CFLAGS = $(core_libtrcore_la_CFLAGS)
tracerig_LDADD = $(tr_core_libs)

# The index of the in-tree backends (core/backends.h), from their descriptors.
backend_descriptors = $(sort $(wildcard $(top_srcdir)/plugins/*/plugin.c))
BUILT_SOURCES += core/backends.inc
CLEANFILES += core/backends.inc
EXTRA_DIST += scripts/backends-index.sh
core/backends.inc: $(backend_descriptors) $(top_srcdir)/scripts/backends-index.sh
	$(AM_V_GEN)$(MKDIR_P) core && bash $(top_srcdir)/scripts/backends-index.sh $@ $(backend_descriptors)

include core/symbols/local.mk
include core/report/local.mk

# ---- the core's unit tests (no root): tests/core/test_X.c each, linking
# the core; the flight recorder's CPU trigger is decided from numbers, CPU
# time read from /proc; test_frames is the frame_name service against the
# process model (ebpf's adapter is one of its callers).
core_unit_tests = tests/core/test_keys tests/core/test_profile tests/core/test_pids \
	tests/core/test_staging tests/core/test_json tests/core/test_flamegraph \
	tests/core/test_output tests/core/test_jsonread tests/core/test_wall \
	tests/core/test_frames tests/core/test_cputrigger
check_PROGRAMS += $(core_unit_tests)
TESTS += $(core_unit_tests)
UNIT_TESTS += $(core_unit_tests)
tests_core_test_keys_LDADD = $(tr_core_libs)
tests_core_test_profile_CFLAGS = $(AM_CFLAGS) $(INIH_CFLAGS)
tests_core_test_profile_LDADD = $(tr_core_libs)
tests_core_test_pids_LDADD = $(tr_core_libs)
tests_core_test_staging_LDADD = $(tr_core_libs)
tests_core_test_output_LDADD = $(tr_core_libs)
tests_core_test_json_LDADD = $(tr_core_libs)
tests_core_test_jsonread_LDADD = $(tr_core_libs)
tests_core_test_flamegraph_LDADD = $(tr_core_libs)
tests_core_test_cputrigger_LDADD = $(tr_core_libs)
tests_core_test_frames_SOURCES = tests/core/test_frames.c plugins/ebpf/frames.c
tests_core_test_frames_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS)
tests_core_test_frames_LDADD = $(tr_core_libs)
# It reads wall.pb.gz back with the code generated from profile.proto.
tests_core_test_wall_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/lib
tests_core_test_wall_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
tests_core_test_wall_LDADD = $(tr_core_libs) $(PROTOBUF_C_LIBS) $(ZLIB_LIBS)
# The core's side-band recording against the real kernel (root).
check_PROGRAMS += tests/core/test_sideband
TESTS += tests/core/test_sideband
tests_core_test_sideband_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS)
tests_core_test_sideband_LDADD = $(tr_core_libs)

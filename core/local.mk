# The core as a convenience library, the program being main.c and it: the
# unit tests link it rather than list the sources they test.
noinst_LTLIBRARIES += core/libtrcore.la
core_libtrcore_la_SOURCES = \
	core/log.c core/log.h core/exitcodes.h \
	$(tr_cli_sources) \
	$(tr_session_sources) \
	$(tr_archive_sources) \
	$(tr_views_sources) \
	$(tr_report_sources) \
	$(tr_symbols_sources)
core_libtrcore_la_CFLAGS = $(AM_CFLAGS) $(INIH_CFLAGS) $(LIBELF_CFLAGS) $(LIBZIP_CFLAGS) $(ZLIB_CFLAGS)
# What the core's objects need, in link order: for the program and for
# every test that links the core.
tr_core_libs = core/libtrcore.la lib/libtrzpiece.la lib/libtrpprof.la lib/libtrelf.la \
	lib/libtrutil.la $(LTDL_LIBS) $(INIH_LIBS) $(LIBELF_LIBS) $(DEMANGLE_LIBS) $(LIBZIP_LIBS)

bin_PROGRAMS += tracerig
tracerig_SOURCES = core/cli/main.c
tracerig_CFLAGS = $(core_libtrcore_la_CFLAGS)
tracerig_LDADD = $(tr_core_libs)

# One folder a concern, each listing its sources: the command line (the
# program's own, around the library), the session and its supervision, the
# archive (staging, streaming, writing out), the views joined from what the
# sources staged, `tracerig report` and `convert`, the symbolizer.  log.c
# and exitcodes.h, which every folder uses, stay here.
include core/cli/local.mk
include core/session/local.mk
include core/archive/local.mk
include core/views/local.mk
include core/report/local.mk
include core/symbols/local.mk

# ---- the core's unit tests (no root): tests/core/test_X.c each, linking
# the core; the flight recorder's CPU trigger is decided from numbers, CPU
# time read from /proc; test_frames is the frame_name service against the
# process model (the stack sink is one of its callers); test_stacks is
# the stack sink's folded lines, pprof and entries.
core_unit_tests = tests/core/test_keys tests/core/test_profile tests/core/test_pids \
	tests/core/test_staging tests/core/test_json tests/core/test_flamegraph \
	tests/core/test_output tests/core/test_jsonread tests/core/test_wall \
	tests/core/test_frames tests/core/test_cputrigger tests/core/test_stacks
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
tests_core_test_stacks_LDADD = $(tr_core_libs)
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

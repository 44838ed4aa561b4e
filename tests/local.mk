# The core's tests: test-only plugins, unit tests of core pieces, and
# integration tests that run the real tracerig binary.

# ---- test-only plugins (never installed)
check_LTLIBRARIES += tests/plugins/testa.la tests/plugins/testb.la \
	tests/plugins/badabi.la tests/plugins/abi1.la tests/plugins/badbind.la \
	tests/plugins/nosymbol.la tests/plugins/unresolved.la
tests_plugins_testa_la_SOURCES = tests/plugins/testsrc.c
tests_plugins_testa_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_PLUGIN_NAME='"testa"'
tests_plugins_testa_la_LDFLAGS = $(test_plugin_ldflags)
tests_plugins_testb_la_SOURCES = tests/plugins/testsrc.c
tests_plugins_testb_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_PLUGIN_NAME='"testb"'
tests_plugins_testb_la_LDFLAGS = $(test_plugin_ldflags)
tests_plugins_badabi_la_SOURCES = tests/plugins/testsrc.c
tests_plugins_badabi_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_PLUGIN_NAME='"badabi"' -DTEST_PLUGIN_ABI=999
tests_plugins_badabi_la_LDFLAGS = $(test_plugin_ldflags)
tests_plugins_badbind_la_SOURCES = tests/plugins/testsrc.c
tests_plugins_badbind_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_PLUGIN_NAME='"badbind"' -DTEST_PLUGIN_BADBIND
tests_plugins_badbind_la_LDFLAGS = $(test_plugin_ldflags)
tests_plugins_abi1_la_SOURCES = tests/plugins/abi1.c
tests_plugins_abi1_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_plugins_nosymbol_la_SOURCES = tests/plugins/nosymbol.c
tests_plugins_nosymbol_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_plugins_unresolved_la_SOURCES = tests/plugins/testsrc.c
tests_plugins_unresolved_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_PLUGIN_NAME='"unresolved"' -DTEST_PLUGIN_UNRESOLVED
tests_plugins_unresolved_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

# ---- unit tests of core pieces
check_PROGRAMS += tests/core/test_keys tests/core/test_profile tests/core/test_pids \
	tests/core/test_staging tests/core/test_json tests/core/test_flamegraph \
	tests/core/test_output tests/core/test_jsonread tests/core/test_wall
TESTS += tests/core/test_keys tests/core/test_profile tests/core/test_pids \
	tests/core/test_staging tests/core/test_json tests/core/test_flamegraph \
	tests/core/test_output tests/core/test_jsonread tests/core/test_wall
UNIT_TESTS += tests/core/test_keys tests/core/test_profile tests/core/test_pids \
	tests/core/test_staging tests/core/test_json tests/core/test_flamegraph \
	tests/core/test_output tests/core/test_jsonread tests/core/test_wall
noinst_HEADERS += tests/testing.h
tests_core_test_keys_SOURCES = tests/core/test_keys.c core/keys.c
tests_core_test_keys_LDADD = lib/libtrutil.la
tests_core_test_profile_SOURCES = tests/core/test_profile.c core/profile.c core/log.c
tests_core_test_profile_CFLAGS = $(AM_CFLAGS) $(INIH_CFLAGS)
tests_core_test_profile_LDADD = lib/libtrutil.la $(INIH_LIBS)
tests_core_test_pids_SOURCES = tests/core/test_pids.c core/pids.c
tests_core_test_pids_LDADD = lib/libtrutil.la
tests_core_test_staging_SOURCES = tests/core/test_staging.c core/staging.c
tests_core_test_staging_LDADD = lib/libtrutil.la
tests_core_test_output_SOURCES = tests/core/test_output.c core/output.c core/staging.c core/log.c
tests_core_test_output_LDADD = lib/libtrutil.la
tests_core_test_json_SOURCES = tests/core/test_json.c core/json.c
tests_core_test_jsonread_SOURCES = tests/core/test_jsonread.c core/jsonread.c
tests_core_test_flamegraph_SOURCES = tests/core/test_flamegraph.c core/flamegraph.c core/staging.c
tests_core_test_flamegraph_LDADD = lib/libtrutil.la
# The frame_name service: naming, sanitizing, caching against the process
# model (no root); ebpf's adapter is one of its callers.
check_PROGRAMS += tests/core/test_frames
TESTS += tests/core/test_frames
UNIT_TESTS += tests/core/test_frames
tests_core_test_frames_SOURCES = tests/core/test_frames.c plugins/ebpf/frames.c \
	$(tr_symbols_sources) core/log.c
tests_core_test_frames_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS)
tests_core_test_frames_LDADD = lib/libtrelf.la lib/libtrutil.la $(LIBELF_LIBS) $(DEMANGLE_LIBS)
tests_core_test_wall_SOURCES = tests/core/test_wall.c core/wall.c core/flamegraph.c \
	core/staging.c core/pids.c core/log.c core/stackset.c core/export.c core/json.c
# It reads wall.pb.gz back with the code generated from profile.proto.
tests_core_test_wall_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/lib
tests_core_test_wall_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
tests_core_test_wall_LDADD = lib/libtrpprof.la lib/libtrutil.la $(PROTOBUF_C_LIBS) $(ZLIB_LIBS)
# The core's side-band recording against the real kernel (root).
check_PROGRAMS += tests/core/test_sideband
TESTS += tests/core/test_sideband
tests_core_test_sideband_SOURCES = tests/core/test_sideband.c core/sideband.c \
	$(tr_symbols_sources) core/log.c
tests_core_test_sideband_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS)
tests_core_test_sideband_LDADD = lib/libtrelf.la lib/libtrutil.la $(LIBELF_LIBS) $(DEMANGLE_LIBS)

# ---- integration tests: the real binary, real plugins, real archives
CORE_SH_TESTS = \
	tests/core/cli.sh \
	tests/core/profile_errors.sh \
	tests/core/loader.sh \
	tests/core/lifecycle.sh \
	tests/core/command.sh \
	tests/core/signals.sh \
	tests/core/detached.sh tests/core/control_trust.sh tests/core/flight_keep.sh \
	tests/core/convert.sh tests/core/pprof_archive.sh tests/core/archive_readers.sh \
	tests/core/supervise.sh \
	tests/core/cleanup.sh \
	tests/core/reaper.sh \
	tests/core/archive.sh \
	tests/core/output.sh \
	tests/core/docs.sh \
	tests/core/status.sh \
	tests/core/feedback.sh \
	tests/core/report.sh \
	tests/core/report_perfcollect.sh \
	tests/core/unit_tests.sh \
	tests/core/format.sh \
	tests/core/tidy.sh
TESTS += $(CORE_SH_TESTS)
dist_check_SCRIPTS += $(CORE_SH_TESTS)
# `tracerig start --foreground` and tracerig@.service: flight mode, so
# perf_events.
if BUILD_PLUGIN_PERF_EVENTS
TESTS += tests/core/service.sh
endif
dist_check_SCRIPTS += tests/core/service.sh
EXTRA_DIST += tests/lib.sh tests/lib-pprof.sh tests/pprof-dated.py tests/core/profiles

# The flight recorder's CPU trigger: the decision from numbers, CPU time
# from /proc (no root).
check_PROGRAMS += tests/core/test_cputrigger
TESTS += tests/core/test_cputrigger
UNIT_TESTS += tests/core/test_cputrigger
tests_core_test_cputrigger_SOURCES = tests/core/test_cputrigger.c core/cputrigger.c core/cputrigger.h
tests_core_test_cputrigger_LDADD = lib/libtrutil.la

# The unwinder's open objects within the open-files limit (issue 27): kept
# to a share of it, opened again when needed, no descriptor left survived.
check_PROGRAMS += tests/lib/test_unwind_fds
TESTS += tests/lib/test_unwind_fds
UNIT_TESTS += tests/lib/test_unwind_fds
tests_lib_test_unwind_fds_SOURCES = tests/lib/test_unwind_fds.c tests/lib/stack-sample.h \
	$(tr_symbols_sources) core/log.c
tests_lib_test_unwind_fds_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(top_srcdir)/tests
tests_lib_test_unwind_fds_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS) $(LIBDW_CFLAGS)
tests_lib_test_unwind_fds_LDADD = lib/libtrelf.la lib/libtrunwind.la lib/libtrutil.la \
	$(LIBELF_LIBS) $(DEMANGLE_LIBS) $(LIBDW_LIBS) $(AX_PTHREAD_LIBS)
# The same under a hard limit below the objects a traced process maps: the
# flush still writes every view (root: perf_events).
if BUILD_PLUGIN_PERF_EVENTS
TESTS += tests/perf_events/fdlimit.sh
endif
dist_check_SCRIPTS += tests/perf_events/fdlimit.sh
dist_check_DATA += tests/perf_events/fdlimit/many.c

# A traced program run from a FUSE mount whose server stops answering
# (issue 27, item 7): the session ends and packages all the same (root,
# /dev/fuse; the test builds the FUSE server, fusepit.c, itself).
if BUILD_PLUGIN_PERF_EVENTS
TESTS += tests/perf_events/fuse.sh
endif
dist_check_SCRIPTS += tests/perf_events/fuse.sh
dist_check_DATA += tests/perf_events/fusepit.c

# lib/opener: opens in the helper process come back as direct ones would
# (fds, refusals, stat), from many threads; direct before the start, after
# the stop and in a forked child (no root).
check_PROGRAMS += tests/lib/test_opener
TESTS += tests/lib/test_opener
UNIT_TESTS += tests/lib/test_opener
tests_lib_test_opener_LDADD = lib/libtrutil.la $(AX_PTHREAD_LIBS)

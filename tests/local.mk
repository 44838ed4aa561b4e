# The core's tests: test-only plugins, unit tests of core pieces, and
# integration tests that run the real tracerig binary.

# ---- test-only plugins (never installed)
check_LTLIBRARIES += tests/plugins/testa.la tests/plugins/testb.la \
	tests/plugins/badabi.la tests/plugins/abi1.la tests/plugins/badbind.la \
	tests/plugins/nosymbol.la tests/plugins/unresolved.la tests/plugins/abi2.la \
	tests/plugins/testflight.la tests/plugins/newcaps.la tests/plugins/otherrelease.la
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
tests_plugins_abi2_la_SOURCES = tests/plugins/abi1.c
tests_plugins_abi2_la_CPPFLAGS = $(AM_CPPFLAGS) -DOLD_ABI=2
tests_plugins_abi2_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_plugins_testflight_la_SOURCES = tests/plugins/testsrc.c
tests_plugins_testflight_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_PLUGIN_NAME='"testflight"' -DTEST_PLUGIN_FLIGHT
tests_plugins_testflight_la_LDFLAGS = $(test_plugin_ldflags)
tests_plugins_newcaps_la_SOURCES = tests/plugins/testsrc.c
tests_plugins_newcaps_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_PLUGIN_NAME='"newcaps"' -DTEST_PLUGIN_CAPS=0x80
tests_plugins_newcaps_la_LDFLAGS = $(test_plugin_ldflags)
tests_plugins_otherrelease_la_SOURCES = tests/plugins/testsrc.c
tests_plugins_otherrelease_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_PLUGIN_NAME='"otherrelease"' -DTEST_PLUGIN_INTERNAL=999
tests_plugins_otherrelease_la_LDFLAGS = $(test_plugin_ldflags)
tests_plugins_nosymbol_la_SOURCES = tests/plugins/nosymbol.c
tests_plugins_nosymbol_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_plugins_unresolved_la_SOURCES = tests/plugins/testsrc.c
tests_plugins_unresolved_la_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_PLUGIN_NAME='"unresolved"' -DTEST_PLUGIN_UNRESOLVED
tests_plugins_unresolved_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

noinst_HEADERS += tests/testing.h

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
	tests/core/order.sh \
	tests/core/function_length.sh
core_slow_sh_tests = tests/core/supervise.sh tests/core/format.sh tests/core/tidy.sh
TESTS += $(CORE_SH_TESTS)
TESTS_SLOW += $(core_slow_sh_tests)
dist_check_SCRIPTS += $(CORE_SH_TESTS) $(core_slow_sh_tests)
# `tracerig start --foreground` and tracerig@.service: flight mode, so
# perf_events.
if BUILD_PLUGIN_PERF_EVENTS
TESTS += tests/core/service.sh
endif
dist_check_SCRIPTS += tests/core/service.sh
EXTRA_DIST += tests/lib.sh tests/lock.sh tests/lib-pprof.sh tests/pprof-dated.py tests/core/profiles


# The unwinder's open objects within the open-files limit (issue 27): kept
# to a share of it, opened again when needed, no descriptor left survived.
check_PROGRAMS += tests/lib/test_unwind_fds
TESTS += tests/lib/test_unwind_fds
UNIT_TESTS += tests/lib/test_unwind_fds
tests_lib_test_unwind_fds_SOURCES = tests/lib/test_unwind_fds.c tests/lib/stack-sample.h
tests_lib_test_unwind_fds_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(top_srcdir)/tests
tests_lib_test_unwind_fds_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS) $(LIBDW_CFLAGS)
tests_lib_test_unwind_fds_LDADD = lib/libtrunwind.la $(tr_core_libs) $(LIBDW_LIBS) $(AX_PTHREAD_LIBS)
# callchain = cfi's tables and walk, through libc, against glibc's
# backtrace(); built without frame pointers, as the code it is for.
check_PROGRAMS += tests/lib/test_cfi
TESTS += tests/lib/test_cfi
UNIT_TESTS += tests/lib/test_cfi
tests_lib_test_cfi_SOURCES = tests/lib/test_cfi.c
tests_lib_test_cfi_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(top_srcdir)/tests
tests_lib_test_cfi_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS) $(LIBDW_CFLAGS) -O2 -fomit-frame-pointer
tests_lib_test_cfi_LDADD = lib/libtrunwind.la lib/libtrutil.la $(LIBDW_LIBS) $(LIBELF_LIBS) -ldl
# The same code (tests/lib/cfi/frames.c) with its CFI in .debug_frame
# alone, in .eh_frame with and without .eh_frame_hdr, and as an
# executable with .debug_frame beside crt1's .eh_frame: test_cfi reads
# them by path and walks through the first.  Without the sanitizers and
# without frame pointers, like the code they stand for.
EXTRA_tests_lib_test_cfi_DEPENDENCIES = tests/lib/cfi/libframes_debug.la \
	tests/lib/cfi/libframes_eh.la tests/lib/cfi/libframes_nohdr.la tests/lib/cfi/frames_debug
frames_debug_cflags = $(WARN_CFLAGS) -g -O2 -fomit-frame-pointer -fno-asynchronous-unwind-tables \
	-fno-unwind-tables
frames_module_ldflags = -module -avoid-version -shared -rpath /nowhere
check_LTLIBRARIES += tests/lib/cfi/libframes_debug.la tests/lib/cfi/libframes_eh.la \
	tests/lib/cfi/libframes_nohdr.la
tests_lib_cfi_libframes_debug_la_SOURCES = tests/lib/cfi/frames.c
tests_lib_cfi_libframes_debug_la_CFLAGS = $(frames_debug_cflags)
tests_lib_cfi_libframes_debug_la_LDFLAGS = $(frames_module_ldflags)
tests_lib_cfi_libframes_eh_la_SOURCES = tests/lib/cfi/frames.c
tests_lib_cfi_libframes_eh_la_CFLAGS = $(WARN_CFLAGS) -O2 -fomit-frame-pointer
tests_lib_cfi_libframes_eh_la_LDFLAGS = $(frames_module_ldflags)
tests_lib_cfi_libframes_nohdr_la_SOURCES = tests/lib/cfi/frames.c
tests_lib_cfi_libframes_nohdr_la_CFLAGS = $(WARN_CFLAGS) -O2 -fomit-frame-pointer
tests_lib_cfi_libframes_nohdr_la_LDFLAGS = $(frames_module_ldflags) -Wl,--no-eh-frame-hdr
check_PROGRAMS += tests/lib/cfi/frames_debug
tests_lib_cfi_frames_debug_SOURCES = tests/lib/cfi/frames.c
tests_lib_cfi_frames_debug_CPPFLAGS = $(AM_CPPFLAGS) -DFRAMES_MAIN
tests_lib_cfi_frames_debug_CFLAGS = $(frames_debug_cflags)
tests_lib_cfi_frames_debug_LDFLAGS =
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
TESTS_SLOWEST += tests/perf_events/fuse.sh
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

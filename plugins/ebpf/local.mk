# ebpf: off-CPU time via libbpf (CO-RE, BPF skeleton).
# The BPF object is built here: vmlinux.h from the kernel's BTF, the
# program with clang -target bpf, the skeleton with bpftool.  All three are
# generated into the build directory.
EXTRA_DIST += plugins/ebpf/offcpu.bpf.c plugins/ebpf/offcpu.h
if BUILD_PLUGIN_EBPF
plugin_LTLIBRARIES += plugins/ebpf/ebpf.la
ebpf_sources = \
	plugins/ebpf/buckets.c plugins/ebpf/buckets.h \
	plugins/ebpf/cfimaps.c plugins/ebpf/cfimaps.h \
	plugins/ebpf/collector.c plugins/ebpf/collector.h plugins/ebpf/offcpu.h \
	plugins/ebpf/fallback.c plugins/ebpf/fallback.h \
	plugins/ebpf/frames.c plugins/ebpf/frames.h \
	plugins/ebpf/script.c plugins/ebpf/script.h \
	plugins/ebpf/ustacks.c plugins/ebpf/ustacks.h
plugins_ebpf_ebpf_la_SOURCES = plugins/ebpf/plugin.c $(ebpf_sources)
nodist_plugins_ebpf_ebpf_la_SOURCES = plugins/ebpf/offcpu.skel.h
plugins_ebpf_ebpf_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/plugins/ebpf \
	-I$(top_srcdir)/plugins/ebpf
plugins_ebpf_ebpf_la_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS) $(LIBELF_CFLAGS)
# libtrelf: callchain = cfi reads objects' build ids and program headers.
plugins_ebpf_ebpf_la_LIBADD = lib/libtrelf.la lib/libtrunwind.la \
	lib/libtrutil.la $(LIBBPF_LIBS) $(LIBELF_LIBS)
plugins_ebpf_ebpf_la_LDFLAGS = $(plugin_ldflags)

BUILT_SOURCES += plugins/ebpf/offcpu.skel.h
# Also for builds of single targets, which BUILT_SOURCES does not cover.
plugins/ebpf/ebpf_la-collector.lo plugins/ebpf/tests_ebpf_test_collector-collector.o: \
	plugins/ebpf/offcpu.skel.h
CLEANFILES += plugins/ebpf/vmlinux.h plugins/ebpf/offcpu.bpf.o plugins/ebpf/offcpu.skel.h

plugins/ebpf/vmlinux.h:
	$(AM_V_GEN)$(MKDIR_P) plugins/ebpf && \
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c >$@.tmp && mv $@.tmp $@
plugins/ebpf/offcpu.bpf.o: $(top_srcdir)/plugins/ebpf/offcpu.bpf.c \
		$(top_srcdir)/plugins/ebpf/offcpu.h plugins/ebpf/vmlinux.h
	$(AM_V_GEN)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -Iplugins/ebpf \
	-I$(top_srcdir)/plugins/ebpf $(LIBBPF_CFLAGS) \
	-c $(top_srcdir)/plugins/ebpf/offcpu.bpf.c -o $@
plugins/ebpf/offcpu.skel.h: plugins/ebpf/offcpu.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton plugins/ebpf/offcpu.bpf.o name offcpu_bpf >$@.tmp && \
	mv $@.tmp $@

# Unit tests: the tracing machinery's frames found by name.
check_PROGRAMS += tests/ebpf/test_frames
tests_ebpf_test_frames_SOURCES = tests/ebpf/test_frames.c plugins/ebpf/frames.c plugins/ebpf/frames.h
tests_ebpf_test_frames_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests -I$(top_srcdir)/plugins/ebpf
TESTS += tests/ebpf/test_frames
UNIT_TESTS += tests/ebpf/test_frames

# Unit tests: flight mode's ring of totals at bucket boundaries.
check_PROGRAMS += tests/ebpf/test_buckets
tests_ebpf_test_buckets_SOURCES = tests/ebpf/test_buckets.c plugins/ebpf/buckets.c \
	plugins/ebpf/buckets.h
tests_ebpf_test_buckets_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests -I$(top_srcdir)/plugins/ebpf
TESTS += tests/ebpf/test_buckets
UNIT_TESTS += tests/ebpf/test_buckets

# The BPF side on its own (root): loads the skeleton, blocks threads in
# known functions, checks stacks, times and filters.
check_PROGRAMS += tests/ebpf/test_collector tests/ebpf/workload
tests_ebpf_test_collector_SOURCES = tests/ebpf/test_collector.c tests/ebpf/blockers.c \
	tests/ebpf/blockers.h plugins/ebpf/collector.c plugins/ebpf/collector.h
nodist_tests_ebpf_test_collector_SOURCES = plugins/ebpf/offcpu.skel.h
tests_ebpf_test_collector_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/ebpf -I$(top_builddir)/plugins/ebpf
tests_ebpf_test_collector_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
tests_ebpf_test_collector_LDADD = lib/libtrutil.la $(LIBBPF_LIBS)
tests_ebpf_test_collector_LDFLAGS = $(AM_LDFLAGS) -rdynamic
TESTS += tests/ebpf/test_collector
tests_ebpf_workload_SOURCES = tests/ebpf/workload.c tests/ebpf/blockers.c tests/ebpf/blockers.h

# callchain = cfi's tables in real BPF maps (root): the maps text parsed,
# load biases, ranges of rows shared and quarantined.
check_PROGRAMS += tests/ebpf/test_cfimaps
tests_ebpf_test_cfimaps_SOURCES = tests/ebpf/test_cfimaps.c plugins/ebpf/cfimaps.c \
	plugins/ebpf/cfimaps.h
tests_ebpf_test_cfimaps_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/ebpf
tests_ebpf_test_cfimaps_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS) $(LIBELF_CFLAGS) $(LIBDW_CFLAGS)
tests_ebpf_test_cfimaps_LDADD = lib/libtrelf.la lib/libtrunwind.la lib/libtrutil.la \
	$(LIBBPF_LIBS) $(LIBDW_LIBS) $(LIBELF_LIBS)
TESTS += tests/ebpf/test_cfimaps

# A stand-in for perf_events' cpu.folded (wall.sh), found through the
# plugin path the test sets.
check_LTLIBRARIES += tests/ebpf/fakecpu.la
tests_ebpf_fakecpu_la_SOURCES = tests/ebpf/fakecpu.c
tests_ebpf_fakecpu_la_LDFLAGS = $(test_plugin_ldflags)

# callchain = dwarf's workload: callers only the CFI knows (dwarf.sh).
# Built like a distribution's code, without the sanitizers: it is traced,
# and its frames must be its own.
check_PROGRAMS += tests/ebpf/dwarf/nofp
tests_ebpf_dwarf_nofp_SOURCES = tests/ebpf/dwarf/nofp.c
tests_ebpf_dwarf_nofp_CFLAGS = $(WARN_CFLAGS) -O2 -g -fomit-frame-pointer -pthread
tests_ebpf_dwarf_nofp_LDFLAGS =

# callchain = cfi's workload (cfi.sh): callers only the CFI knows, through
# libc's wrappers, qsort's callback and a library loaded late (cfi.sh
# builds tests/ebpf/cfi/libcfilate.c, as late.sh builds its library).
# Without the sanitizers, like nofp; blockers.c (wait_asleep_in) gets an
# object of its own built the same way, so the ticker's stacks through it
# too have no frame pointers.
check_PROGRAMS += tests/ebpf/cfi/nofp2
tests_ebpf_cfi_nofp2_SOURCES = tests/ebpf/cfi/nofp2.c tests/ebpf/blockers.c tests/ebpf/blockers.h
tests_ebpf_cfi_nofp2_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/ebpf
tests_ebpf_cfi_nofp2_CFLAGS = $(WARN_CFLAGS) -O2 -g -fomit-frame-pointer -pthread
tests_ebpf_cfi_nofp2_LDFLAGS =
tests_ebpf_cfi_nofp2_LDADD = -ldl

# oncpu.sh's workload: burns CPU in known functions, through qsort's
# callback.  Without the sanitizers, like nofp.
check_PROGRAMS += tests/ebpf/oncpu/burn
tests_ebpf_oncpu_burn_SOURCES = tests/ebpf/oncpu/burn.c
tests_ebpf_oncpu_burn_CFLAGS = $(WARN_CFLAGS) -O2 -g -fomit-frame-pointer -pthread
tests_ebpf_oncpu_burn_LDFLAGS =

# flight.sh's workload: blocks in one known function, then another.
check_PROGRAMS += tests/ebpf/flight/phases
tests_ebpf_flight_phases_SOURCES = tests/ebpf/flight/phases.c

# What callchain = cfi becomes where the walker cannot run (no root).
check_PROGRAMS += tests/ebpf/test_fallback
tests_ebpf_test_fallback_SOURCES = tests/ebpf/test_fallback.c plugins/ebpf/fallback.c \
	plugins/ebpf/fallback.h
tests_ebpf_test_fallback_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/plugins/ebpf
TESTS += tests/ebpf/test_fallback
UNIT_TESTS += tests/ebpf/test_fallback

# Integration tests (root): the real tracerig with the ebpf backend.
ebpf_sh_tests = tests/ebpf/offcpu.sh tests/ebpf/filters.sh tests/ebpf/wall.sh tests/ebpf/late.sh \
	tests/ebpf/dwarf.sh tests/ebpf/container.sh
ebpf_alone_tests = tests/ebpf/cfi.sh tests/ebpf/errors.sh tests/ebpf/oncpu.sh
dist_check_DATA += tests/ebpf/lib-ebpf.sh
TESTS += $(ebpf_sh_tests)
TESTS_ALONE += $(ebpf_alone_tests)
TESTS_SLOW += tests/ebpf/flight.sh
dist_check_SCRIPTS += $(ebpf_sh_tests) $(ebpf_alone_tests) tests/ebpf/flight.sh
endif
EXTRA_DIST += bench/ebpf/run.sh bench/ebpf/lib.sh bench/ebpf/pingpong.c bench/ebpf_late/run.sh \
	tests/ebpf/late/lateblock.c tests/ebpf/late/liblateblock.c tests/ebpf/late/afterblock.c \
	bench/ebpf_flight/run.sh bench/ebpf_flight/readmap.c bench/ebpf_oncpu/run.sh
EXTRA_DIST += tests/ebpf/cfi/libcfilate.c


# The internal library (never installed) that the core and every plugin
# link: what more than one of them needs, written once.  A libtool
# convenience library, so it is PIC and ends up inside each plugin's .so
# (whose export list still holds nothing but tracerig_plugin).
noinst_LTLIBRARIES += lib/libtrutil.la
lib_libtrutil_la_SOURCES = \
	lib/untrusted.c lib/untrusted.h \
	lib/sanitize.c lib/sanitize.h \
	lib/cpus.c lib/cpus.h \
	lib/perfring.c lib/perfring.h \
	lib/pidqueue.c lib/pidqueue.h \
	lib/sideband.c lib/sideband.h \
	lib/hash.c lib/hash.h \
	lib/strmap.c lib/strmap.h \
	lib/pidset.c lib/pidset.h \
	lib/procpid.c lib/procpid.h \
	lib/list.c lib/list.h \
	lib/path.c lib/path.h \
	lib/vec.c lib/vec.h lib/decimal.h \
	lib/probe.c lib/probe.h \
	lib/kallsyms.c lib/kallsyms.h \
	lib/priority.c lib/priority.h \
	lib/perfscript.c lib/perfscript.h \
	lib/folded.c lib/folded.h \
	lib/dotnetipc.c lib/dotnetipc.h \
	lib/closest.c lib/closest.h \
	lib/fdio.c lib/fdio.h \
	lib/nettrace.c lib/nettrace.h \
	lib/r2r.c lib/r2r.h
# UTF-8 out of code points, for the UTF-16 readers; .NET runtime event ids.
lib_libtrutil_la_SOURCES += lib/utf.c lib/utf.h lib/clrevents.h
# Opens of traced processes' files in a helper process (lib/opener.h).
lib_libtrutil_la_SOURCES += lib/opener.c lib/opener.h
# A key value wrong in a way the key table cannot judge, said by the core.
lib_libtrutil_la_SOURCES += lib/keyerror.c lib/keyerror.h

# The part that reads ELF, for those that link libelf anyway (the core and
# perf_events): the other plugins stay free of it.
noinst_LTLIBRARIES += lib/libtrelf.la
lib_libtrelf_la_SOURCES = lib/elfopen.c lib/elfopen.h lib/buildid.c lib/buildid.h
lib_libtrelf_la_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS) $(ZLIB_CFLAGS)
lib_libtrelf_la_LIBADD = $(LIBELF_LIBS) $(ZLIB_LIBS)

# callchain = dwarf: unwinding copied user stacks with elfutils' libdwfl,
# for perf_events and ebpf.  Without libdw it builds to what says so
# (uw_new returns NULL); it needs libtrutil (the hardened open) next to it.
noinst_LTLIBRARIES += lib/libtrunwind.la
lib_libtrunwind_la_SOURCES = lib/unwind.c lib/unwind.h lib/callchain.h lib/cfi.c lib/cfi.h
lib_libtrunwind_la_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS) $(LIBDW_CFLAGS)
lib_libtrunwind_la_LIBADD = $(LIBDW_LIBS) $(LIBELF_LIBS)

# pprof profiles, for the core (convert, wall.pb.gz) and the sources that
# stage .pb.gz entries: the code protoc-c generates from the vendored
# profile.proto, libprotobuf-c, zlib.  It uses libtrutil (string maps) but
# does not carry it: a plugin links both convenience libraries, and one
# carried inside the other would put libtrutil into the .so twice.
noinst_LTLIBRARIES += lib/libtrpprof.la
lib_libtrpprof_la_SOURCES = lib/pprof.c lib/pprof.h lib/ppframes.c lib/ppframes.h \
	lib/gzfile.c lib/gzfile.h
nodist_lib_libtrpprof_la_SOURCES = lib/profile.pb-c.c lib/profile.pb-c.h
lib_libtrpprof_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/lib
lib_libtrpprof_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS) $(ISAL_CFLAGS)
lib_libtrpprof_la_LIBADD = $(PROTOBUF_C_LIBS) $(ZLIB_LIBS) $(ISAL_LIBS)
BUILT_SOURCES += lib/profile.pb-c.h
CLEANFILES += lib/profile.pb-c.c lib/profile.pb-c.h
EXTRA_DIST += third_party/pprof/profile.proto third_party/pprof/LICENSE third_party/pprof/README.md
lib/profile.pb-c.c: $(top_srcdir)/third_party/pprof/profile.proto
	$(AM_V_GEN)$(MKDIR_P) lib && \
	$(PROTOC_C) --proto_path=$(top_srcdir)/third_party/pprof --c_out=lib profile.proto
lib/profile.pb-c.h: lib/profile.pb-c.c
	@test -f $@ || { rm -f lib/profile.pb-c.c; $(MAKE) $(AM_MAKEFLAGS) lib/profile.pb-c.c; }

# Raw deflate in pieces that concatenate (lib/zpiece.h): the core's thread
# that deflates entries while they grow, and the zip packager that puts the
# pieces together.  Its own library, so that only these two link zlib (and
# ISA-L, when built with it) for it.
noinst_LTLIBRARIES += lib/libtrzpiece.la
lib_libtrzpiece_la_SOURCES = lib/zpiece.c lib/zpiece.h
lib_libtrzpiece_la_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS) $(ISAL_CFLAGS)
lib_libtrzpiece_la_LIBADD = $(ZLIB_LIBS) $(ISAL_LIBS)

# ---- unit tests (no root needed): tests/lib/test_X.c each (including
# ../testing.h, so they need no -I)
lib_unit_tests = tests/lib/test_untrusted tests/lib/test_sanitize tests/lib/test_hash \
	tests/lib/test_pidset tests/lib/test_procpid tests/lib/test_list \
	tests/lib/test_kallsyms tests/lib/test_buildid tests/lib/test_perfscript tests/lib/test_folded \
	tests/lib/test_path tests/lib/test_vec tests/lib/test_pprof tests/lib/test_dotnetipc \
	tests/lib/test_nettrace tests/lib/test_r2r tests/lib/test_fdio \
	tests/lib/test_probe
check_PROGRAMS += $(lib_unit_tests)
TESTS += $(lib_unit_tests)
UNIT_TESTS += $(lib_unit_tests)
tests_lib_test_untrusted_LDADD = lib/libtrutil.la
tests_lib_test_sanitize_LDADD = lib/libtrutil.la
tests_lib_test_hash_LDADD = lib/libtrutil.la
tests_lib_test_pidset_LDADD = lib/libtrutil.la
tests_lib_test_procpid_LDADD = lib/libtrutil.la
tests_lib_test_list_LDADD = lib/libtrutil.la
tests_lib_test_kallsyms_LDADD = lib/libtrutil.la
tests_lib_test_buildid_LDADD = lib/libtrelf.la
tests_lib_test_perfscript_LDADD = lib/libtrutil.la
tests_lib_test_folded_LDADD = lib/libtrutil.la
tests_lib_test_path_LDADD = lib/libtrutil.la
tests_lib_test_vec_LDADD = lib/libtrutil.la
tests_lib_test_pprof_LDADD = lib/libtrpprof.la lib/libtrutil.la
# Reads what it writes with protobuf-c itself.
tests_lib_test_pprof_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/lib
tests_lib_test_pprof_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
tests_lib_test_dotnetipc_LDADD = lib/libtrutil.la
tests_lib_test_nettrace_LDADD = lib/libtrutil.la
tests_lib_test_nettrace_SOURCES = tests/lib/test_nettrace.c tests/lib/nettrace-build.h
tests_lib_test_r2r_LDADD = lib/libtrutil.la
tests_lib_test_fdio_LDADD = lib/libtrutil.la
tests_lib_test_probe_LDADD = lib/libtrutil.la

# The real tracerig (perf_events + mapharvest) against processes, run as
# nobody, that plant links to secrets, FIFOs, sparse maps and names with
# control characters (root).  The hostile program is built without
# sanitizers: it runs as nobody and must need nothing but libc.
check_PROGRAMS += tests/lib/hostile
tests_lib_hostile_SOURCES = tests/lib/hostile.c
tests_lib_hostile_CFLAGS = $(WARN_CFLAGS) -O1 -g
tests_lib_hostile_LDFLAGS =
TESTS += tests/lib/hostile.sh
dist_check_SCRIPTS += tests/lib/hostile.sh

# The .NET diagnostics IPC client's driver for tests/dotnet/ipc.sh: info,
# enable, disable (and raw commands) against a real runtime, one line of
# key=value per fact.
check_PROGRAMS += tests/lib/dnipc-tool
tests_lib_dnipc_tool_SOURCES = tests/lib/dnipc-tool.c
tests_lib_dnipc_tool_LDADD = lib/libtrutil.la

# The ReadyToRun reader's driver for tests/dotnet/r2r.sh: lines of "IMAGE
# MAP_START MAP_OFFSET ADDRESS" in, the name of the method at each address
# out.
check_PROGRAMS += tests/lib/r2r-lookup
tests_lib_r2r_lookup_SOURCES = tests/lib/r2r-lookup.c
tests_lib_r2r_lookup_LDADD = lib/libtrutil.la

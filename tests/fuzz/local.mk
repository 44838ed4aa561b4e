# Fuzz tests: libFuzzer harnesses built with clang by tests/fuzz/build.sh
# (the project's own compiler may be gcc), run for a bounded number of
# inputs by tests/fuzz/run.sh.  The harnesses link the core's sources as the
# tracerig program does, so this file hands the build script make's own
# lists and flags: a file moved or added elsewhere needs no change here
# (the internal library lib/libtrutil.la is compiled for the fuzzers too).
# The internal libraries are linked as static archives there, which carry
# no list of what they need: their LIBADD follow tracerig_LDADD.
fuzz_targets = profile jit mapharvest report elf nettrace r2r
TESTS_SLOWEST += tests/fuzz/run.sh
dist_check_SCRIPTS += tests/fuzz/run.sh tests/fuzz/build.sh
EXTRA_DIST += $(fuzz_targets:%=tests/fuzz/fuzz_%.c) tests/fuzz/corpus tests/fuzz/README.md
check_DATA = tests/fuzz/build.env
CLEANFILES += tests/fuzz/build.env
.PHONY: clean-fuzz
clean-local: clean-fuzz
clean-fuzz:
	-rm -rf tests/fuzz/bin tests/fuzz/obj tests/fuzz/artifacts

# Written with $(file): the flags hold quotes that no shell may interpret.
tests/fuzz/build.env: Makefile
	$(AM_V_GEN)$(shell $(MKDIR_P) tests/fuzz)$(file >$@,targets=$(fuzz_targets))$(file \
	>>$@,core_sources=$(filter %.c,$(core_libtrcore_la_SOURCES)))$(file \
	>>$@,mapharvest_sources=$(filter %.c,$(mapharvest_sources)))$(file \
	>>$@,libtrutil_sources=$(filter %.c,$(lib_libtrutil_la_SOURCES)))$(file \
	>>$@,cppflags=$(DEFS) $(AM_CPPFLAGS) $(INIH_CFLAGS) $(LIBELF_CFLAGS) $(LIBZIP_CFLAGS))$(file \
	>>$@,libs=$(tracerig_LDADD) $(lib_libtrzpiece_la_LIBADD) $(lib_libtrpprof_la_LIBADD) \
	$(lib_libtrelf_la_LIBADD) $(LIBS))$(file \
	>>$@,san_cflags=$(SAN_CFLAGS))touch $@

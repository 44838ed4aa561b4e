# The shared symbolizer (owned by core/symbols/): one concern per file.
tr_symbols_sources = \
	core/symbols/symbolizer.c core/symbols/symbolizer.h \
	core/symbols/frames.c core/symbols/frames.h \
	core/symbols/interned.c core/symbols/interned.h \
	core/symbols/symtab.c core/symbols/symtab.h \
	core/symbols/r2rsym.c core/symbols/r2rsym.h \
	core/symbols/procfs.c core/symbols/procfs.h \
	core/symbols/elfsym.c core/symbols/elfsym.h \
	core/symbols/kallsyms.c core/symbols/kallsyms.h \
	core/symbols/jit.c core/symbols/jit.h \
	core/symbols/demangle.c core/symbols/demangle.h

# ---- unit tests: the symbolizer against real processes and files
check_PROGRAMS += tests/symbols/test_symbols tests/symbols/test_flamegraph_svg tests/symbols/fixture
TESTS += tests/symbols/test_symbols tests/symbols/test_flamegraph_svg
UNIT_TESTS += tests/symbols/test_symbols tests/symbols/test_flamegraph_svg
# Which name an address gets among several symbols (no root).
check_PROGRAMS += tests/symbols/test_symtab
TESTS += tests/symbols/test_symtab
UNIT_TESTS += tests/symbols/test_symtab
tests_symbols_test_symtab_LDADD = $(tr_core_libs)
tests_symbols_test_symbols_CFLAGS = $(AM_CFLAGS) $(LIBELF_CFLAGS)
tests_symbols_test_symbols_LDADD = $(tr_core_libs)
# The test runs the fixture and looks its library up by path.
EXTRA_tests_symbols_test_symbols_DEPENDENCIES = tests/symbols/fixture tests/symbols/libfixture.la

tests_symbols_test_flamegraph_svg_LDADD = $(tr_core_libs)

# Fixtures: a PIE with known, not inlined functions (no sanitizers, so the
# copy run inside a namespace needs nothing but libc) and a shared library.
tests_symbols_fixture_SOURCES = tests/symbols/fixture.c
tests_symbols_fixture_CFLAGS = $(WARN_CFLAGS) -O0 -g -fPIE -fno-omit-frame-pointer
tests_symbols_fixture_LDFLAGS = -pie
check_LTLIBRARIES += tests/symbols/libfixture.la
tests_symbols_libfixture_la_SOURCES = tests/symbols/libfixture.c
tests_symbols_libfixture_la_CFLAGS = $(WARN_CFLAGS) -O0 -g
tests_symbols_libfixture_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

EXTRA_DIST += bench/symbols/run.sh bench/symbols/symbench.c

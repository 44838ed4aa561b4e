dist_man_MANS += docs/tracerig.1 docs/tracerig.ini.5
dist_doc_DATA += docs/profile-reference.md
EXTRA_DIST += docs/PERFORMANCE.md

# The profile reference is generated from the plugins' key tables, so it
# cannot drift from what tracerig accepts; tests/core/docs.sh checks it.
profile-reference: tracerig $(plugin_LTLIBRARIES)
	TRACERIG_PLUGIN_PATH= ./tracerig --profile-reference > $(srcdir)/docs/profile-reference.md
.PHONY: profile-reference

# The plugin-writing guide and its example, installed with the docs so a
# site can start its own plugin from them.  tests/core/example_plugin.sh
# builds the example against the installed header and .pc, then runs it.
dist_doc_DATA += docs/writing-a-plugin.md docs/ARCHITECTURE.md docs/pprof.md docs/flight.md
exampledir = $(docdir)/example
dist_example_DATA = docs/example/loadavg.c docs/example/Makefile
TESTS += tests/core/example_plugin.sh
dist_check_SCRIPTS += tests/core/example_plugin.sh

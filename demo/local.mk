# The built-in demo workload: known functions with a known CPU split
# (demo_hot 60%, demo_warm 30%, demo_cool 10%), for the quick start and the
# perf_events tests.  Frame pointers, no inlining, every symbol in .dynsym.
noinst_PROGRAMS += demo/tracerig-demo
demo_tracerig_demo_SOURCES = demo/tracerig-demo.c
# No sanitizers even in the ASan build: LeakSanitizer's stop-the-world
# helper is a process of its own, which would show up in the samples.
demo_tracerig_demo_CFLAGS = $(WARN_CFLAGS) -pthread -O1 -fno-omit-frame-pointer -fno-inline \
	-fno-optimize-sibling-calls -g
demo_tracerig_demo_LDFLAGS = -pthread -rdynamic

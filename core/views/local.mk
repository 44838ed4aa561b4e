# Views joined from what the sources staged: flame graphs, the wall-clock
# view, stack sets and their export.  Below the session: it includes
# nothing from it.
tr_views_sources = \
	core/views/flamegraph.c core/views/flamegraph.h \
	core/views/wall.c core/views/wall.h \
	core/views/stackset.c core/views/stackset.h \
	core/views/export.c core/views/export.h \
	core/views/stacks.c core/views/stacks.h

# The session and its supervision: the lifecycle (session.c, which
# prepare.c, check.c, mode.c, record.c, snapshots.c and salvage.c carry out),
# the plugins it loads and the services it offers them, their supervision,
# flight mode and its triggers, and the session's side of its control socket.
tr_session_sources = \
	core/session/session.c core/session/session.h core/session/options.h \
	core/session/steps.c core/session/steps.h \
	core/session/prepare.c core/session/check.c core/session/record.c core/session/snapshots.c core/session/salvage.c \
	core/session/mode.c core/session/mode.h \
	core/session/summary.c core/session/summary.h \
	core/session/manifest.c core/session/manifest.h \
	core/session/ctx.c core/session/ctx.h \
	core/session/phase.c core/session/phase.h \
	core/session/reaper.c core/session/reaper.h \
	core/session/supervise.c core/session/supervise.h \
	core/session/watchdog.c core/session/watchdog.h \
	core/session/profile.c core/session/profile.h \
	core/session/keys.c core/session/keys.h \
	core/session/loader.c core/session/loader.h \
	core/session/backends.c core/session/backends.h \
	core/session/services.c core/session/services.h core/session/settings.h \
	core/session/pids.c core/session/pids.h \
	core/session/target.c core/session/target.h \
	core/session/flight.c core/session/flight.h \
	core/session/triggers.c core/session/triggers.h \
	core/session/cputrigger.c core/session/cputrigger.h \
	core/session/exitwatch.c core/session/exitwatch.h \
	core/session/control.c core/session/control.h \
	core/session/remote.c core/session/remote.h \
	core/session/status.c core/session/status.h

# The index of the in-tree backends (core/session/backends.h), from their
# descriptors.
backend_descriptors = $(sort $(wildcard $(top_srcdir)/plugins/*/plugin.c))
BUILT_SOURCES += core/session/backends.inc
CLEANFILES += core/session/backends.inc
EXTRA_DIST += scripts/backends-index.sh
core/session/backends.inc: $(backend_descriptors) $(top_srcdir)/scripts/backends-index.sh
	$(AM_V_GEN)$(MKDIR_P) core/session && bash $(top_srcdir)/scripts/backends-index.sh $@ $(backend_descriptors)

/* One collection session: the loaded plugins, the targets, the staging
 * area, and the lifecycle that drives them. */
#ifndef TR_SESSION_H
#define TR_SESSION_H

#include <stdint.h>
#include <sys/types.h>
#include "tracerig-private/ext.h"

#include "core/archive/staging.h"
#include "core/views/wall.h"
#include "phase.h"
#include "profile.h"
#include "settings.h"
#include "target.h"
#include "triggers.h"

struct tracerig_ctx;
struct tr_options;
struct tr_symbolizer;
struct tr_sideband;
struct tr_remote;
struct tr_mode_ops;

struct tr_session {
	const struct tr_options *opts;
	const struct tr_mode_ops *mode; /* [tracerig] mode, chosen in prepare */
	struct tr_profile profile;
	char *profile_path;
	char *conf_path;

	struct tracerig_ctx **sources;
	size_t n_sources;
	struct tracerig_ctx *packager;

	struct tracerig_targets targets;
	struct tr_command command;
	char **command_env; /* "NAME=value", NULL-terminated */
	size_t n_command_env;

	struct tr_settings settings; /* [tracerig] */
	struct tracerig_archive archive;
	struct tr_output *output; /* where the archive goes (core/archive/output.c) */
	long long duration_ms;
	struct tr_wall_pprof wall_pprof; /* the core's wall.pb.gz, for the manifest */

	uint64_t start_mono_ns, start_real_ns, end_mono_ns;
	uint64_t window_start_ns; /* every source started: -d counts from here */
	enum tr_end_reason end_reason;
	int collecting; /* every required source started */
	int command_started;
	int command_ended;      /* tracerig ended it (end_command) */
	int command_exec_errno;

	int sfd;     /* signalfd of SIGINT, SIGTERM, SIGCHLD */
	int signals; /* SIGINT/SIGTERM received: the first stops, a second aborts */
	struct {     /* the first of them, to know the same request sent twice */
		uint32_t signo, pid;
		uint64_t read_ns;
	} stop_signal;
	char died_why[256]; /* set by the watchdog when it salvages */
	pid_t died_pid;

	struct tr_symbolizer *symbolizer;
	struct tr_pids *pids;         /* processes the sources observed */
	struct tr_wall_views *views;  /* folded views declared for the wall step */
	struct tr_flight *flight;     /* flight mode's window, triggers, snapshot */
	struct tr_stream *stream;     /* entries deflated while they grow */
	struct tr_sideband *sideband; /* when no source records one */
	struct tr_remote *remote;     /* detached: the control socket */
	struct tr_triggers triggers;  /* flight mode's automatic triggers */
};

/* Loads the profile and plugins, validates everything.  Returns 0 or an
 * exit status (exitcodes.h). */
int tr_session_prepare(struct tr_session *s, const struct tr_options *opts);
int tr_session_run(struct tr_session *s);
int tr_session_check(struct tr_session *s); /* check.c */
void tr_session_free(struct tr_session *s);

/* For the session's own files. */
/* Forks the watchdog; `staged`: a session with a staging directory to
 * salvage, not a --check.  0 or -errno. */
int tr_session_start_watchdog(struct tr_session *s, int staged);
/* The profile errors plugins said (config_error), said as the core says
 * its own; 0 when none (check.c). */
int tr_session_config_errors(const struct tr_session *s, int checking);

/* The ends of collection the modes call (mode.h). */
/* Record: stops the sources, has them flush, writes the archive.
 * Returns the session's exit status. */
int tr_session_package(struct tr_session *s);
/* Flight (snapshots.c): the sources stop and a final snapshot holds the
 * last window; the session's own staging (the sources' rotating files)
 * goes.  Returns the session's exit status. */
int tr_session_snapshot_and_stop(struct tr_session *s);
/* Flight: the snapshots asked for while collecting.  1 when the session
 * must end: a SIGINT/SIGTERM came while one was written, or a source
 * failed in it. */
int tr_session_serve_snapshots(struct tr_session *s);

#endif

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/archive/output.h"
#include "core/archive/sideband.h"
#include "core/archive/stream.h"
#include "core/exitcodes.h"
#include "core/log.h"
#include "core/symbols/symbolizer.h"
#include "ctx.h"
#include "flight.h"
#include "lib/opener.h"
#include "loader.h"
#include "mode.h"
#include "options.h"
#include "pids.h"
#include "remote.h"
#include "services.h"
#include "session.h"
#include "status.h"
#include "steps.h"
#include "supervise.h"
#include "watchdog.h"

/* ---------------- running ---------------- */

static void fini_all(struct tr_session *s)
{
	for (size_t i = s->n_sources + 1; i-- > 0;) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;

		if (!ctx || !ctx->driver)
			continue;
		if (ctx->state && !ctx->fault_signal && !ctx->hung_ms)
			tr_session_run_call(s, ctx, TR_CALL_FINI, NULL, s->settings.stop_timeout_ms,
					    "finishing");
		tr_driver_join(ctx);
	}
}

/* What a plugin that failed to start had set up goes (unless it is stuck
 * or crashed: then the watchdog and the driver's end take care of it). */
static void fini_failed(struct tr_session *s, struct tracerig_ctx *ctx)
{
	if (ctx->state && !ctx->fault_signal && !ctx->hung_ms)
		tr_session_run_call(s, ctx, TR_CALL_FINI, NULL, s->settings.stop_timeout_ms,
				    "starting");
}

/* A required backend or the packager that could not do `what` ends the
 * session before anything is collected: -1; any other plugin: 0. */
static int essential_failed(struct tr_session *s, struct tracerig_ctx *ctx, const char *what)
{
	if (!ctx->required && ctx != s->packager)
		return 0;
	tr_err("%s %s could not %s: nothing was collected",
	       ctx == s->packager ? "the packager" : "required backend", ctx->plugin->name, what);
	return -1;
}

/* After `ctx`'s init: a source the mode cannot run (flight mode's without
 * a snapshot callback, which cannot keep a window) is left out, or ends
 * the session when it is required.  -1 when the session cannot go on. */
static int admit(struct tr_session *s, struct tracerig_ctx *ctx)
{
	char why[256];

	if (s->mode->admits(s, ctx, why, sizeof(why)) == 0)
		return 0;
	fini_failed(s, ctx);
	ctx->state = NULL;
	ctx->phase = TR_PHASE_FAILED;
	ctx->failed_in = "init";
	ctx->error = -ENOTSUP;
	tr_watchdog_plugin(ctx->plugin->name, "failed");
	if (ctx->required) {
		tr_err("%s: %s; the profile requires it: %s; nothing was collected",
		       ctx->plugin->name, why, s->mode->if_required);
		return -1;
	}
	tr_warn("%s: %s; %s", ctx->plugin->name, why, s->mode->if_optional);
	return 0;
}

/* Every plugin's validate, before any init: the profile's mistakes are
 * said all at once and nothing starts.  -1: a required plugin or the
 * packager could not check (it crashed, ran out of memory); -2: the
 * profile is wrong. */
static int validate_all(struct tr_session *s)
{
	for (size_t i = 0; i <= s->n_sources; i++) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;
		int ret;

		tr_judge_list_choices(ctx, NULL, 0);
		ret = tr_driver_start(ctx);
		if (ret == 0 && ctx->plugin->validate)
			ret = tr_session_run_call(s, ctx, TR_CALL_VALIDATE, NULL,
						  s->settings.start_timeout_ms, "starting");
		if (ret >= 0 || __atomic_load_n(&ctx->config_errors, __ATOMIC_RELAXED))
			continue;
		if (ctx->phase != TR_PHASE_FAILED)
			tr_session_fail_plugin(ctx, "validate", ret);
		if (essential_failed(s, ctx, "check its profile section") < 0)
			return -1;
	}
	return tr_session_config_errors(s, 0) ? -2 : 0;
}

/* -1: a required plugin or the packager failed; -2: the profile is wrong
 * (every plugin was given the chance to say all that is wrong in it). */
static int init_all(struct tr_session *s)
{
	int ret = validate_all(s);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i <= s->n_sources; i++) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;

		if (ctx->phase == TR_PHASE_FAILED || !ctx->driver)
			continue;
		ret = tr_session_run_call(s, ctx, TR_CALL_INIT, NULL, s->settings.start_timeout_ms,
					  "starting");
		if (ret < 0 && __atomic_load_n(&ctx->config_errors, __ATOMIC_RELAXED)) {
			/* Said already (and what else it said, as it said it); the
			 * others may have more to say. */
			tr_ctx_say_reason(ctx);
			ctx->phase = TR_PHASE_FAILED;
			ctx->failed_in = "init";
			ctx->error = ret;
			fini_failed(s, ctx);
			continue;
		}
		if (ret < 0) {
			if (ctx->phase != TR_PHASE_FAILED)
				tr_session_fail_plugin(ctx, "init", ret);
			fini_failed(s, ctx);
			if (essential_failed(s, ctx, "be initialised") < 0)
				return -1;
			continue;
		}
		ctx->phase = TR_PHASE_INITIALIZED;
		if (admit(s, ctx) < 0)
			return -1;
	}
	return tr_session_config_errors(s, 0) ? -2 : 0;
}

static int start_all(struct tr_session *s)
{
	struct tracerig_ctx **ready = calloc(s->n_sources + 1, sizeof(*ready));
	int *rets = calloc(s->n_sources + 1, sizeof(*rets));
	size_t n = 0, usable = 0;
	int ret = 0;

	if (!ready || !rets) {
		free(ready);
		free(rets);
		return -1;
	}
	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->phase == TR_PHASE_INITIALIZED)
			ready[n++] = s->sources[i];
	/* Together: the window opens when the slowest source is ready. */
	tr_session_run_calls(s, ready, n, TR_CALL_START, NULL, s->settings.start_timeout_ms, rets,
			     "starting");
	for (size_t i = 0; i < n; i++) {
		struct tracerig_ctx *ctx = ready[i];

		if (ctx->phase != TR_PHASE_FAILED && rets[i] < 0)
			tr_session_fail_plugin(ctx, "start", rets[i]);
		if (ctx->phase == TR_PHASE_FAILED) {
			if (ctx->required) {
				tr_err("required backend %s could not start: stopping the others; "
				       "nothing was packaged", ctx->plugin->name);
				ret = -1;
			}
			continue;
		}
		ctx->phase = TR_PHASE_STARTED;
		ctx->window_start_ns = tr_driver_returned_ns(ctx);
		tr_watchdog_plugin(ctx->plugin->name, "started");
		usable++;
	}
	if (ret == 0 && usable == 0) {
		tr_err("no backend could start: nothing to collect (see the errors above; "
		       "`tracerig --check -c %s` tells what each backend needs)",
		       s->opts->profile);
		ret = -1;
	}
	free(ready);
	free(rets);
	return ret;
}

static int targets_alive(const struct tr_session *s)
{
	for (size_t i = 0; i < s->targets.n_pids; i++)
		if (tr_pid_alive(s->targets.pids[i]))
			return 1;
	return 0;
}

static void wait_for_end(struct tr_session *s)
{
	uint64_t deadline = s->duration_ms > 0
				    ? s->window_start_ns + (uint64_t)s->duration_ms * 1000000ull : 0;

	for (;;) {
		struct pollfd pfd[4] = { { .fd = s->sfd, .events = POLLIN },
					 { .fd = tr_supervise_wake_fd(), .events = POLLIN },
					 { .fd = tr_remote_fd(s), .events = POLLIN },
					 { .fd = tr_triggers_fd(&s->triggers), .events = POLLIN } };
		uint64_t now = tr_session_now_ns(CLOCK_MONOTONIC);
		int timeout = 500;

		if (deadline) {
			if (now >= deadline) {
				s->end_reason = TR_END_DURATION;
				return;
			}
			if ((deadline - now) / 1000000 < (uint64_t)timeout)
				timeout = (int)((deadline - now) / 1000000) + 1;
		}
		tr_status_update();
		if (poll(pfd, 4, timeout) > 0) {
			if (pfd[1].revents)
				tr_supervise_drain();
			if (pfd[2].revents && tr_remote_serve(s)) {
				s->end_reason = TR_END_STOP_REQUEST;
				return;
			}
			if (pfd[0].revents) {
				tr_session_drain_signals(s, NULL);
				if (s->signals) {
					s->end_reason = TR_END_SIGNAL;
					return;
				}
			}
		}
		if (tr_supervise_fault_pending()) {
			tr_status_end();
			tr_session_collect_faults(s);
			s->end_reason = TR_END_PLUGIN_FAULT;
			return;
		}
		if (s->mode->serve(s, tr_session_now_ns(CLOCK_MONOTONIC)))
			return;
		if (s->targets.command_pid && tr_command_poll(&s->command)) {
			s->end_reason = TR_END_COMMAND;
			return;
		}
		if (s->targets.n_pids && !s->targets.command_pid && !targets_alive(s)) {
			s->end_reason = TR_END_TARGETS_GONE;
			tr_info("every target process has exited: ending the session");
			return;
		}
	}
}

static int block_signals(const struct tr_mode_ops *mode, sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGCHLD);
	/* A flight recorder's trigger; in record mode it keeps its default
	 * action. */
	if (mode->snapshot_signal)
		sigaddset(set, mode->snapshot_signal);
	/* Threads that plugins start inherit this mask, so signals reach the
	 * signalfd of the main thread only. */
	if (pthread_sigmask(SIG_BLOCK, set, NULL) != 0)
		return -1;
	return signalfd(-1, set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* The process model needs a side-band stream (mappings, execs, forks); the
 * core records one when a source wants the model fed and none records it. */
static void sideband_start(struct tr_session *s, enum tr_phase phase)
{
	int wanted = 0, ret;
	char why[256];

	if (s->sideband)
		return;
	for (size_t i = 0; i < s->n_sources; i++) {
		if (s->sources[i]->phase != phase)
			continue;
		if (s->sources[i]->model == TRACERIG_MODEL_RECORDED)
			return;
		wanted |= s->sources[i]->model == TRACERIG_MODEL_WANTED;
	}
	if (!wanted || !s->symbolizer)
		return;
	why[0] = '\0';
	ret = tr_sideband_open(&s->sideband, s->symbolizer, &s->targets, s->archive.dir, why,
			       sizeof(why));
	if (ret == 0 && (ret = tr_sideband_start(s->sideband)) < 0)
		snprintf(why, sizeof(why), "cannot start it: %s", strerror(-ret));
	if (ret < 0) {
		tr_warn("no side-band recording for the process model: %s (frames of libraries "
			"loaded late and of processes that exit early may stay unnamed)", why);
		tr_sideband_free(s->sideband);
		s->sideband = NULL;
		return;
	}
	tr_log(TRACERIG_LOG_DEBUG, NULL, "recording the side-band for the process model");
}

static int start_command_and_sources(struct tr_session *s)
{
	int ret;

	if (s->opts->command) {
		ret = tr_command_spawn(&s->command, s->opts->command, s->command_env);
		if (ret < 0) {
			tr_err("cannot start '%s': %s", s->opts->command[0], strerror(-ret));
			return -1;
		}
		s->targets.command_pid = s->command.pid;
		s->targets.command = s->opts->command[0];
		tr_watchdog_command(s->command.pid);
		tr_pids_observe(s->pids, s->command.pid);
	}
	sideband_start(s, TR_PHASE_INITIALIZED);
	s->start_mono_ns = tr_session_now_ns(CLOCK_MONOTONIC);
	s->start_real_ns = tr_session_now_ns(CLOCK_REALTIME);
	if (start_all(s) < 0) {
		tr_session_stop_started(s);
		tr_command_abort(&s->command);
		return -1;
	}
	/* The source that was to record the side-band did not start (an
	 * optional perf_events without permission): record it now. */
	sideband_start(s, TR_PHASE_STARTED);
	/* The window opens once every source is ready, so setup time does not
	 * count toward -d. */
	s->window_start_ns = tr_session_now_ns(CLOCK_MONOTONIC);
	s->collecting = 1;
	tr_watchdog_collecting(s->start_mono_ns, s->start_real_ns);
	if (s->opts->command) {
		ret = tr_command_release(&s->command);
		if (ret < 0) {
			/* Still packaged: the manifest records why the command
			 * never ran, and system-wide sources have their data. */
			s->command_exec_errno = -ret;
			tr_err("cannot run '%s': %s (%s)", s->opts->command[0], strerror(-ret),
			       ret == -ENOENT ? "check the command name and PATH"
					      : "check that it is an executable file");
			waitpid(s->command.pid, &s->command.status, 0);
			s->command.reaped = 1;
			s->end_reason = TR_END_COMMAND;
		}
		s->command_started = ret == 0;
	}
	return 0;
}

/* The staging directory, and the run log in it.  0 or -1 once said. */
static int open_staging(struct tr_session *s)
{
	char log_path[PATH_MAX];
	int ret;

	ret = tr_staging_create(&s->archive, tr_output_path(s->output));
	if (ret < 0) {
		char why[128];

		tr_err("cannot create a staging directory in %s: %s (set TMPDIR to a directory "
		       "with room for the trace)", tr_staging_parent(),
		       tr_output_strerror(ret, why, sizeof(why)));
		return -1;
	}
	snprintf(log_path, sizeof(log_path), "%s/tracerig.log", s->archive.dir);
	if ((ret = tr_log_open_file(log_path)) < 0)
		tr_warn("cannot write %s: %s", log_path, strerror(-ret));
	tr_info("tracerig %s, profile %s, staging in %s", PACKAGE_VERSION, s->profile_path,
		s->archive.dir);
	return 0;
}

/* What watches over the plugins and answers for the session: the
 * watchdog, the control socket of `tracerig stop`, the symbolizer, signals
 * on a signalfd, the supervisor.  0 or -1 once said. */
static int set_up_collector(struct tr_session *s)
{
	sigset_t blocked;
	int ret;

	/* Before any plugin runs or any thread exists: a plain fork. */
	if ((ret = tr_session_start_watchdog(s, 1)) < 0)
		tr_warn("cannot start the watchdog: %s (if tracerig is killed, what it collected "
			"stays unpackaged in %s)", strerror(-ret), s->archive.dir);
	/* After the watchdog's fork: a session that died must not seem to
	 * answer on its socket. */
	if (tr_remote_open(s) < 0)
		return -1;
	s->symbolizer = tr_symbolizer_new();
	if (!s->symbolizer)
		tr_warn("symbolizer unavailable: frames will be addresses");
	s->sfd = block_signals(s->mode, &blocked);
	if (s->sfd < 0 || tr_supervise_init() < 0) {
		tr_err("cannot set up signal handling: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* A line said at the default verbosity, and kept in tracerig.log. */
static void say(const char *line)
{
	tr_info("%s", line);
	if (tr_log_verbosity() >= TRACERIG_LOG_WARN && tr_log_verbosity() < TRACERIG_LOG_INFO)
		fprintf(stderr, "tracerig: %s\n", line);
}

/* One line once collection runs, whether or not stderr is a terminal (a
 * log of a service or a CI job says what ran): what, with what, where to,
 * how it ends. */
static void announce(struct tr_session *s)
{
	const struct tracerig_targets *t = &s->targets;
	char line[1024], dur[32] = "";
	size_t used, n_started = 0;

	if (t->command)
		used = (size_t)snprintf(line, sizeof(line), "collecting %s", t->command);
	else if (t->system_wide)
		used = (size_t)snprintf(line, sizeof(line), "collecting system-wide");
	else
		used = (size_t)snprintf(line, sizeof(line), "collecting pid%s",
					t->n_pids > 1 ? "s" : "");
	for (size_t i = 0; !t->command && !t->system_wide && i < t->n_pids && used < sizeof(line);
	     i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%d", i ? ", " : " ",
					 (int)t->pids[i]);
	for (size_t i = 0; i < s->n_sources && used < sizeof(line); i++) {
		if (s->sources[i]->phase != TR_PHASE_STARTED)
			continue;
		used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s",
					 n_started++ ? ", " : " with ", s->sources[i]->plugin->name);
	}
	if (s->duration_ms > 0)
		snprintf(dur, sizeof(dur), " for %.3gs", s->duration_ms / 1000.0);
	if (used < sizeof(line))
		s->mode->describe(s, dur, line + used, sizeof(line) - used);
	say(line);
}

/* Until the duration, a signal or the command's exit ends the session. */
static void collect(struct tr_session *s)
{
	if (s->end_reason == TR_END_NONE && s->signals)
		s->end_reason = TR_END_SIGNAL;
	if (s->end_reason == TR_END_NONE) {
		announce(s);
		/* A command writing to the same terminal would glue its
		 * output to the progress line. */
		tr_status_begin(s, tr_log_verbosity() >= TRACERIG_LOG_WARN &&
				   !(s->targets.command && (isatty(STDOUT_FILENO) ||
							    isatty(STDERR_FILENO))));
		s->mode->begin(s);
		wait_for_end(s);
		tr_triggers_stop(&s->triggers);
		tr_status_end();
	}
	s->end_mono_ns = tr_session_now_ns(CLOCK_MONOTONIC);
	tr_info("session ended (%s) after %.1fs", tr_end_reason_name(s->end_reason),
		(s->end_mono_ns - s->window_start_ns) / 1e9);
	{
		/* What collecting cost, apart from what the end will (a
		 * launched command is a child: not counted). */
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru) == 0)
			tr_debug("%.0f ms of CPU time used while collecting (user %.0f, system %.0f)",
				 (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
					 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3,
				 ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3,
				 ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3);
	}
	tr_stream_collection_ended(s->stream);
}

static void opener_stuck(const char *path, unsigned int timeout_ms, void *arg)
{
	(void)arg;
	tr_warn("%s: its file system did not answer within %.1f s (a hung FUSE server or "
		"an unreachable network file system?): the frames of the files there stay "
		"unnamed, and the session goes on without them", path, timeout_ms / 1000.0);
}

/* Every open of a traced process's files then happens in a process of its
 * own, which a hung file system can hold but not us (lib/opener.h). */
static void start_opener(struct tr_session *s)
{
	int ret = tr_opener_start((unsigned int)s->settings.open_timeout_ms, opener_stuck, NULL);

	if (ret < 0)
		tr_warn("cannot start the process that opens traced processes' files: %s (a "
			"hung file system may then hold tracerig)", strerror(-ret));
}

int tr_session_run(struct tr_session *s)
{
	int status, ret;

	s->sfd = -1;
	ret = tr_raise_open_files();
	if (ret < 0)
		tr_warn("cannot raise the open-files limit to its hard limit: %s (a session with "
			"many traced objects may run out)",
			strerror(-ret));
	/* Before any thread exists: the opener forks. */
	start_opener(s);
	if (open_staging(s) < 0) {
		tr_opener_stop();
		return TR_EXIT_FAILURE;
	}
	if (set_up_collector(s) < 0) {
		status = TR_EXIT_FAILURE;
	} else if ((ret = init_all(s)) < 0 || start_command_and_sources(s) < 0) {
		tr_command_abort(&s->command);
		status = ret == -2 ? TR_EXIT_USAGE : TR_EXIT_FAILURE;
	} else {
		tr_remote_ready(s);
		collect(s);
		status = s->mode->finish(s);
	}
	/* Before collection began there is nothing in staging worth keeping;
	 * after, a failed packaging leaves it for the user. */
	if (status != TR_EXIT_OK && s->archive.dir && !s->collecting)
		tr_staging_remove(&s->archive);
	tr_watchdog_packaged();
	fini_all(s);
	/* After fini: what a plugin did not clean up itself (it crashed or
	 * hung), the watchdog does. */
	tr_watchdog_done();
	/* Last: whoever waits in `tracerig stop` learns of the archive once
	 * the backends are done too. */
	tr_remote_finish(s, status);
	tr_command_close(&s->command);
	if (s->sfd >= 0)
		close(s->sfd);
	tr_opener_stop();
	tr_log_close_file();
	return status;
}

void tr_session_free(struct tr_session *s)
{
	tr_stream_free(s->stream);
	s->stream = NULL;
	tr_triggers_stop(&s->triggers);
	for (size_t i = 0; i < s->n_sources; i++)
		tr_ctx_free(s->sources[i]);
	free(s->sources);
	tr_ctx_free(s->packager);
	tr_settings_free(&s->settings);
	for (size_t i = 0; i < s->n_command_env; i++)
		free(s->command_env[i]);
	free(s->command_env);
	/* Its threads use the symbolizer. */
	tr_sideband_free(s->sideband);
	if (s->symbolizer)
		tr_symbolizer_free(s->symbolizer);
	tr_staging_free(&s->archive);
	tr_profile_free(&s->profile);
	free(s->profile_path);
	free(s->conf_path);
	tr_output_free(s->output);
	s->output = NULL;
	tr_loader_exit();
	tr_pids_free(s->pids);
	s->pids = NULL;
	tr_wall_views_free(s->views);
	s->views = NULL;
	tr_flight_free(s->flight);
	s->flight = NULL;
}

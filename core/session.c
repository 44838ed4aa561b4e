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

#include "backends.h"
#include "ctx.h"
#include "exitcodes.h"
#include "exitwatch.h"
#include "flight.h"
#include "lib/opener.h"
#include "log.h"
#include "manifest.h"
#include "options.h"
#include "output.h"
#include "pids.h"
#include "remote.h"
#include "services.h"
#include "sideband.h"
#include "session.h"
#include "stream.h"
#include "status.h"
#include "summary.h"
#include "supervise.h"
#include "wall.h"
#include "symbols/symbolizer.h"
#include "watchdog.h"

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------------- the watchdog ---------------- */

static void watchdog_note_phase(void *arg, const char *plugin, const char *phase);
static int watchdog_salvage(void *arg, pid_t collector, const char *why,
			    uint64_t start_mono_ns, uint64_t start_real_ns);

/* The collector died before collection began (tr_watchdog_ops.discard). */
static void watchdog_discard(void *arg)
{
	struct tr_session *s = arg;

	tr_staging_remove(&s->archive);
}

int tr_session_start_watchdog(struct tr_session *s, int staged)
{
	const struct tr_watchdog_ops ops = {
		.arg = s,
		.close_fd = s->opts->ready_fd,
		.note_phase = watchdog_note_phase,
		.salvage = staged ? watchdog_salvage : NULL,
		.discard = staged ? watchdog_discard : NULL,
	};

	return tr_watchdog_start(&ops);
}

/* ---------------- running ---------------- */

static int sources_failed(const struct tr_session *s, int required);

static void abort_session(struct tr_session *s)
{
	tr_status_end();
	tr_err("aborted by a second interrupt: no archive was written; what was collected so "
	       "far is left in %s", s->archive.dir);
	tr_command_abort(&s->command);
	tr_watchdog_abort();
	if (s->archive.output)
		unlink(s->archive.output);
	tr_output_release();
	tr_log_close_file();
	fflush(NULL);
	/* Plugin threads may be mid-call: nothing of theirs is torn down. */
	_exit(TR_EXIT_ABORTED);
}

/* The first SIGINT/SIGTERM, in any phase, means "stop and package"; a
 * second one aborts. */
static void drain_signals(struct tr_session *s, const char *doing)
{
	struct signalfd_siginfo si;

	while (read(s->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			tr_info("SIGUSR1 from PID %u: a snapshot of the last window",
				(unsigned)si.ssi_pid);
			tr_flight_request(TR_TRIGGER_SIGUSR1, -1);
			continue;
		}
		if (si.ssi_signo != SIGINT && si.ssi_signo != SIGTERM)
			continue;
		if (++s->signals > 1)
			abort_session(s);
		if (doing)
			tr_warn("%s while %s: finishing that, then packaging what was collected "
				"(Ctrl-C again aborts without packaging)",
				si.ssi_signo == SIGINT ? "interrupted" : "terminated", doing);
		else
			tr_warn("%s: stopping and packaging what was collected (Ctrl-C again "
				"aborts without packaging)",
				si.ssi_signo == SIGINT ? "interrupted" : "terminated");
	}
}

static void fail_plugin(struct tracerig_ctx *ctx, const char *phase, int err)
{
	ctx->phase = TR_PHASE_FAILED;
	ctx->failed_in = phase;
	ctx->error = err < 0 ? err : -EIO;
	tr_watchdog_plugin(ctx->plugin->name, "failed");
	if (ctx->fault_signal)
		tr_log(TRACERIG_LOG_ERROR, ctx->plugin->name,
		       "crashed (SIG%s) in %s: it gets no more calls; the other backends' data "
		       "is still packaged", sigabbrev_np(ctx->fault_signal)
						  ? sigabbrev_np(ctx->fault_signal) : "?", phase);
	else if (ctx->hung_ms)
		tr_log(TRACERIG_LOG_ERROR, ctx->plugin->name,
		       "%s did not return within %lld ms: abandoned as hung; the other backends' "
		       "data is still packaged (raise [tracerig] %s_timeout if it needs longer)",
		       phase, ctx->hung_ms,
		       strcmp(phase, "init") == 0 ? "start"
		       : strcmp(phase, "fini") == 0 ? "stop" : phase);
	else if (ctx->error == -ENODATA && !strcmp(phase, "init"))
		/* The plugin's own warning said why. */
		tr_log(ctx->required ? TRACERIG_LOG_ERROR : TRACERIG_LOG_INFO, ctx->plugin->name,
		       "left out: nothing it records can come from these targets%s",
		       ctx->required ? " (it is required: the run fails)" : "");
	else
		tr_log(TRACERIG_LOG_ERROR, ctx->plugin->name, "%s failed: %s%s", phase,
		       strerror(-ctx->error),
		       ctx->required || ctx->plugin->kind == TRACERIG_PLUGIN_PACKAGER
			       ? "" : " (optional backend: continuing without it)");
}

static uint64_t now_ms_left(uint64_t deadline)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	return now >= deadline ? 0 : (deadline - now) / 1000000 + 1;
}

/* Hands `call` to every plugin in `ctxs` at once and waits until each has
 * returned, faulted or overrun `timeout_ms`.  Fills rets[]; a plugin that
 * faulted or hung is marked failed here. */
static void run_calls(struct tr_session *s, struct tracerig_ctx **ctxs, size_t n,
			enum tr_call call, struct tracerig_archive *ar, long long timeout_ms,
			int *rets, const char *doing)
{
	uint64_t deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)timeout_ms * 1000000ull;
	int *settled = calloc(n ? n : 1, sizeof(*settled));

	if (!settled) {
		for (size_t i = 0; i < n; i++)
			rets[i] = -ENOMEM; /* not called: says so, never "returned 0" */
		return;
	}
	for (size_t i = 0; i < n; i++) {
		rets[i] = tr_driver_post(ctxs[i], call, ar);
		if (rets[i] < 0)
			settled[i] = 1;
	}
	for (;;) {
		struct pollfd pfd[2] = { { .fd = s->sfd, .events = POLLIN },
					 { .fd = tr_supervise_wake_fd(), .events = POLLIN } };
		size_t pending = 0;
		uint64_t left;

		for (size_t i = 0; i < n; i++) {
			enum tr_call_state st;

			if (settled[i])
				continue;
			st = tr_driver_poll(ctxs[i], &rets[i]);
			if (st == TR_CALL_PENDING) {
				pending++;
				continue;
			}
			settled[i] = 1;
			if (st != TR_CALL_RETURNED) {
				rets[i] = -EOWNERDEAD;
				fail_plugin(ctxs[i], tr_call_name(call), rets[i]);
			}
		}
		if (!pending)
			break;
		left = now_ms_left(deadline);
		if (left == 0) {
			for (size_t i = 0; i < n; i++) {
				if (settled[i])
					continue;
				tr_driver_abandon(ctxs[i]);
				ctxs[i]->hung_ms = timeout_ms;
				rets[i] = -ETIMEDOUT;
				fail_plugin(ctxs[i], tr_call_name(call), rets[i]);
			}
			break;
		}
		if (poll(pfd, 2, left > 500 ? 500 : (int)left) > 0) {
			if (pfd[1].revents)
				tr_supervise_drain();
			if (pfd[0].revents)
				drain_signals(s, doing);
		}
	}
	free(settled);
}

/* One plugin, one call. */
static int run_call(struct tr_session *s, struct tracerig_ctx *ctx, enum tr_call call,
		    struct tracerig_archive *ar, long long timeout_ms, const char *doing)
{
	int ret = 0;

	run_calls(s, &ctx, 1, call, ar, timeout_ms, &ret, doing);
	return ret;
}

static void stop_started(struct tr_session *s)
{
	struct tracerig_ctx **started = calloc(s->n_sources + 1, sizeof(*started));
	int *rets = calloc(s->n_sources + 1, sizeof(*rets));
	uint64_t asked;
	size_t n = 0;

	if (!started || !rets) {
		free(started);
		free(rets);
		return;
	}
	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->phase == TR_PHASE_STARTED)
			started[n++] = s->sources[i];
	/* Together, so that every source's window ends at the same instant:
	 * one that takes long to stop (LTTng) does not lengthen the others'. */
	asked = now_ns(CLOCK_MONOTONIC);
	run_calls(s, started, n, TR_CALL_STOP, NULL, s->settings.stop_timeout_ms, rets, "stopping");
	for (size_t i = 0; i < n; i++) {
		started[i]->window_end_ns = asked;
		if (started[i]->phase == TR_PHASE_FAILED)
			continue;
		if (rets[i] < 0)
			tr_log(TRACERIG_LOG_WARN, started[i]->plugin->name,
			       "stop failed: %s (flushing what it has)", strerror(-rets[i]));
		started[i]->phase = TR_PHASE_STOPPED;
		tr_watchdog_plugin(started[i]->plugin->name, "stopped");
	}
	free(started);
	free(rets);
}

static void fini_all(struct tr_session *s)
{
	for (size_t i = s->n_sources + 1; i-- > 0;) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;

		if (!ctx || !ctx->driver)
			continue;
		if (ctx->state && !ctx->fault_signal && !ctx->hung_ms)
			run_call(s, ctx, TR_CALL_FINI, NULL, s->settings.stop_timeout_ms,
				 "finishing");
		tr_driver_join(ctx);
	}
}

/* After `ctx`'s init in flight mode: a source with no snapshot callback
 * cannot keep a window.  -1 when the session cannot go on. */
static int flight_support(struct tr_session *s, struct tracerig_ctx *ctx)
{
	if (!tr_flight_enabled() || ctx == s->packager || tr_flight_supported(ctx))
		return 0;
	if (ctx->state && !ctx->fault_signal && !ctx->hung_ms)
		run_call(s, ctx, TR_CALL_FINI, NULL, s->settings.stop_timeout_ms, "starting");
	ctx->state = NULL;
	ctx->phase = TR_PHASE_FAILED;
	ctx->failed_in = "init";
	ctx->error = -ENOTSUP;
	tr_watchdog_plugin(ctx->plugin->name, "failed");
	if (ctx->required) {
		tr_err("%s: mode = flight is not supported yet; the profile requires it: remove "
		       "it from [tracerig] required (and its section), or use mode = record; "
		       "nothing was collected", ctx->plugin->name);
		return -1;
	}
	tr_warn("%s: mode = flight is not supported yet; left out of this flight session "
		"(optional here)", ctx->plugin->name);
	return 0;
}

/* -1: a required plugin or the packager failed; -2: the profile is wrong
 * (every plugin was given the chance to say all that is wrong in it). */
static int init_all(struct tr_session *s)
{
	for (size_t i = 0; i <= s->n_sources; i++) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;
		int ret;

		ret = tr_driver_start(ctx);
		if (ret == 0)
			ret = run_call(s, ctx, TR_CALL_INIT, NULL, s->settings.start_timeout_ms,
				       "starting");
		if (ret < 0 && ctx->config_errors) {
			/* Said already; the others may have more to say. */
			ctx->phase = TR_PHASE_FAILED;
			ctx->failed_in = "init";
			ctx->error = ret;
			if (ctx->state && !ctx->fault_signal && !ctx->hung_ms)
				run_call(s, ctx, TR_CALL_FINI, NULL, s->settings.stop_timeout_ms,
					 "starting");
			continue;
		}
		if (ret < 0) {
			if (ctx->phase != TR_PHASE_FAILED)
				fail_plugin(ctx, "init", ret);
			if (ctx->state && !ctx->fault_signal && !ctx->hung_ms)
				run_call(s, ctx, TR_CALL_FINI, NULL, s->settings.stop_timeout_ms,
					 "starting");
			if (ctx->required || ctx == s->packager) {
				tr_err("%s %s could not be initialised: nothing was collected",
				       ctx == s->packager ? "the packager" : "required backend",
				       ctx->plugin->name);
				return -1;
			}
			continue;
		}
		ctx->phase = TR_PHASE_INITIALIZED;
		if (flight_support(s, ctx) < 0)
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
	run_calls(s, ready, n, TR_CALL_START, NULL, s->settings.start_timeout_ms, rets, "starting");
	for (size_t i = 0; i < n; i++) {
		struct tracerig_ctx *ctx = ready[i];

		if (ctx->phase != TR_PHASE_FAILED && rets[i] < 0)
			fail_plugin(ctx, "start", rets[i]);
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

/* A plugin faulted while collecting: which one. */
static void collect_faults(struct tr_session *s)
{
	for (size_t i = 0; i < s->n_sources; i++) {
		struct tracerig_ctx *ctx = s->sources[i];

		if (ctx->fault_signal && ctx->phase != TR_PHASE_FAILED) {
			ctx->window_end_ns = now_ns(CLOCK_MONOTONIC);
			fail_plugin(ctx, "collect", -EOWNERDEAD);
		}
	}
}

/* ---------------- flight mode: snapshots ---------------- */

/* Runs the sources' snapshot callbacks on the flight thread while this
 * thread watches signals (a SIGTERM now is honoured once the snapshot is
 * written: nothing is lost), faults and the flush deadline.  Returns 0; 1
 * when a source faulted elsewhere meanwhile (the snapshot is whole, the
 * session then ends); -1 when one faulted or hung in its callback (no
 * snapshot, the session ends). */
static int run_snapshot_callbacks(struct tr_session *s, struct tr_snapshot *snap)
{
	struct tracerig_ctx **ctxs = calloc(s->n_sources + 1, sizeof(*ctxs));
	int *rets = calloc(s->n_sources + 1, sizeof(*rets));
	uint64_t deadline =
		now_ns(CLOCK_MONOTONIC) + (uint64_t)s->settings.flush_timeout_ms * 1000000ull;
	struct tr_flight_job *job = NULL;
	int ret, faulted = 0, abandoned = 0;
	size_t n = 0;

	if (!ctxs || !rets) {
		free(ctxs);
		free(rets);
		return 0;
	}
	/* In reverse profile order, as stop runs: a source that feeds the
	 * symbolizer (mapharvest's JIT maps) comes before those that name
	 * frames with it, wherever the profile lists it. */
	for (size_t i = s->n_sources; i-- > 0;)
		if ((s->sources[i]->phase == TR_PHASE_STARTED ||
		     s->sources[i]->phase == TR_PHASE_STOPPED) && tr_flight_supported(s->sources[i]))
			ctxs[n++] = s->sources[i];
	if (n && (ret = tr_flight_job_start(ctxs, n, snap, &job)) < 0) {
		tr_err("snapshot: cannot start its thread: %s", strerror(-ret));
		n = 0;
	}
	ret = 0;
	while (job && !tr_flight_job_done(job, rets)) {
		struct pollfd pfd[3] = { { .fd = s->sfd, .events = POLLIN },
					 { .fd = tr_supervise_wake_fd(), .events = POLLIN },
					 { .fd = tr_flight_job_fd(job), .events = POLLIN } };
		struct tracerig_ctx *busy = tr_flight_job_current(job);
		uint64_t left = now_ms_left(deadline);

		/* A fault elsewhere ends the session once the snapshot is
		 * written; one in the callback running leaves it unfinished. */
		if (tr_supervise_fault_pending()) {
			collect_faults(s);
			faulted = 1;
		}
		if (busy && busy->fault_signal) {
			abandoned = 1;
			break;
		}
		if (left == 0) {
			if (busy && busy->phase != TR_PHASE_FAILED) {
				busy->hung_ms = s->settings.flush_timeout_ms;
				fail_plugin(busy, "snapshot", -ETIMEDOUT);
			}
			abandoned = 1;
			break;
		}
		if (poll(pfd, 3, left > 500 ? 500 : (int)left) > 0) {
			if (pfd[1].revents)
				tr_supervise_drain();
			if (pfd[0].revents)
				drain_signals(s, "writing a snapshot");
		}
	}
	/* The final snapshot is the session's result, as flush is a
	 * recording's: a source that fails it has failed (a required one
	 * fails the session).  Earlier ones leave that source's data out of
	 * one archive while collection goes on. */
	for (size_t i = 0; !abandoned && i < n; i++) {
		if (rets[i] >= 0)
			continue;
		if (snap->final)
			fail_plugin(ctxs[i], "final snapshot", rets[i]);
		else
			tr_log(TRACERIG_LOG_WARN, ctxs[i]->plugin->name, "snapshot failed: %s (the "
			       "snapshot goes on without its data)", strerror(-rets[i]));
	}
	/* An abandoned job's thread is in a plugin that faulted or hung: it
	 * is left to itself. */
	if (!abandoned)
		tr_flight_job_end(job);
	free(ctxs);
	free(rets);
	return abandoned ? -1 : faulted ? 1 : 0;
}

/* One snapshot of the last window: the sources' entries, the run log so
 * far, the manifest, then the packager, on a staging area of its own; the
 * session's stays as it is.  *path gets the archive (or NULL).  0, or not
 * 0 when a source faulted or hung meanwhile (the session then ends). */
static int take_snapshot(struct tr_session *s, enum tr_trigger trigger, int final, char **path)
{
	/* The final snapshot's window ends when the session did, not once
	 * the sources have stopped: the stop's own time holds nothing. */
	uint64_t to = final && s->end_mono_ns ? s->end_mono_ns : now_ns(CLOCK_MONOTONIC);
	uint64_t window = tr_flight_window_ns();
	uint64_t from = to > s->window_start_ns + window ? to - window : s->window_start_ns;
	char log_path[PATH_MAX], why[128];
	struct tracerig_window range;
	struct tr_snapshot snap;
	int ok = 0, ret = 0;

	*path = NULL;
	if (tr_snapshot_begin(&snap, trigger, from, to) < 0)
		goto out;
	snap.final = final;
	tr_info("snapshot %u (%s): the last %.1f s", snap.seq, tr_trigger_name(trigger),
		(to - from) / 1e9);
	if (s->packager->phase == TR_PHASE_FAILED) {
		tr_err("snapshot: the packager failed earlier: no archive can be written");
		goto out;
	}
	ret = run_snapshot_callbacks(s, &snap);
	if (ret < 0) {
		tr_err("snapshot %u: a backend crashed or hung while writing it: no archive",
		       snap.seq);
		goto out;
	}
	/* The wall-clock view of the window, from the views the sources
	 * declared in their callbacks, as after a recording's flush. */
	memset(&s->wall_pprof, 0, sizeof(s->wall_pprof));
	(void)tr_wall_write_dated(&snap.ar, &s->targets, s->settings.pprof ? &s->wall_pprof : NULL,
				  tr_flight_archive_window(&snap.ar, &range) == 0 ? &range : NULL);
	snprintf(log_path, sizeof(log_path), "%s/tracerig.log", s->archive.dir);
	tr_snapshot_copy_log(&snap, log_path);
	if (tr_manifest_write_snapshot(s, &snap.ar, &snap) < 0) {
		tr_err("snapshot %u: cannot write its manifest.json: %s", snap.seq,
		       tr_output_strerror(-errno, why, sizeof(why)));
		goto out;
	}
	if (tr_snapshot_temp(&snap) < 0)
		goto out;
	if (run_call(s, s->packager, TR_CALL_FLUSH, &snap.ar, s->settings.flush_timeout_ms,
		     "packaging a snapshot") < 0) {
		tr_err("snapshot %u: packaging failed", snap.seq);
		goto out;
	}
	ok = tr_snapshot_commit(&snap) == 0;
out:
	tr_snapshot_end(&snap, ok, s->settings.keep_staging, path);
	if (ok && tr_log_verbosity() >= TRACERIG_LOG_WARN)
		fprintf(stderr, "tracerig: snapshot %s\n", *path);
	return ret;
}

/* Snapshots asked for while collecting.  1 when the session must end: a
 * SIGINT/SIGTERM came while one was written, or a source failed in it. */
static int serve_triggers(struct tr_session *s)
{
	enum tr_trigger t;

	while ((t = tr_flight_pending()) != TR_TRIGGER_NONE) {
		char *path = NULL;
		int ret = take_snapshot(s, t, 0, &path);

		free(path);
		if (ret != 0) {
			s->end_reason = TR_END_PLUGIN_FAULT;
			return 1;
		}
		if (s->signals) {
			s->end_reason = TR_END_SIGNAL;
			return 1;
		}
	}
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
		uint64_t now = now_ns(CLOCK_MONOTONIC);
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
				drain_signals(s, NULL);
				if (s->signals) {
					s->end_reason = TR_END_SIGNAL;
					return;
				}
			}
		}
		if (tr_supervise_fault_pending()) {
			tr_status_end();
			collect_faults(s);
			s->end_reason = TR_END_PLUGIN_FAULT;
			return;
		}
		if (tr_flight_enabled())
			tr_triggers_poll(&s->triggers, now_ns(CLOCK_MONOTONIC));
		if (serve_triggers(s))
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

static void flush_one(struct tr_session *s, struct tracerig_ctx *ctx)
{
	int ret;

	if (ctx->phase != TR_PHASE_STOPPED)
		return;
	tr_log(TRACERIG_LOG_DEBUG, ctx->plugin->name, "flushing");
	ret = run_call(s, ctx, TR_CALL_FLUSH, &s->archive, s->settings.flush_timeout_ms,
		       "packaging");
	if (ctx->phase == TR_PHASE_FAILED)
		return;
	if (ret < 0) {
		fail_plugin(ctx, "flush", ret);
	} else {
		ctx->phase = TR_PHASE_FLUSHED;
		tr_watchdog_plugin(ctx->plugin->name, "flushed");
	}
}

static void flush_all(struct tr_session *s)
{
	/* Sources that feed the process model from their own recording
	 * first: the others symbolize against what they fed. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->n_sources; i++)
			if ((s->sources[i]->model == TRACERIG_MODEL_RECORDED) == (pass == 0))
				flush_one(s, s->sources[i]);
}

/* True when the staging directory holds everything collected: each source
 * flushed and the manifest is there.  Only then may a failure say that
 * nothing is lost. */
static int staging_complete(struct tr_session *s)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->phase == TR_PHASE_FAILED && s->sources[i]->failed_in &&
		    strcmp(s->sources[i]->failed_in, "flush") == 0)
			return 0;
	snprintf(path, sizeof(path), "%s/manifest.json", s->archive.dir);
	return access(path, F_OK) == 0;
}

/* Writes the manifest and has the packager turn the staging area into the
 * archive.  The packager runs on its driver when it has one (a session),
 * directly when not (the watchdog salvaging a dead collector). */
static int package(struct tr_session *s)
{
	struct stat st;
	char size[32], why[128];
	int ret;

	/* What was not deflated while collecting is the packager's now; the
	 * thread says how much it did while the log still goes to the
	 * archive. */
	tr_stream_stop();
	tr_log_close_file();
	ret = tr_manifest_write(s);
	if (ret < 0) {
		/* A partial manifest must not pass for the record of the run. */
		tr_staging_remove_entry(&s->archive, "manifest.json");
		tr_err("cannot write manifest.json in %s: %s", s->archive.dir,
		       tr_output_strerror(ret, why, sizeof(why)));
		return ret;
	}
	ret = tr_output_create_temp(&s->archive);
	if (ret < 0)
		return ret;
	if (s->packager->driver)
		ret = run_call(s, s->packager, TR_CALL_FLUSH, &s->archive,
			       s->settings.flush_timeout_ms, "packaging");
	else
		ret = s->packager->plugin->flush(s->packager->state, &s->archive);
	if (ret < 0) {
		if (s->packager->phase != TR_PHASE_FAILED)
			fail_plugin(s->packager, "flush", ret);
		unlink(s->archive.output);
		return ret;
	}
	ret = tr_output_commit(&s->archive, &s->output);
	if (ret < 0)
		return ret;
	s->packager->phase = TR_PHASE_FLUSHED;
	if (stat(s->output, &st) == 0) {
		tr_human_size((uint64_t)st.st_size, size, sizeof(size));
		if (tr_log_verbosity() >= TRACERIG_LOG_WARN)
			fprintf(stderr, "tracerig: archive %s (%s)\n", s->output, size);
	}
	return 0;
}

static int block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGCHLD);
	/* A flight recorder's trigger; in record mode it keeps its default
	 * action, as before. */
	if (tr_flight_enabled())
		sigaddset(set, SIGUSR1);
	/* Threads that plugins start inherit this mask, so signals reach the
	 * signalfd of the main thread only. */
	if (pthread_sigmask(SIG_BLOCK, set, NULL) != 0)
		return -1;
	return signalfd(-1, set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* How long a launched command has to end after SIGTERM before SIGKILL. */
#define COMMAND_GRACE_MS 5000

/* A launched command does not outlive a session that ended without it (a
 * signal, `tracerig stop`, the duration, a failed backend): once the
 * sources have stopped it gets SIGTERM, as perf record's workload does, and
 * SIGKILL if it is still there COMMAND_GRACE_MS later. */
static void end_command(struct tr_session *s)
{
	int waited = 0;

	if (!s->command_started || s->command.pid <= 0 || tr_command_poll(&s->command))
		return;
	tr_info("the session ended (%s): stopping the launched command (PID %d) with SIGTERM",
		tr_end_reason_name(s->end_reason), (int)s->command.pid);
	s->command_ended = 1;
	if (kill(s->command.pid, SIGTERM) < 0)
		return;
	while (!tr_command_poll(&s->command) && waited < COMMAND_GRACE_MS) {
		usleep(20 * 1000);
		waited += 20;
	}
	if (!s->command.reaped) {
		tr_warn("the launched command (PID %d) did not end within %d s of SIGTERM: SIGKILL",
			(int)s->command.pid, COMMAND_GRACE_MS / 1000);
		tr_command_abort(&s->command);
	}
}

static int command_exit_status(struct tr_session *s)
{
	if (!s->opts->command)
		return TR_EXIT_OK;
	if (!s->command.reaped)
		return TR_EXIT_OK;
	/* Ended by us: how it ended is no failure of the command's. */
	if (s->command_ended)
		return TR_EXIT_OK;
	if (WIFEXITED(s->command.status)) {
		if (WEXITSTATUS(s->command.status) == 0)
			return TR_EXIT_OK;
		tr_warn("the command exited with status %d", WEXITSTATUS(s->command.status));
		return TR_EXIT_COMMAND_FAILED;
	}
	if (WIFSIGNALED(s->command.status)) {
		tr_warn("the command was killed by signal %d (%s)", WTERMSIG(s->command.status),
			strsignal(WTERMSIG(s->command.status)));
		return TR_EXIT_COMMAND_FAILED;
	}
	return TR_EXIT_OK;
}

static int sources_failed(const struct tr_session *s, int required)
{
	int n = 0;

	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->phase == TR_PHASE_FAILED && s->sources[i]->required == required)
			n++;
	return n;
}

/* An optional backend that failed must not pass unnoticed in a run that
 * otherwise looks fine: one closing warning line names each. */
static void warn_failed_optional(struct tr_session *s)
{
	for (size_t i = 0; i < s->n_sources; i++) {
		struct tracerig_ctx *ctx = s->sources[i];
		char why[256];

		if (ctx->phase != TR_PHASE_FAILED || ctx->required)
			continue;
		tr_describe_failure(ctx, why, sizeof(why));
		if (ctx->error == -ENODATA && !strcmp(ctx->failed_in, "init"))
			tr_warn("optional backend %s was %s (its warnings say why)",
				ctx->plugin->name, why);
		else if (!strcmp(ctx->failed_in, "init") || !strcmp(ctx->failed_in, "start"))
			tr_warn("optional backend %s failed (%s): the archive holds the other "
				"backends' data only", ctx->plugin->name, why);
		else
			/* It may have staged files while it collected (mapharvest's
			 * maps, a growing trace): they are in the archive. */
			tr_warn("optional backend %s failed (%s): the archive holds whatever it "
				"staged before, maybe incomplete, and the other backends' data",
				ctx->plugin->name, why);
	}
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

/* After the sources stop and before they flush: what they symbolize in
 * flush resolves against the model as the recording left it. */
static void sideband_replay(struct tr_session *s)
{
	struct tr_sideband_counts c;

	if (!s->sideband)
		return;
	tr_sideband_stop(s->sideband);
	tr_sideband_replay(s->sideband);
	tr_sideband_counts(s->sideband, &c);
	tr_log(TRACERIG_LOG_DEBUG, NULL, "process model: %llu side-band records replayed, %llu "
	       "lost, %llu processes read while alive", (unsigned long long)c.replayed,
	       (unsigned long long)c.lost, (unsigned long long)c.remembered);
	if (c.lost || c.dropped)
		tr_warn("the side-band recording lost %llu records%s: some frames of short-lived "
			"processes may stay unnamed", (unsigned long long)(c.lost + c.dropped),
			c.dropped ? " (out of memory or disk space)" : "");
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
		tr_pids_observe(s->command.pid);
	}
	sideband_start(s, TR_PHASE_INITIALIZED);
	s->start_mono_ns = now_ns(CLOCK_MONOTONIC);
	s->start_real_ns = now_ns(CLOCK_REALTIME);
	if (start_all(s) < 0) {
		stop_started(s);
		tr_command_abort(&s->command);
		return -1;
	}
	/* The source that was to record the side-band did not start (an
	 * optional perf_events without permission): record it now. */
	sideband_start(s, TR_PHASE_STARTED);
	/* The window opens once every source is ready, so setup time does not
	 * count toward -d. */
	s->window_start_ns = now_ns(CLOCK_MONOTONIC);
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

	ret = tr_staging_create(&s->archive, s->output);
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
	s->sfd = block_signals(&blocked);
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
	if (used < sizeof(line)) {
		if (tr_flight_enabled())
			snprintf(line + used, sizeof(line) - used, ": snapshots into %s%s (SIGUSR1 "
				 "takes one; Ctrl-C ends with a last one)", tr_flight_dir(), dur);
		else
			snprintf(line + used, sizeof(line) - used, " into %s%s (Ctrl-C to stop%s)",
				 s->output ? s->output : "the archive", dur,
				 t->command ? " sooner" : "");
	}
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
		if (tr_flight_enabled())
			tr_triggers_start(&s->triggers, &s->targets);
		wait_for_end(s);
		tr_triggers_stop(&s->triggers);
		tr_status_end();
	}
	s->end_mono_ns = now_ns(CLOCK_MONOTONIC);
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
	tr_stream_collection_ended();
}

/* The staging goes once its archive is written (unless kept); the exit
 * status then says how the launched command fared. */
static int finish_staging(struct tr_session *s, int status)
{
	if (s->settings.keep_staging)
		fprintf(stderr, "tracerig: staging kept in %s\n", s->archive.dir);
	else
		tr_staging_remove(&s->archive);
	if (s->command_exec_errno)
		return TR_EXIT_COMMAND_NOT_RUN;
	return status == TR_EXIT_OK ? command_exit_status(s) : status;
}

/* The final snapshot's trigger: a launched command that died on a crash
 * signal, or the stop. */
static enum tr_trigger final_trigger(struct tr_session *s)
{
	char how[96], why[256];

	if (s->end_reason != TR_END_COMMAND || !s->command.reaped ||
	    !s->triggers.crash_on || !tr_exit_is_crash(s->command.status))
		return TR_TRIGGER_STOP;
	tr_exit_describe(s->command.status, how, sizeof(how));
	snprintf(why, sizeof(why), "PID %d (%s) %s", (int)s->command.pid,
		 s->targets.command ? s->targets.command : "the command", how);
	tr_info("trigger: %s: the final snapshot holds its last window", why);
	tr_flight_request_why(TR_TRIGGER_CRASH, why);
	return TR_TRIGGER_CRASH;
}

/* A flight session's end: the sources stop and a final snapshot holds the
 * last window; the session's own staging (the sources' rotating files)
 * goes.  Returns the session's exit status. */
static int stop_and_snapshot(struct tr_session *s)
{
	int status = TR_EXIT_OK;
	char *path = NULL;

	stop_started(s);
	end_command(s);
	tr_summarize(s, -1);
	/* Snapshots asked for meanwhile get this one; a launched command that
	 * crashed is what it holds. */
	if (take_snapshot(s, final_trigger(s), 1, &path) < 0 || !path) {
		tr_err("the final snapshot could not be written: what the sources kept is in %s",
		       s->archive.dir);
		return TR_EXIT_FAILURE;
	}
	if (sources_failed(s, 1))
		status = TR_EXIT_FAILURE;
	warn_failed_optional(s);
	/* `tracerig stop` answers with the final snapshot. */
	free(s->output);
	s->output = path;
	tr_log_close_file();
	return finish_staging(s, status);
}

/* Stops the sources, has them flush, writes the archive.  Returns the
 * session's exit status. */
static int stop_and_package(struct tr_session *s)
{
	int status = TR_EXIT_OK;

	if (tr_flight_enabled())
		return stop_and_snapshot(s);
	stop_started(s);
	end_command(s);
	sideband_replay(s);
	flush_all(s);
	/* After the last source: it joins what they all staged. */
	(void)tr_wall_write(&s->archive, &s->targets, s->settings.pprof ? &s->wall_pprof : NULL);
	if (sources_failed(s, 1))
		status = TR_EXIT_FAILURE;
	tr_summarize(s, 1);
	if (package(s) < 0) {
		if (staging_complete(s))
			tr_err("packaging failed: nothing collected is lost, the files are in %s "
			       "(zip that directory once the cause is fixed)", s->archive.dir);
		else
			tr_err("packaging failed: what was collected is kept in %s, but it is "
			       "incomplete (see the errors above)", s->archive.dir);
		return TR_EXIT_FAILURE;
	}
	warn_failed_optional(s);
	return finish_staging(s, status);
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
		status = stop_and_package(s);
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

/* ---------------- the watchdog's side ---------------- */

/* What the collector said of a plugin (tr_watchdog_ops.note_phase). */
static void watchdog_note_phase(void *arg, const char *plugin, const char *phase)
{
	struct tr_session *s = arg;
	static const struct {
		const char *word;
		enum tr_phase phase;
	} words[] = {
		{ "started", TR_PHASE_STARTED },
		{ "stopped", TR_PHASE_STOPPED },
		{ "flushed", TR_PHASE_FLUSHED },
		{ "failed", TR_PHASE_FAILED },
	};

	for (size_t i = 0; i < s->n_sources; i++) {
		if (strcmp(s->sources[i]->plugin->name, plugin) != 0)
			continue;
		for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
			if (strcmp(words[w].word, phase) == 0)
				s->sources[i]->phase = words[w].phase;
	}
}

/* Packages the staging directory of a collector that died
 * (tr_watchdog_ops.salvage). */
static int watchdog_salvage(void *arg, pid_t collector, const char *why,
			    uint64_t start_mono_ns, uint64_t start_real_ns)
{
	struct tr_session *s = arg;
	int ret;

	snprintf(s->died_why, sizeof(s->died_why), "%s", why);
	s->died_pid = collector;
	s->end_reason = TR_END_DIED;
	s->collecting = 1;
	s->start_mono_ns = start_mono_ns;
	s->start_real_ns = start_real_ns;
	s->window_start_ns = start_mono_ns;
	s->end_mono_ns = now_ns(CLOCK_MONOTONIC);
	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->phase == TR_PHASE_FAILED && !s->sources[i]->failed_in)
			s->sources[i]->failed_in = "unknown";
	tr_err("the collecting process (PID %d) ended without finishing: %s; the watchdog is "
	       "packaging what it collected", (int)collector, why);
	/* A temporary archive the collector left half-written. */
	if (s->archive.output)
		unlink(s->archive.output);
	ret = s->packager->plugin->init(&tr_services, s->packager, &s->packager->state);
	if (ret == 0) {
		/* What the collector's thread deflated, as its packaging would
		 * have used it (and must, where it freed the staged copy). */
		int n = tr_stream_recover(s->archive.dir);

		if (n > 0)
			tr_info("%d entries were partly deflated before the collector died: "
				"those pieces are used", n);
		else if (n < 0)
			tr_warn("cannot read what was deflated before the collector died (%s): "
				"the entries are deflated whole", strerror(-n));
		ret = package(s);
	}
	tr_output_release();
	if (ret < 0) {
		tr_err("the watchdog could not package: %s; the files are in %s", strerror(-ret),
		       s->archive.dir);
		return ret;
	}
	if (!s->settings.keep_staging)
		tr_staging_remove(&s->archive);
	return 0;
}

void tr_session_free(struct tr_session *s)
{
	tr_stream_free();
	tr_triggers_stop(&s->triggers);
	tr_flight_reset();
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
	free(s->output);
	tr_output_release();
	tr_loader_exit();
	tr_pids_reset();
}

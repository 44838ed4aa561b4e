/* Flight mode's side of the session (mode.h's flight row): the snapshots
 * it writes while collecting, at each trigger, and the final one that ends
 * it.  flight.c keeps what lives between triggers; this file drives the
 * sources' snapshot callbacks and the packager for each one. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/archive/output.h"
#include "core/exitcodes.h"
#include "core/log.h"
#include "ctx.h"
#include "exitwatch.h"
#include "flight.h"
#include "manifest.h"
#include "session.h"
#include "steps.h"
#include "summary.h"
#include "supervise.h"

/* Runs the sources' snapshot callbacks on the flight thread while this
 * thread watches signals (a SIGTERM now is honoured once the snapshot is
 * written: nothing is lost), faults and the flush deadline.  Returns 0; 1
 * when a source faulted elsewhere meanwhile (the snapshot is whole, the
 * session then ends); -1 when one faulted or hung in its callback (no
 * snapshot, the session ends). */
/* Waits for the snapshot thread while serving signals and the supervisor:
 * 1 when the job is abandoned (the callback running faulted, or the flush
 * timeout passed), else 0 with the callbacks' results in rets[].  *faulted
 * is set when a fault elsewhere is to end the session afterwards. */
static int wait_for_snapshot_job(struct tr_session *s, struct tr_flight_job *job, int *rets,
				 uint64_t deadline, int *faulted)
{
	while (!tr_flight_job_done(job, rets)) {
		struct pollfd pfd[3] = { { .fd = s->sfd, .events = POLLIN },
					 { .fd = tr_supervise_wake_fd(), .events = POLLIN },
					 { .fd = tr_flight_job_fd(job), .events = POLLIN } };
		struct tracerig_ctx *busy = tr_flight_job_current(job);
		uint64_t left = tr_session_ms_left(deadline);

		/* A fault elsewhere ends the session once the snapshot is
		 * written; one in the callback running leaves it unfinished. */
		if (tr_supervise_fault_pending()) {
			tr_session_collect_faults(s);
			*faulted = 1;
		}
		if (busy && busy->fault_signal)
			return 1;
		if (left == 0) {
			if (busy && busy->phase != TR_PHASE_FAILED) {
				busy->hung_ms = s->settings.flush_timeout_ms;
				tr_session_fail_plugin(busy, "snapshot", -ETIMEDOUT);
			}
			return 1;
		}
		if (poll(pfd, 3, left > 500 ? 500 : (int)left) > 0) {
			if (pfd[1].revents)
				tr_supervise_drain();
			if (pfd[0].revents)
				tr_session_drain_signals(s, "writing a snapshot");
		}
	}
	return 0;
}

/* The final snapshot is the session's result, as flush is a recording's:
 * a source that fails it has failed (a required one fails the session).
 * Earlier ones leave that source's data out of one archive while
 * collection goes on. */
static void report_snapshot_failures(struct tracerig_ctx **ctxs, const int *rets, size_t n,
				     int final)
{
	for (size_t i = 0; i < n; i++) {
		if (rets[i] >= 0)
			continue;
		if (final)
			tr_session_fail_plugin(ctxs[i], "final snapshot", rets[i]);
		else
			tr_log(TRACERIG_LOG_WARN, ctxs[i]->plugin->name,
			       "snapshot failed: %s (the snapshot goes on without its data)",
			       strerror(-rets[i]));
	}
}

static int run_snapshot_callbacks(struct tr_session *s, struct tr_snapshot *snap)
{
	struct tracerig_ctx **ctxs = calloc(s->n_sources + 1, sizeof(*ctxs));
	int *rets = calloc(s->n_sources + 1, sizeof(*rets));
	uint64_t deadline = tr_session_now_ns(CLOCK_MONOTONIC) +
			    (uint64_t)s->settings.flush_timeout_ms * 1000000ull;
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
		     s->sources[i]->phase == TR_PHASE_STOPPED) &&
		    tr_flight_supported(s->sources[i]))
			ctxs[n++] = s->sources[i];
	if (n && (ret = tr_flight_job_start(ctxs, n, snap, &job)) < 0) {
		tr_err("snapshot: cannot start its thread: %s", strerror(-ret));
		n = 0;
	}
	if (job)
		abandoned = wait_for_snapshot_job(s, job, rets, deadline, &faulted);
	/* An abandoned job's thread is in a plugin that faulted or hung: it
	 * is left to itself. */
	if (!abandoned) {
		report_snapshot_failures(ctxs, rets, n, snap->final);
		tr_flight_job_end(job);
	}
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
	uint64_t to = final && s->end_mono_ns ? s->end_mono_ns : tr_session_now_ns(CLOCK_MONOTONIC);
	uint64_t window = tr_flight_window_ns(s->flight);
	uint64_t from = to > s->window_start_ns + window ? to - window : s->window_start_ns;
	char log_path[PATH_MAX], why[128];
	struct tracerig_window range;
	struct tr_snapshot snap;
	int ok = 0, ret = 0;

	*path = NULL;
	if (tr_snapshot_begin(s->flight, &snap, trigger, from, to) < 0)
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
	tr_session_write_wall(s, &snap.ar,
			      tr_flight_archive_window(s->flight, &snap.ar, &range) == 0 ? &range
											 : NULL);
	snprintf(log_path, sizeof(log_path), "%s/tracerig.log", s->archive.dir);
	tr_snapshot_copy_log(&snap, log_path);
	if (tr_manifest_write_snapshot(s, &snap.ar, &snap) < 0) {
		tr_err("snapshot %u: cannot write its manifest.json: %s", snap.seq,
		       tr_output_strerror(-errno, why, sizeof(why)));
		goto out;
	}
	if (tr_snapshot_temp(&snap) < 0)
		goto out;
	if (tr_session_run_call(s, s->packager, TR_CALL_FLUSH, &snap.ar,
				s->settings.flush_timeout_ms, "packaging a snapshot") < 0) {
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

int tr_session_serve_snapshots(struct tr_session *s)
{
	enum tr_trigger t;

	while ((t = tr_flight_pending(s->flight)) != TR_TRIGGER_NONE) {
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

/* The final snapshot's trigger: a launched command that died on a crash
 * signal, or the stop. */
static enum tr_trigger final_trigger(struct tr_session *s)
{
	char how[96], why[256];

	if (s->end_reason != TR_END_COMMAND || !s->command.reaped || !s->triggers.crash_on ||
	    !tr_exit_is_crash(s->command.status))
		return TR_TRIGGER_STOP;
	tr_exit_describe(s->command.status, how, sizeof(how));
	snprintf(why, sizeof(why), "PID %d (%s) %s", (int)s->command.pid,
		 s->targets.command ? s->targets.command : "the command", how);
	tr_info("trigger: %s: the final snapshot holds its last window", why);
	tr_flight_request_why(s->flight, TR_TRIGGER_CRASH, why);
	return TR_TRIGGER_CRASH;
}

int tr_session_snapshot_and_stop(struct tr_session *s)
{
	int status = TR_EXIT_OK;
	char *path = NULL;

	tr_session_stop_started(s);
	tr_session_end_command(s);
	tr_summarize(s, -1);
	/* Snapshots asked for meanwhile get this one; a launched command that
	 * crashed is what it holds. */
	if (take_snapshot(s, final_trigger(s), 1, &path) < 0 || !path) {
		tr_err("the final snapshot could not be written: what the sources kept is in %s",
		       s->archive.dir);
		return TR_EXIT_FAILURE;
	}
	if (tr_session_sources_failed(s, 1))
		status = TR_EXIT_FAILURE;
	tr_session_warn_failed_optional(s);
	/* `tracerig stop` answers with the final snapshot. */
	if (tr_output_written(s->output, path) < 0)
		tr_warn("`tracerig stop` is not told %s (out of memory)", path);
	free(path);
	tr_log_close_file();
	return tr_session_finish_staging(s, status);
}

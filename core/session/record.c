/* Record mode's end (mode.h's record row): the sources flushed after the
 * process model is replayed, the wall-clock view, the manifest, and the
 * packager turning the staging area into the archive; the watchdog
 * salvaging a dead collector writes the archive the same way. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/archive/output.h"
#include "core/archive/sideband.h"
#include "core/archive/stream.h"
#include "core/exitcodes.h"
#include "core/log.h"
#include "core/views/wall.h"
#include "ctx.h"
#include "manifest.h"
#include "pids.h"
#include "session.h"
#include "steps.h"
#include "summary.h"
#include "watchdog.h"

static void flush_one(struct tr_session *s, struct tracerig_ctx *ctx)
{
	int ret;

	if (ctx->phase != TR_PHASE_STOPPED)
		return;
	tr_log(TRACERIG_LOG_DEBUG, ctx->plugin->name, "flushing");
	ret = tr_session_run_call(s, ctx, TR_CALL_FLUSH, &s->archive, s->settings.flush_timeout_ms,
				  "packaging");
	if (ctx->phase == TR_PHASE_FAILED)
		return;
	if (ret < 0) {
		tr_session_fail_plugin(ctx, "flush", ret);
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

void tr_session_write_wall(struct tr_session *s, struct tracerig_archive *ar,
			   const struct tracerig_window *range)
{
	struct tr_wall_observed observed;
	pid_t *seen = tr_pids_all(s->pids, &observed.n);

	observed.pids = seen;
	(void)tr_wall_write_dated(s->views, ar, &s->targets, observed,
				  s->settings.pprof ? &s->wall_pprof : NULL, range);
	free(seen);
}

int tr_session_write_archive(struct tr_session *s)
{
	struct stat st;
	char size[32], why[128];
	int ret;

	/* What was not deflated while collecting is the packager's now; the
	 * thread says how much it did while the log still goes to the
	 * archive. */
	tr_stream_stop(s->stream);
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
		ret = tr_session_run_call(s, s->packager, TR_CALL_FLUSH, &s->archive,
					  s->settings.flush_timeout_ms, "packaging");
	else
		ret = s->packager->plugin->flush(s->packager->state, &s->archive);
	if (ret < 0) {
		if (s->packager->phase != TR_PHASE_FAILED)
			tr_session_fail_plugin(s->packager, "flush", ret);
		unlink(s->archive.output);
		return ret;
	}
	ret = tr_output_commit(s->output, &s->archive);
	if (ret < 0)
		return ret;
	s->packager->phase = TR_PHASE_FLUSHED;
	if (stat(tr_output_path(s->output), &st) == 0) {
		tr_human_size((uint64_t)st.st_size, size, sizeof(size));
		if (tr_log_verbosity() >= TRACERIG_LOG_WARN)
			fprintf(stderr, "tracerig: archive %s (%s)\n", tr_output_path(s->output),
				size);
	}
	return 0;
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
	tr_log(TRACERIG_LOG_DEBUG, NULL,
	       "process model: %llu side-band records replayed, %llu "
	       "lost, %llu processes read while alive",
	       (unsigned long long)c.replayed, (unsigned long long)c.lost,
	       (unsigned long long)c.remembered);
	if (c.lost || c.dropped)
		tr_warn("the side-band recording lost %llu records%s: some frames of short-lived "
			"processes may stay unnamed",
			(unsigned long long)(c.lost + c.dropped),
			c.dropped ? " (out of memory or disk space)" : "");
}

int tr_session_package(struct tr_session *s)
{
	int status = TR_EXIT_OK;

	tr_session_stop_started(s);
	tr_session_end_command(s);
	sideband_replay(s);
	flush_all(s);
	/* After the last source: it joins what they all staged. */
	tr_session_write_wall(s, &s->archive, NULL);
	if (tr_session_sources_failed(s, 1))
		status = TR_EXIT_FAILURE;
	tr_summarize(s, 1);
	if (tr_session_write_archive(s) < 0) {
		if (staging_complete(s))
			tr_err("packaging failed: nothing collected is lost, the files are in %s "
			       "(zip that directory once the cause is fixed)",
			       s->archive.dir);
		else
			tr_err("packaging failed: what was collected is kept in %s, but it is "
			       "incomplete (see the errors above)",
			       s->archive.dir);
		return TR_EXIT_FAILURE;
	}
	tr_session_warn_failed_optional(s);
	return tr_session_finish_staging(s, status);
}

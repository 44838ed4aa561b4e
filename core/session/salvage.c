/* The session as the watchdog sees it (watchdog.h): the phases the
 * collector reports, and, when the collector dies, its staging packaged as
 * a finished session's would be (record.c writes the archive). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/archive/output.h"
#include "core/archive/stream.h"
#include "core/log.h"
#include "ctx.h"
#include "options.h"
#include "services.h"
#include "session.h"
#include "steps.h"
#include "watchdog.h"

/* The collector died before collection began (tr_watchdog_ops.discard). */
static void watchdog_discard(void *arg)
{
	struct tr_session *s = arg;

	tr_staging_remove(&s->archive);
}

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
static int watchdog_salvage(void *arg, pid_t collector, const char *why, uint64_t start_mono_ns,
			    uint64_t start_real_ns)
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
	s->end_mono_ns = tr_session_now_ns(CLOCK_MONOTONIC);
	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->phase == TR_PHASE_FAILED && !s->sources[i]->failed_in)
			s->sources[i]->failed_in = "unknown";
	tr_err("the collecting process (PID %d) ended without finishing: %s; the watchdog is "
	       "packaging what it collected",
	       (int)collector, why);
	/* A temporary archive the collector left half-written. */
	if (s->archive.output)
		unlink(s->archive.output);
	ret = s->packager->plugin->init(&tr_services, s->packager, &s->packager->state);
	if (ret == 0) {
		/* What the collector's thread deflated, as its packaging would
		 * have used it (and must, where it freed the staged copy). */
		int n = tr_stream_recover(s->stream, s->archive.dir);

		if (n > 0)
			tr_info("%d entries were partly deflated before the collector died: "
				"those pieces are used",
				n);
		else if (n < 0)
			tr_warn("cannot read what was deflated before the collector died (%s): "
				"the entries are deflated whole",
				strerror(-n));
		ret = tr_session_write_archive(s);
	}
	tr_output_release(s->output);
	if (ret < 0) {
		tr_err("the watchdog could not package: %s; the files are in %s", strerror(-ret),
		       s->archive.dir);
		return ret;
	}
	if (!s->settings.keep_staging)
		tr_staging_remove(&s->archive);
	return 0;
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

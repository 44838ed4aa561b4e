/* record and flight, the two rows of mode.h's table. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "flight.h"
#include "core/archive/output.h"
#include "mode.h"
#include "options.h"
#include "profile.h"
#include "session.h"

static uint64_t whole_session(const struct tr_session *s)
{
	(void)s;
	return 0;
}

static void no_triggers(struct tr_session *s)
{
	(void)s;
}

/* ---------------- record ---------------- */

static int record_prepare(struct tr_session *s, const struct tr_section *main_section)
{
	/* Keys of a flight recorder set for this session (not as
	 * tracerig.conf's defaults) do nothing in a recording: said. */
	static const char *const flight_keys[] = { "window", "keep" };
	const char *cpu = s->settings.trigger_cpu;

	for (size_t i = 0; i < sizeof(flight_keys) / sizeof(flight_keys[0]); i++) {
		const struct tr_entry *e = tr_section_entry(main_section, flight_keys[i]);
		char at[PATH_MAX + 16];

		if (!e || (s->conf_path && strcmp(e->origin, s->conf_path) == 0))
			continue;
		tr_entry_where(e, at, sizeof(at));
		tr_warn("%s: [tracerig] %s = %s does nothing in this session: it records "
			"(mode = record); %s is a flight recorder's (mode = flight, "
			"docs/flight.md)",
			at, e->key, e->value, e->key);
	}
	if (cpu && *cpu) {
		tr_err("[tracerig] trigger_cpu = %s: triggers make snapshots of a flight recorder: "
		       "set mode = flight too (docs/flight.md)",
		       cpu);
		return -1;
	}
	return 0;
}

/* Nothing to say, for the operations that accept. */
static void accepted(char *why, size_t why_len)
{
	if (why_len)
		why[0] = '\0';
}

static int record_admits(const struct tr_session *s, const struct tracerig_ctx *ctx, char *why,
			 size_t why_len)
{
	(void)s, (void)ctx;
	accepted(why, why_len);
	return 0;
}

static void record_describe(const struct tr_session *s, const char *dur, char *buf, size_t len)
{
	snprintf(buf, len, " into %s%s (Ctrl-C to stop%s)",
		 tr_output_path(s->output) ? tr_output_path(s->output) : "the archive", dur,
		 s->targets.command ? " sooner" : "");
}

static const char *record_destination(const struct tr_session *s)
{
	return tr_output_absolute(s->output) ? tr_output_absolute(s->output) : ".";
}

static int record_takes_snapshots(const struct tr_session *s, char *why, size_t why_len)
{
	snprintf(why, why_len,
		 "session '%s' records (mode = record): only a flight recorder ([tracerig] mode = "
		 "flight) takes snapshots; `tracerig stop %s` packages this one",
		 s->opts->session_name, s->opts->session_name);
	return -1;
}

static int record_serve(struct tr_session *s, uint64_t now_ns)
{
	(void)s, (void)now_ns;
	return 0;
}

const struct tr_mode_ops tr_record_mode = {
	.name = "record",
	.prepare = record_prepare,
	.admits = record_admits,
	.describe = record_describe,
	.destination = record_destination,
	.window_ns = whole_session,
	.streams = 1,
	.takes_snapshots = record_takes_snapshots,
	.begin = no_triggers,
	.serve = record_serve,
	.finish = tr_session_package,
};

/* ---------------- flight ---------------- */

static int flight_prepare(struct tr_session *s, const struct tr_section *main_section)
{
	const struct tr_settings *st = &s->settings;

	(void)main_section;
	if (tr_flight_configure(s->flight, st->window_ms, st->keep, st->output,
				tr_output_absolute_dir(s->output), st->name) < 0)
		return -1;
	/* A flight recorder runs until it is stopped; -d still bounds it. */
	if (!s->opts->duration)
		s->duration_ms = 0;
	return 0;
}

static int flight_admits(const struct tr_session *s, const struct tracerig_ctx *ctx, char *why,
			 size_t why_len)
{
	if (ctx == s->packager || tr_flight_supported(ctx)) {
		accepted(why, why_len);
		return 0;
	}
	snprintf(why, why_len, "mode = flight is not supported yet");
	return -ENOTSUP;
}

static void flight_describe(const struct tr_session *s, const char *dur, char *buf, size_t len)
{
	snprintf(buf, len, ": snapshots into %s%s (SIGUSR1 takes one; Ctrl-C ends with a last one)",
		 tr_flight_dir(s->flight), dur);
}

static const char *flight_destination(const struct tr_session *s)
{
	return tr_flight_dir(s->flight);
}

static uint64_t flight_window_ns(const struct tr_session *s)
{
	return tr_flight_window_ns(s->flight);
}

static int flight_takes_snapshots(const struct tr_session *s, char *why, size_t why_len)
{
	(void)s;
	accepted(why, why_len);
	return 0;
}

static void flight_begin(struct tr_session *s)
{
	tr_triggers_start(&s->triggers, &s->targets, s->pids, s->flight);
}

static int flight_serve(struct tr_session *s, uint64_t now_ns)
{
	tr_triggers_poll(&s->triggers, now_ns);
	return tr_session_serve_snapshots(s);
}

const struct tr_mode_ops tr_flight_mode = {
	.name = "flight",
	.prepare = flight_prepare,
	.admits = flight_admits,
	.if_required = "remove it from [tracerig] required (and its section), or use mode = record",
	.if_optional = "left out of this flight session (optional here)",
	.left_out = "no flight support yet, left out of mode = flight",
	.snapshot_signal = SIGUSR1,
	.describe = flight_describe,
	.destination = flight_destination,
	.window_ns = flight_window_ns,
	.streams = 0,
	.takes_snapshots = flight_takes_snapshots,
	.begin = flight_begin,
	.serve = flight_serve,
	.finish = tr_session_snapshot_and_stop,
};

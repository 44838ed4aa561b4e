/* What the end of a session says: a line per backend (ok, skipped or
 * FAILED and why, with the counters that tell how it went), and sizes as
 * people read them. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "ctx.h"
#include "mode.h"
#include "session.h"
#include "summary.h"

void tr_human_size(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 10ull << 20)
		snprintf(buf, len, "%.1f MiB", bytes / 1048576.0);
	else if (bytes >= 10ull << 10)
		snprintf(buf, len, "%.1f KiB", bytes / 1024.0);
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
}

void tr_describe_failure(const struct tracerig_ctx *ctx, char *buf, size_t len)
{
	if (ctx->fault_signal)
		snprintf(buf, len, "crashed with SIG%s in %s",
			 sigabbrev_np(ctx->fault_signal) ? sigabbrev_np(ctx->fault_signal) : "?",
			 ctx->failed_in);
	else if (ctx->hung_ms)
		snprintf(buf, len, "hung in %s, abandoned after %lld ms", ctx->failed_in,
			 ctx->hung_ms);
	else if (ctx->session->mode->left_out && ctx->error == -ENOTSUP &&
		 !strcmp(ctx->failed_in, "init"))
		snprintf(buf, len, "%s", ctx->session->mode->left_out);
	else if (ctx->error == -ENODATA && !strcmp(ctx->failed_in, "init"))
		snprintf(buf, len, "left out: nothing it records can come from these targets");
	else if (ctx->reason)
		snprintf(buf, len, "%s: the error said above", ctx->failed_in);
	else
		snprintf(buf, len, "%s: %s", ctx->failed_in, strerror(-ctx->error));
}

/* "lost_samples" = 3 as "3 lost samples", "trace_bytes" as "1.2 MiB
 * trace"; clock readings (_ns) are for the manifest. */
static size_t readable_counter(const struct tr_counter *c, char *buf, size_t len)
{
	size_t n = strlen(c->name);
	char size[32];

	if (n > 3 && !strcmp(c->name + n - 3, "_ns"))
		return 0;
	if (n >= 5 && !strcmp(c->name + n - 5, "bytes")) {
		tr_human_size(c->value, size, sizeof(size));
		return (size_t)snprintf(buf, len, "%s%s%.*s", size, n > 5 ? " " : "",
					n > 6 ? (int)(n - 6) : 0, c->name);
	}
	return (size_t)snprintf(buf, len, "%llu %s", (unsigned long long)c->value, c->name);
}

/* The first few counters, which each plugin sets first because they say
 * how the run went (samples and what was lost; files; processes). */
#define READABLE_COUNTERS 4
static void readable_counters(const struct tracerig_ctx *ctx, char *line, size_t len, size_t *used)
{
	size_t shown = 0;

	for (size_t c = 0; c < ctx->n_counters && shown < READABLE_COUNTERS && *used < len; c++) {
		char item[128];

		if (!readable_counter(&ctx->counters[c], item, sizeof(item)))
			continue;
		for (char *p = item; *p; p++)
			if (*p == '_')
				*p = ' ';
		*used += (size_t)snprintf(line + *used, len - *used, "%s%s", shown++ ? ", " : "  ",
					  item);
	}
	if (*used >= len)
		*used = len - 1;
}

void tr_summarize(const struct tr_session *s, int packaged)
{
	for (size_t i = 0; i < s->n_sources; i++) {
		struct tracerig_ctx *ctx = s->sources[i];
		char line[1024], raw[1024] = "", why[256];
		size_t used, head, raw_used = 0;

		used = snprintf(line, sizeof(line), "%-12s %s", ctx->plugin->name,
				ctx->phase == TR_PHASE_FAILED
					? (ctx->required ? "FAILED" : "skipped")
					: "ok");
		if (ctx->phase == TR_PHASE_FAILED) {
			tr_describe_failure(ctx, why, sizeof(why));
			used += snprintf(line + used, sizeof(line) - used, " (%s)", why);
		}
		if (used >= sizeof(line))
			used = sizeof(line) - 1;
		head = used;
		pthread_mutex_lock(&ctx->lock);
		for (size_t c = 0; c < ctx->n_counters && raw_used < sizeof(raw); c++)
			raw_used += (size_t)snprintf(raw + raw_used, sizeof(raw) - raw_used,
						     "%s%s=%llu", c ? ", " : "  ",
						     ctx->counters[c].name,
						     (unsigned long long)ctx->counters[c].value);
		readable_counters(ctx, line, sizeof(line), &used);
		pthread_mutex_unlock(&ctx->lock);
		/* Every counter, raw, for -v and the log (the manifest has them
		 * too); the terminal gets the few that tell how it went. */
		tr_log(TRACERIG_LOG_INFO, NULL, "%.*s%s", (int)head, line, raw);
		if (packaged >= 0 && tr_log_verbosity() >= TRACERIG_LOG_WARN &&
		    tr_log_verbosity() < TRACERIG_LOG_INFO)
			fprintf(stderr, "  %s\n", line);
	}
}

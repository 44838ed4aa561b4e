#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "ctx.h"
#include "session.h"
#include "status.h"

static struct tr_session *current;
static int shown; /* a line is on the terminal and must be cleared before logging */
static int enabled;

static void clear_line(void)
{
	if (shown) {
		fputs("\r\033[K", stderr);
		shown = 0;
	}
}

void tr_status_begin(struct tr_session *s, int on)
{
	current = s;
	enabled = on && isatty(STDERR_FILENO);
	if (enabled)
		tr_log_set_tty_hook(clear_line);
}

void tr_status_update(void)
{
	struct timespec ts;
	char line[512];
	size_t used;
	double elapsed;

	if (!enabled || !current)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	elapsed = ((uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec - current->window_start_ns) / 1e9;
	if (current->duration_ms > 0)
		used = snprintf(line, sizeof(line), "[tracerig] %.0fs elapsed, %.0fs left", elapsed,
				current->duration_ms / 1000.0 - elapsed > 0
					? current->duration_ms / 1000.0 - elapsed : 0);
	else
		used = snprintf(line, sizeof(line), "[tracerig] %.0fs elapsed (Ctrl-C to stop)",
				elapsed);
	for (size_t i = 0; i < current->n_sources && used < sizeof(line); i++) {
		struct tracerig_ctx *ctx = current->sources[i];

		if (ctx->phase != TR_PHASE_STARTED)
			continue;
		pthread_mutex_lock(&ctx->lock);
		if (ctx->progress[0])
			used += snprintf(line + used, sizeof(line) - used, " | %s: %s",
					 ctx->plugin->name, ctx->progress);
		pthread_mutex_unlock(&ctx->lock);
	}
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	shown = 1;
}

void tr_status_end(void)
{
	if (!enabled)
		return;
	clear_line();
	tr_log_set_tty_hook(NULL);
	enabled = 0;
	current = NULL;
}

#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "ctx.h"

int tr_ctx_new(struct tr_session *s, struct tr_loaded *loaded, struct tr_section *section,
	       struct tracerig_ctx **out)
{
	struct tracerig_ctx *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		return -ENOMEM;
	ctx->session = s;
	ctx->loaded = *loaded;
	ctx->plugin = loaded->plugin;
	ctx->section = section;
	pthread_mutex_init(&ctx->lock, NULL);
	*out = ctx;
	return 0;
}

void tr_ctx_free(struct tracerig_ctx *ctx)
{
	if (!ctx)
		return;
	for (size_t i = 0; i < ctx->n_counters; i++)
		free(ctx->counters[i].name);
	for (size_t i = 0; i < ctx->n_warnings; i++)
		free(ctx->warnings[i]);
	free(ctx->counters);
	for (size_t i = 0; i < ctx->n_pprof; i++)
		free(ctx->pprof[i].name);
	free(ctx->pprof);
	for (size_t i = 0; i < ctx->n_lists; i++)
		free((void *)ctx->lists[i].items);
	free(ctx->lists);
	free(ctx->lists_split);
	free(ctx->reason);
	pthread_mutex_destroy(&ctx->lock);
	tr_loader_unload(&ctx->loaded);
	free(ctx);
}

void tr_ctx_hold_errors(struct tracerig_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	if (ctx->phase != TR_PHASE_FAILED) {
		free(ctx->reason);
		ctx->reason = NULL;
		ctx->holding_errors = 1;
	}
	pthread_mutex_unlock(&ctx->lock);
}

int tr_ctx_hold_error(struct tracerig_ctx *ctx, const char *text)
{
	int held = 0;

	pthread_mutex_lock(&ctx->lock);
	if (ctx->holding_errors && !ctx->reason)
		held = (ctx->reason = strdup(text)) != NULL;
	pthread_mutex_unlock(&ctx->lock);
	return held;
}

void tr_ctx_call_ended(struct tracerig_ctx *ctx, int ok)
{
	int held;

	pthread_mutex_lock(&ctx->lock);
	held = ctx->holding_errors;
	ctx->holding_errors = 0;
	pthread_mutex_unlock(&ctx->lock);
	/* Not this call's (fini after a failure): the failure's reason stays. */
	if (ok && held)
		tr_ctx_say_reason(ctx);
}

void tr_ctx_say_reason(struct tracerig_ctx *ctx)
{
	char *reason;

	pthread_mutex_lock(&ctx->lock);
	reason = ctx->reason;
	ctx->reason = NULL;
	pthread_mutex_unlock(&ctx->lock);
	if (reason)
		tr_log(TRACERIG_LOG_ERROR, ctx->plugin->name, "%s", reason);
	free(reason);
}

#include "config.h"

#include <errno.h>
#include <stdlib.h>

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
	pthread_mutex_destroy(&ctx->lock);
	tr_loader_unload(&ctx->loaded);
	free(ctx);
}

/* --check: each backend's own check (what it would do, what is missing
 * and how to get it), flight support, the optional backends this install
 * lacks, and whether the profile is valid; nothing is collected. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "core/exitcodes.h"
#include "core/log.h"
#include "ctx.h"
#include "mode.h"
#include "services.h"
#include "session.h"
#include "watchdog.h"

static int count_config_errors(const struct tr_session *s)
{
	int errors = 0;

	for (size_t i = 0; i <= s->n_sources; i++) {
		const struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;

		if (ctx)
			errors += __atomic_load_n(&ctx->config_errors, __ATOMIC_RELAXED);
	}
	return errors;
}

int tr_session_config_errors(const struct tr_session *s, int checking)
{
	int errors = count_config_errors(s);

	if (errors)
		tr_err("%d error%s in the profile%s", errors, errors == 1 ? "" : "s",
		       checking ? "" : "; nothing was collected");
	return errors;
}

/* One backend's line: its own check, then flight support.  1 when a
 * backend the session cannot do without is not usable. */
static int check_backend(const struct tr_session *s, struct tracerig_ctx *ctx, FILE *out)
{
	char advice[1024] = "", wrong_item[512];
	int ret = 0, wrong = tr_judge_list_choices(ctx, wrong_item, sizeof(wrong_item)), errors;

	if (ctx->validated < 0) {
		snprintf(advice, sizeof(advice), "cannot check its profile section: %s",
			 strerror(-ctx->validated));
		ret = ctx->validated;
	} else if (ctx->plugin->check) {
		ret = ctx->plugin->check(&tr_services, ctx, advice, sizeof(advice));
	}
	/* Counted by the plugin's driver thread (config_error()). */
	errors = __atomic_load_n(&ctx->config_errors, __ATOMIC_RELAXED);
	if (ret == 0 && errors) {
		snprintf(advice, sizeof(advice), "%d error%s in [%s] (on stderr)", errors,
			 errors == 1 ? "" : "s", ctx->plugin->name);
		ret = -EINVAL;
	}
	if (wrong) {
		/* The first of the profile's errors in this section. */
		snprintf(advice, sizeof(advice), "%s", wrong_item);
		ret = -EINVAL;
	}
	if (ret == 0) {
		char why[256];

		ret = s->mode->admits(s, ctx, why, sizeof(why));
		if (ret < 0)
			snprintf(advice, sizeof(advice), "%s by %s: %s", why, ctx->plugin->name,
				 ctx->required ? s->mode->if_required : s->mode->if_optional);
	}
	fprintf(out, "  %-12s %-8s %-9s %s%s\n", ctx->plugin->name,
		ctx->plugin->version ? ctx->plugin->version : "?",
		ctx->plugin->kind == TRACERIG_PLUGIN_PACKAGER ? "packager"
		: ctx->required                               ? "required"
							      : "optional",
		ret == 0 ? "usable" : "NOT USABLE: ",
		ret == 0 ? "" : (advice[0] ? advice : strerror(-ret)));
	if (ret == 0 && advice[0])
		fprintf(out, "  %-12s note: %s\n", "", advice);
	return ret < 0 && (ctx->required || ctx->plugin->kind == TRACERIG_PLUGIN_PACKAGER);
}

/* What tr_session_prepare went on without: a split install's absent
 * optional backends (an absent required one stopped it). */
static void list_not_installed(const struct tr_session *s, FILE *out)
{
	for (size_t i = 0; i < s->profile.n_sections; i++) {
		const struct tr_section *sec = &s->profile.sections[i];
		const char *package = tr_backend_package(sec->name);
		int loaded = strcmp(sec->name, "tracerig") == 0 ||
			     strcmp(sec->name, s->packager->plugin->name) == 0;

		for (size_t k = 0; k < s->n_sources && !loaded; k++)
			loaded = s->sources[k]->section == sec;
		if (!loaded)
			fprintf(out, "  %-12s %-8s %-9s NOT INSTALLED: apt install %s\n", sec->name,
				"-", "optional", package ? package : "?");
	}
}

int tr_session_check(struct tr_session *s)
{
	int unusable_required = 0, started, errors;
	char *body = NULL;
	size_t body_len = 0;
	FILE *out;

	/* A check may start what would outlive a killed tracerig (lttng's
	 * dry run starts a session daemon): the watchdog cleans up after it. */
	if ((started = tr_session_start_watchdog(s, 0)) < 0)
		tr_warn("cannot start the watchdog: %s (if tracerig is killed during the check, "
			"what a backend started for it stays)",
			strerror(-started));
	/* Every section's own checks before any backend's: the profile's
	 * mistakes come first, all of them. */
	for (size_t i = 0; i <= s->n_sources; i++) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;

		if (ctx && ctx->plugin->validate)
			ctx->validated = ctx->plugin->validate(&tr_services, ctx);
	}
	/* The backends' lines before the verdict, so that the first line can
	 * say whether the profile is valid: their checks may find errors. */
	out = open_memstream(&body, &body_len);
	if (!out)
		out = stdout;
	for (size_t i = 0; i <= s->n_sources; i++) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;

		if (ctx)
			unusable_required += check_backend(s, ctx, out);
	}
	list_not_installed(s, out);
	fprintf(out, "  plugin file(s):\n");
	for (size_t i = 0; i <= s->n_sources; i++) {
		struct tracerig_ctx *ctx = i < s->n_sources ? s->sources[i] : s->packager;

		if (ctx)
			fprintf(out, "    %s: %s\n", ctx->plugin->name, ctx->loaded.file);
	}
	tr_watchdog_done();
	errors = count_config_errors(s);
	if (errors)
		printf("profile %s: %d error%s (on stderr)\n", s->profile_path, errors,
		       errors == 1 ? "" : "s");
	else
		printf("profile %s: valid\n", s->profile_path);
	if (out != stdout) {
		fclose(out);
		fwrite(body, 1, body_len, stdout);
		free(body);
	}
	fflush(stdout);
	if (tr_session_config_errors(s, 1))
		return TR_EXIT_USAGE;
	return unusable_required ? TR_EXIT_FAILURE : TR_EXIT_OK;
}

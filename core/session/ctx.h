/* The plugin context: what the core keeps per loaded plugin and hands the
 * plugin as its opaque `struct tracerig_ctx *` (include/tracerig/plugin.h).
 * The services, the supervisor and the session all work on it; it knows
 * its session only by pointer. */
#ifndef TR_CTX_H
#define TR_CTX_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "tracerig-private/ext.h"

#include "loader.h"
#include "phase.h"

struct tr_session;
struct tr_section;
struct tr_driver;

struct tr_counter {
	char *name;
	uint64_t value;
};

/* A pprof entry a source staged (the pprof_entry service), for the manifest. */
struct tr_pprof_entry {
	char *name;
	uint64_t samples, total;
};

#define TR_CTX_MAX_WARNINGS 16

struct tracerig_ctx {
	struct tr_session *session;
	struct tr_loaded loaded;
	const struct tracerig_plugin *plugin;
	struct tr_section *section;
	int required;
	void *state;
	enum tr_phase phase;
	const char *failed_in; /* "init", "start", "collect", "stop", "flush" */
	int error;             /* negative errno from the failing call */
	int in_init;
	int config_errors;     /* config_error() calls: profile errors */
	int validated;         /* --check: what validate returned (0 when none) */
	enum tracerig_model model; /* 0 when the source said nothing */

	/* Supervision (core/session/supervise.c). */
	struct tr_driver *driver;
	volatile sig_atomic_t fault_signal; /* the plugin faulted: never called again */
	long long hung_ms;                  /* abandoned after this long in failed_in */
	uint64_t window_start_ns, window_end_ns; /* when it really collected */

	pthread_mutex_t lock; /* counters and progress, set from plugin threads */
	struct tr_counter *counters;
	size_t n_counters;
	char progress[96];
	/* Its first warnings and errors, for manifest.json: what a reader of
	 * the archive alone must learn (a provider that cannot load, a map cut
	 * short) without the log.  Under lock too. */
	char *warnings[TR_CTX_MAX_WARNINGS];
	size_t n_warnings;
	struct tr_pprof_entry *pprof; /* under lock too */
	size_t n_pprof;

	/* The first error the plugin logs during a call under way (init,
	 * start, stop, flush) is held rather than printed: a call that fails
	 * is said once, by the core, with its phase and this as the reason
	 * (core/session/steps.c); when the call succeeds it is printed as it was.
	 * Under lock. */
	int holding_errors;
	char *reason;

	/* LIST keys split for config_bind, by key index (core/session/services.c). */
	struct tracerig_list *lists;
	unsigned char *lists_split;
	size_t n_lists;
};

/* A context for the plugin `loaded` (which it takes over: freeing the
 * context unloads the plugin), bound to its profile section.  0 or -ENOMEM. */
int tr_ctx_new(struct tr_session *s, struct tr_loaded *loaded, struct tr_section *section,
	       struct tracerig_ctx **out);
void tr_ctx_free(struct tracerig_ctx *ctx);

/* A call begins: the plugin's first error is held (see holding_errors),
 * unless the plugin failed already (its reason stays). */
void tr_ctx_hold_errors(struct tracerig_ctx *ctx);
/* Holds `text` when an error is to be held: 1, else 0 (print it). */
int tr_ctx_hold_error(struct tracerig_ctx *ctx, const char *text);
/* The call ended: a held error is printed when it succeeded (`ok`), kept
 * as the reason when it failed. */
void tr_ctx_call_ended(struct tracerig_ctx *ctx, int ok);
/* Prints the reason kept (if any) as the plugin's error, and forgets it. */
void tr_ctx_say_reason(struct tracerig_ctx *ctx);

#endif

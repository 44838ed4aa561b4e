/* A stand-in for perf_events in the wall-clock test: a source plugin that
 * writes cpu.folded at flush, as perf_events does, with on-CPU "samples" of
 * the launched command ("comm-PID;tcomm-TID") and of another process that
 * must be left out of the wall view, and declares it as on-CPU time at
 * 10 ms a sample (folded_view).  Test-only, never installed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tracerig-private/ext.h"

/* One key per paragraph, as the reference lists them. */
/* clang-format off */
static const struct tracerig_key fakecpu_keys[] = {
	{ .name = NULL },
};
/* clang-format on */

struct fakecpu {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
};

static int fakecpu_init(const struct tracerig_services *svc, struct tracerig_ctx *ctx, void **state)
{
	struct fakecpu *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->svc = svc;
	f->ctx = ctx;
	*state = f;
	return 0;
}

static int fakecpu_start(void *state)
{
	(void)state;
	return 0;
}

static int fakecpu_stop(void *state)
{
	(void)state;
	return 0;
}

static int fakecpu_flush(void *state, struct tracerig_archive *ar)
{
	struct fakecpu *f = state;
	const struct tracerig_targets *t = f->svc->procs->targets(f->ctx);
	FILE *out = f->svc->archive->fopen(ar, "cpu.folded");

	if (!out)
		return -errno;
	/* 10 samples of 10 ms = 100 ms in main;spin_on_cpu; the other
	 * process (PID 1) must not show up. */
	fprintf(out, "workload-%d;workload-%d;main;spin_on_cpu 7\n", (int)t->command_pid,
		(int)t->command_pid);
	fprintf(out, "workload-%d;workload-%d;main;spin_on_cpu 3\n", (int)t->command_pid,
		(int)t->command_pid);
	fprintf(out, "init-1;init-1;other_process 50\n");
	if (fclose(out) != 0)
		return -EIO;
	return tracerig_internal(f->svc)->folded_view(f->ctx, "cpu.folded", TRACERIG_TIME_ONCPU,
						      10000000);
}

static void fakecpu_fini(void *state)
{
	free(state);
}

TRACERIG_PLUGIN = {
	.abi_version = TRACERIG_ABI_VERSION,
	.name = "fakecpu",
	.version = "0",
	.kind = TRACERIG_PLUGIN_SOURCE,
	.description = "test stand-in for perf_events' cpu.folded",
	.package = "none",
	.keys = fakecpu_keys,
	.internal_version = TRACERIG_INTERNAL_VERSION,
	.init = fakecpu_init,
	.start = fakecpu_start,
	.stop = fakecpu_stop,
	.flush = fakecpu_flush,
	.fini = fakecpu_fini,
};

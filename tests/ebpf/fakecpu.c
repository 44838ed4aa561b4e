/* A stand-in for perf_events in the wall-clock test: a source plugin that
 * hands the core's stack sink on-CPU "samples" at flush, as perf_events
 * does, of the launched command ("comm-PID;tcomm-TID") and of another
 * process that must be left out of the wall view, offered as on-CPU time
 * at 10 ms a sample.  Test-only, never installed. */
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
	const struct tracerig_internal_services *in = tracerig_internal(f->svc);
	pid_t pid = f->svc->procs->targets(f->ctx)->command_pid;
	/* Addresses nothing maps, named by the source (innermost first). */
	static const uint64_t spin[] = { 0x1002, 0x1001 }, other[] = { 0x2001 };
	static const char *const spin_names[] = { "spin_on_cpu", "main" };
	static const char *const other_names[] = { "other_process" };
	/* 10 samples of 10 ms = 100 ms in main;spin_on_cpu; the other
	 * process (PID 1) must not show up. */
	const struct tracerig_stack stacks[] = {
		{ .pid = pid,
		  .tid = pid,
		  .comm = "workload",
		  .tcomm = "workload",
		  .user = spin,
		  .user_names = spin_names,
		  .n_user = 2,
		  .count = 7,
		  .ns = 70000000 },
		{ .pid = pid,
		  .tid = pid,
		  .comm = "workload",
		  .tcomm = "workload",
		  .user = spin,
		  .user_names = spin_names,
		  .n_user = 2,
		  .count = 3,
		  .ns = 30000000 },
		{ .pid = 1,
		  .tid = 1,
		  .comm = "init",
		  .tcomm = "init",
		  .user = other,
		  .user_names = other_names,
		  .n_user = 1,
		  .count = 50,
		  .ns = 500000000 },
	};
	const struct tracerig_stacks_spec spec = {
		.name = "cpu",
		.title = "CPU samples",
		.what = TRACERIG_TIME_ONCPU,
		.flags = TRACERIG_STACKS_WALL,
		.ns_per_sample = 10000000,
	};
	struct tracerig_stacks *sink = in->stacks_open(f->ctx, &spec);
	int ret;

	if (!sink)
		return -errno;
	ret = in->stacks_add(sink, stacks, sizeof(stacks) / sizeof(stacks[0]));
	if (ret == 0)
		ret = in->stacks_write(sink, ar, NULL);
	in->stacks_close(sink);
	return ret;
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

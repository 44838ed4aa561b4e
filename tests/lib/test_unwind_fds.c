/* The unwinder's open objects and the open-files limit (issue 27, item 9).
 * A module libdwfl reads keeps its object's file open: an unwinder keeps
 * a share of RLIMIT_NOFILE of them, closes the least recently needed ones
 * past it and opens them again (the same way, through the process model)
 * when a sample needs them; when no descriptor is left it closes what it
 * can and tries again, and when even that fails the sample's stack is cut
 * there, counted and said once, and the objects are read once
 * descriptors are free again: nothing is given up for good.
 *
 * The samples are this process's own stack (test_level_two ->
 * test_level_one -> main, in this program and libc) unwound for children
 * forked after it was taken: each child is a process of its own to the
 * unwinder, with the same mappings, so each needs its own modules. */
#include "config.h"

#include "core/symbols/symbolizer.h"
#include "lib/unwind.h"
#include "stack-sample.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#if UW_AVAILABLE

#include "testing.h"

#define STACK_BYTES 8192
#define CHILDREN 12
/* What the unwinder keeps open under a soft limit of LOW_LIMIT: an eighth
 * of it, at least 8 (lib/unwind.c's OPEN_SHARE and OPEN_MIN). */
#define LOW_LIMIT 64
#define LOW_BOUND 8

struct tracerig_ctx {
	struct tr_symbolizer *sym;
	unsigned objects_asked; /* symbolizer_object calls */
	unsigned warnings;
	uint64_t unopened; /* the counter unwind_out_of_fds, as last set */
};

static int svc_object(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr,
		      struct tracerig_object *out)
{
	ctx->objects_asked++;
	return tr_symbolizer_object(ctx->sym, pid, addr, out);
}

static void svc_log(struct tracerig_ctx *ctx, enum tracerig_log_level level, const char *fmt, ...)
{
	(void)fmt;
	if (level <= TRACERIG_LOG_WARN)
		ctx->warnings++;
}

static void svc_counter_set(struct tracerig_ctx *ctx, const char *name, uint64_t value)
{
	if (strcmp(name, "unwind_out_of_fds") == 0)
		ctx->unopened = value;
}

static const struct tracerig_run_services run = { .log = svc_log, .counter_set = svc_counter_set };
static const struct tracerig_internal_services internal = { .symbolizer_object = svc_object };
static const struct tracerig_services svc = { .run = &run, .internal = &internal };

/* The sample: registers in DWARF order and a copy of the stack. */
static uint64_t regs[UW_N_REGS];
static uint64_t stack_copy[STACK_BYTES / 8];
static uint64_t stack_size;
static pid_t children[CHILDREN];

static void take_sample(const ucontext_t *uc)
{
	stack_sample_dwarf_regs(uc, regs);
	stack_size = stack_sample_copy(uc, stack_copy, STACK_BYTES);
}

static const char *name_of(struct tr_symbolizer *sym, uint64_t addr)
{
	struct tracerig_symbol s;

	return tr_symbolizer_lookup(sym, getpid(), addr, 0, &s) == 0 ? s.name : "?";
}

static int has_chain(struct tr_symbolizer *sym, const uint64_t *ips, size_t n)
{
	static const char *const chain[] = { "test_level_two", "test_level_one", "main" };

	for (size_t i = 0; i + 3 <= n; i++) {
		size_t j = 0;

		while (j < 3 && strcmp(name_of(sym, ips[i + j]), chain[j]) == 0)
			j++;
		if (j == 3)
			return 1;
	}
	return 0;
}

static size_t unwind_as(struct unwinder *u, pid_t pid, const uint64_t **ips)
{
	return uw_unwind(u, pid, pid, regs, stack_copy, stack_size, ips);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = -1; /* the directory's own */

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static int set_soft_limit(rlim_t n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	rl.rlim_cur = n < rl.rlim_max ? n : rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

/* Takes every descriptor left (dups of stdin); *fill gets them. */
static int exhaust_fds(int *fill, int max)
{
	int n = 0;

	while (n < max && (fill[n] = dup(0)) >= 0)
		n++;
	return n;
}

static void release_fds(int *fill, int n)
{
	for (int i = 0; i < n; i++)
		close(fill[i]);
}

/* The test's unwinder, its process model ctx->sym, under a soft
 * open-files limit of `limit`: *u stays NULL (the test failed) when either
 * is missing. */
static void start_unwinder(struct tracerig_ctx *ctx, rlim_t limit, struct unwinder **u)
{
	*u = NULL;
	CHECK_NOT_NULL(ctx->sym);
	EXPECT_EQ_INT(0, set_soft_limit(limit));
	*u = uw_new(&svc, ctx, NULL);
	CHECK_NOT_NULL(*u);
}

DEF_TEST(objects_kept_open_are_bounded_by_the_limit)
{
	struct tracerig_ctx ctx = { .sym = tr_symbolizer_new() };
	struct unwinder *u;
	const uint64_t *ips;
	struct uw_stats st;
	int base = open_fds(), most = 0;
	unsigned asked = 0;

	start_unwinder(&ctx, LOW_LIMIT, &u);
	if (!u)
		return;
	/* Two objects per process, for more processes than the bound holds:
	 * twice round, so the first ones are needed again once closed. */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < CHILDREN; i++) {
			size_t n = unwind_as(u, children[i], &ips);
			int now = open_fds() - base;

			if (!has_chain(ctx.sym, ips, n))
				TEST_FAIL("round %d, child %d: no test_level_two -> test_level_one -> "
					  "main in %zu frames", round, i, n);
			if (now > most)
				most = now;
		}
		if (round == 0)
			asked = ctx.objects_asked;
	}
	uw_get_stats(u, &st);
	printf("# at most %d descriptors held, %llu objects closed, %u of %u asked again\n", most,
	       (unsigned long long)st.objects_closed, ctx.objects_asked - asked, asked);
	/* The bound, and the vDSO's copy besides. */
	EXPECT_TRUE(most <= LOW_BOUND + 1);
	EXPECT_TRUE(st.objects_closed > 0);
	/* Closed objects are opened again when a sample needs them. */
	EXPECT_TRUE(ctx.objects_asked - asked > 0);
	EXPECT_EQ_INT(0, st.objects_unopened);
	EXPECT_EQ_INT(0, ctx.warnings);
	uw_free(u);
	EXPECT_EQ_INT(base, open_fds());
	tr_symbolizer_free(ctx.sym);
}

DEF_TEST(the_bound_follows_the_limit)
{
	struct tracerig_ctx ctx = { .sym = tr_symbolizer_new() };
	struct unwinder *u;
	const uint64_t *ips;
	struct uw_stats st;
	unsigned asked;

	/* 1024 / 8: room for every child's objects, nothing closed. */
	start_unwinder(&ctx, 1024, &u);
	if (!u)
		return;
	for (int i = 0; i < CHILDREN; i++)
		(void)unwind_as(u, children[i], &ips);
	asked = ctx.objects_asked;
	for (int i = 0; i < CHILDREN; i++)
		EXPECT_TRUE(has_chain(ctx.sym, ips, unwind_as(u, children[i], &ips)));
	uw_get_stats(u, &st);
	EXPECT_EQ_INT(0, st.objects_closed);
	EXPECT_EQ_INT(asked, ctx.objects_asked);
	uw_free(u);
	tr_symbolizer_free(ctx.sym);
}

/* No descriptor left, but some held by the unwinder: it closes them and
 * opens what the sample needs. */
DEF_TEST(out_of_descriptors_closes_and_retries)
{
	struct tracerig_ctx ctx = { .sym = tr_symbolizer_new() };
	struct unwinder *u;
	const uint64_t *ips;
	struct uw_stats st;
	int fill[LOW_LIMIT], n_fill;
	size_t n;

	start_unwinder(&ctx, LOW_LIMIT, &u);
	if (!u)
		return;
	for (int i = 0; i < 3; i++)
		(void)unwind_as(u, children[i], &ips);
	/* The model reads the next process's maps now, not while no
	 * descriptor is left (that too would be retried: not this test). */
	(void)tr_symbolizer_remember(ctx.sym, children[3]);
	n_fill = exhaust_fds(fill, LOW_LIMIT);
	EXPECT_TRUE(n_fill > 0);
	n = unwind_as(u, children[3], &ips);
	release_fds(fill, n_fill);
	uw_get_stats(u, &st);
	EXPECT_TRUE(has_chain(ctx.sym, ips, n));
	EXPECT_TRUE(st.objects_closed > 0);
	EXPECT_EQ_INT(0, st.objects_unopened);
	EXPECT_EQ_INT(0, ctx.warnings);
	uw_free(u);
	tr_symbolizer_free(ctx.sym);
}

/* No descriptor left and none to close: the stack is cut, counted, said
 * once; neither the unwinder nor the process model gives the objects up,
 * so once descriptors are free they are read and the frames named. */
DEF_TEST(nothing_to_close_cuts_the_stack_and_gives_nothing_up)
{
	struct tracerig_ctx ctx = { .sym = tr_symbolizer_new() };
	struct tracerig_object obj;
	struct unwinder *u;
	const uint64_t *ips;
	struct uw_stats st;
	int fill[LOW_LIMIT], n_fill, on_stack = 0;
	size_t n;

	start_unwinder(&ctx, LOW_LIMIT, &u);
	if (!u)
		return;
	/* The model has read the maps (no object at a stack address), and
	 * none of the objects yet. */
	EXPECT_EQ_INT(-ENOENT, tr_symbolizer_object(ctx.sym, children[0],
						    (uint64_t)(uintptr_t)&on_stack, &obj));
	n_fill = exhaust_fds(fill, LOW_LIMIT);
	EXPECT_TRUE(n_fill > 0);
	/* More than the model's attempts at an unreadable object (3), each
	 * past the time the unwinder waits before asking again. */
	for (int i = 0; i < 5; i++) {
		n = unwind_as(u, children[0], &ips);
		EXPECT_TRUE(n >= 1);
		usleep(60 * 1000);
	}
	uw_get_stats(u, &st);
	release_fds(fill, n_fill);
	EXPECT_TRUE(st.objects_unopened >= 2);
	EXPECT_TRUE(ctx.unopened >= st.objects_unopened);
	EXPECT_EQ_INT(1, ctx.warnings);
	n = unwind_as(u, children[0], &ips);
	if (!has_chain(ctx.sym, ips, n))
		TEST_FAIL("once descriptors are free, no test_level_two -> test_level_one -> main "
			  "in %zu frames", n);
	uw_free(u);
	tr_symbolizer_free(ctx.sym);
}

int main(void)
{
	struct rlimit rl;
	int gate[2];

	test_level_one();
	if (pipe(gate) < 0)
		return 1;
	/* Processes with this one's mappings, blocked until the end. */
	for (int i = 0; i < CHILDREN; i++) {
		char byte;

		children[i] = fork();
		if (children[i] < 0)
			return 1;
		if (children[i] == 0) {
			close(gate[1]);
			_exit(read(gate[0], &byte, 1) < 0);
		}
	}
	close(gate[0]);
	RUN_TEST(objects_kept_open_are_bounded_by_the_limit);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max >= 1024)
		RUN_TEST(the_bound_follows_the_limit);
	else
		SKIP_TEST(the_bound_follows_the_limit, "a hard open-files limit below 1024");
	RUN_TEST(out_of_descriptors_closes_and_retries);
	RUN_TEST(nothing_to_close_cuts_the_stack_and_gives_nothing_up);
	close(gate[1]);
	for (int i = 0; i < CHILDREN; i++)
		waitpid(children[i], NULL, 0);
	TEST_MAIN_END();
}

#else

int main(void)
{
	return stack_sample_skip_all();
}

#endif

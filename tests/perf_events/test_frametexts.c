/* perf_events' frame texts (no root): a frame's perf.data.txt line and
 * folded name are made from the core's frame_name once per (process,
 * generation, address) and served again only while the process keeps that
 * generation; kernel frames once for every process; frames nothing named
 * are asked again every time, as the core may name them later.
 *
 * The core is a fake here: its answers and its generation are the test's. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "frametexts.h"
#include "testing.h"

#define P 4242
#define Q 4343
#define T0 5000000000ull

/* The fake core: frame_name answers from `names` by address, counting the
 * calls; the generation is `gen` (moved to `bump_to` during the call that
 * bump_at counts down to, as a lookup rereading mappings does). */
struct tracerig_ctx {
	int calls;
	uint64_t time_ns; /* what the last call was given */
	uint32_t gen;
	int bump_at;
	uint32_t bump_to;
	struct {
		uint64_t addr;
		const char *fold, *name, *dso;
		int ret;
	} names[8];
};

static int fake_frame_name(struct tracerig_ctx *c, pid_t pid, uint64_t addr, int kernel,
			   const char **name, struct tracerig_symbol *sym)
{
	c->calls++;
	if (c->bump_at && --c->bump_at == 0)
		c->gen = c->bump_to;
	for (size_t i = 0; i < sizeof(c->names) / sizeof(c->names[0]); i++)
		if (c->names[i].addr == addr && c->names[i].fold) {
			*name = c->names[i].fold;
			*sym = (struct tracerig_symbol){ c->names[i].name, c->names[i].dso, 0, 0 };
			return c->names[i].ret;
		}
	*name = kernel ? "[unknown]_[k]" : "[unknown]";
	*sym = (struct tracerig_symbol){ NULL, "[unknown]", 0, 0 };
	return -ENOENT;
}

static int fake_frame_name_at(struct tracerig_ctx *c, pid_t pid, uint64_t addr, int kernel,
			      uint64_t time_ns, const char **name, struct tracerig_symbol *sym)
{
	c->time_ns = time_ns;
	return fake_frame_name(c, pid, addr, kernel, name, sym);
}

static int fake_frame_generation(struct tracerig_ctx *c, pid_t pid, uint32_t *gen)
{
	*gen = c->gen;
	return 0;
}

static const struct tracerig_symbol_services symbols = {
	.size = sizeof(symbols),
	.frame_name = fake_frame_name_at,
};
static const struct tracerig_internal_services internal = {
	.size = sizeof(internal),
	.frame_generation = fake_frame_generation,
};
static const struct tracerig_services svc = { .symbols = &symbols, .internal = &internal };

static void set_name(struct tracerig_ctx *c, int i, uint64_t addr, const char *fold,
		     const char *name, const char *dso, int ret)
{
	c->names[i].addr = addr;
	c->names[i].fold = fold;
	c->names[i].name = name;
	c->names[i].dso = dso;
	c->names[i].ret = ret;
}

/* The first frame of a new sample. */
static const struct frame_text *first_frame(struct frametexts *ft, pid_t pid, uint64_t addr,
					    int kernel, int *ret)
{
	ft_sample(ft);
	return ft_text(ft, pid, addr, kernel, 0, ret);
}

static int is_text(const struct frame_text *t, const char *line, const char *fold)
{
	/* The name is a string of its own, for the stack sink. */
	return t && t->line_len == strlen(line) && memcmp(t->s, line, t->line_len) == 0 &&
	       t->fold_len == strlen(fold) && strcmp(t->s + t->line_len, fold) == 0;
}

DEF_TEST(a_frame_is_named_once_while_its_generation_stays)
{
	struct tracerig_ctx c = { .gen = 7 };
	struct frametexts *ft = ft_new(&svc, &c);
	const struct frame_text *t, *again;
	int ret = 1;

	CHECK_NOT_NULL(ft);
	set_name(&c, 0, 0x401000, "main", "main", "/usr/bin/app", 0);
		t = first_frame(ft, P, 0x401000, 0, &ret);
	EXPECT_TRUE(is_text(t, "\t          401000 main (/usr/bin/app)\n", "main"));
	EXPECT_EQ_INT(0, ret);
	for (int i = 0; i < 3; i++) {
				again = first_frame(ft, P, 0x401000, 0, &ret);
		EXPECT_TRUE(again == t);
	}
	EXPECT_EQ_INT(1, c.calls);

	/* Another process at the same address is another frame. */
		EXPECT_TRUE(first_frame(ft, Q, 0x401000, 0, &ret) != t);
	EXPECT_EQ_INT(2, c.calls);
	ft_free(ft);
}

DEF_TEST(a_new_generation_is_asked_again)
{
	struct tracerig_ctx c = { .gen = 1 };
	struct frametexts *ft = ft_new(&svc, &c);
	const struct frame_text *t;
	int ret;

	CHECK_NOT_NULL(ft);
	set_name(&c, 0, 0x401000, "main", "main", "/usr/bin/app", 0);
		EXPECT_TRUE(is_text(first_frame(ft, P, 0x401000, 0, &ret),
			    "\t          401000 main (/usr/bin/app)\n", "main"));

	/* The replay mapped other code there between two samples. */
	c.gen = 2;
	set_name(&c, 0, 0x401000, "jit:fn", "jit;fn", "/tmp/perf-4242.map", 0);
		t = first_frame(ft, P, 0x401000, 0, &ret);
	EXPECT_TRUE(is_text(t, "\t          401000 jit;fn (/tmp/perf-4242.map)\n", "jit:fn"));
	EXPECT_EQ_INT(2, c.calls);
	ft_free(ft);
}

DEF_TEST(a_generation_moved_by_the_lookup_holds_for_the_rest_of_the_sample)
{
	struct tracerig_ctx c = { .gen = 1 };
	struct frametexts *ft = ft_new(&svc, &c);
	int ret;

	CHECK_NOT_NULL(ft);
	set_name(&c, 0, 0x401000, "main", "main", "/usr/bin/app", 0);
	set_name(&c, 1, 0x402000, "run", "run", "/usr/bin/app", 0);
		(void)first_frame(ft, P, 0x402000, 0, &ret);
	EXPECT_EQ_INT(1, c.calls);
	/* The next lookup rereads the mappings: the same sample's next frame,
	 * kept under the old generation, is asked again. */
	c.bump_at = 1;
	c.bump_to = 2;
		(void)first_frame(ft, P, 0x401000, 0, &ret);
	EXPECT_EQ_INT(2, c.calls);
	(void)ft_text(ft, P, 0x402000, 0, 0, &ret);
	EXPECT_EQ_INT(3, c.calls);
	ft_free(ft);
}

DEF_TEST(kernel_frames_are_one_text_for_every_process)
{
	struct tracerig_ctx c = { .gen = 1 };
	struct frametexts *ft = ft_new(&svc, &c);
	const struct frame_text *t;
	int ret = 1;

	CHECK_NOT_NULL(ft);
	set_name(&c, 0, 0xffffffff81000000ull, "schedule_[k]", "schedule", "[kernel.kallsyms]", 0);
		t = first_frame(ft, P, 0xffffffff81000000ull, 1, &ret);
		/* The name for the stack sink as frame_name gave it, kernel mark
	 * and all. */
		EXPECT_TRUE(is_text(t, "\tffffffff81000000 schedule ([kernel.kallsyms])\n",
				    "schedule_[k]"));
		c.gen = 5;
		EXPECT_TRUE(first_frame(ft, Q, 0xffffffff81000000ull, 1, &ret) == t);
	EXPECT_EQ_INT(1, c.calls);
	ft_free(ft);
}

DEF_TEST(an_unnamed_user_frame_is_asked_every_time)
{
	struct tracerig_ctx c = { .gen = 1 };
	struct frametexts *ft = ft_new(&svc, &c);
	const struct frame_text *t, *again;
	int ret = 0;

	CHECK_NOT_NULL(ft);
		t = first_frame(ft, P, 0x7000, 0, &ret);
	EXPECT_TRUE(is_text(t, "\t            7000 [unknown] ([unknown])\n", "[unknown]"));
	EXPECT_EQ_INT(-ENOENT, ret);
	/* The core answers from the same entry: the same text. */
		again = first_frame(ft, P, 0x7000, 0, &ret);
	EXPECT_TRUE(again == t);
	EXPECT_EQ_INT(2, c.calls);

	/* The runtime wrote its perf map since: the core names it now,
	 * within the same generation. */
	set_name(&c, 0, 0x7000, "jit_fn", "jit_fn", "/tmp/perf-4242.map", 0);
		t = first_frame(ft, P, 0x7000, 0, &ret);
	EXPECT_TRUE(is_text(t, "\t            7000 jit_fn (/tmp/perf-4242.map)\n", "jit_fn"));
	EXPECT_EQ_INT(0, ret);
	EXPECT_EQ_INT(3, c.calls);
		EXPECT_TRUE(first_frame(ft, P, 0x7000, 0, &ret) == t);
	EXPECT_EQ_INT(3, c.calls);
	ft_free(ft);
}

/* The core rereads a runtime's maps by the sample's time (frame_name's time_ns):
 * the time has to reach it. */
DEF_TEST(the_sample_time_reaches_the_core)
{
	struct tracerig_ctx c = { .gen = 1 };
	struct frametexts *ft = ft_new(&svc, &c);
	int ret = 0;

	CHECK_NOT_NULL(ft);
	ft_sample(ft);
	EXPECT_TRUE(ft_text(ft, P, 0x7000, 0, 123456789, &ret) != NULL);
	EXPECT_TRUE(c.time_ns == 123456789);
	ft_free(ft);
}

DEF_TEST(many_frames_stay_where_they_are)
{
	struct tracerig_ctx c = { .gen = 1 };
	struct frametexts *ft = ft_new(&svc, &c);
	const struct frame_text *first;
	int ret;

	CHECK_NOT_NULL(ft);
	set_name(&c, 0, 0x1000, "f", "f", "/usr/bin/app", 0);
		first = first_frame(ft, P, 0x1000, 0, &ret);
	/* Enough to grow the table and take many chunks. */
	for (uint64_t a = 1; a < 20000; a++)
		EXPECT_TRUE(ft_text(ft, P, 0x1000 + a * 16, 1, 0, &ret) != NULL);
	EXPECT_TRUE(ft_text(ft, P, 0x1000, 0, 0, &ret) == first);
	EXPECT_TRUE(is_text(first, "\t            1000 f (/usr/bin/app)\n", "f"));
	ft_free(ft);
}

/* Issue 27: a session beside a compile loop sees thousands of processes a
 * minute; what is kept for one goes once its last thread exited. */
DEF_TEST(a_process_that_ended_keeps_no_text)
{
	struct tracerig_ctx c = { .gen = 1 };
	struct frametexts *ft = ft_new(&svc, &c);
	const struct frame_text *kernel;
	size_t procs, user, nk;
	int ret;

	CHECK_NOT_NULL(ft);
	set_name(&c, 0, 0x401000, "main", "main", "/usr/bin/app", 0);
	EXPECT_EQ_INT(0, ft_fork(ft, P, 1, P));
	EXPECT_EQ_INT(0, ft_fork(ft, P, P, P + 1)); /* a second thread */
	for (uint64_t a = 0; a < 100; a++)
		EXPECT_TRUE(first_frame(ft, P, 0x401000 + a, 0, &ret) != NULL);
	kernel = first_frame(ft, P, 0xffffffff81000000ull, 1, &ret);
	ft_counts(ft, &procs, &user, &nk);
	EXPECT_EQ_INT(1, (int)procs);
	EXPECT_EQ_INT(100, (int)user);
	EXPECT_EQ_INT(1, (int)nk);

	/* exit_group(): the leader may go before the other threads. */
	EXPECT_EQ_INT(0, ft_exit(ft, P, P, T0));
	ft_counts(ft, &procs, &user, &nk);
	EXPECT_EQ_INT(100, (int)user);
	EXPECT_EQ_INT(1, ft_exit(ft, P, P + 1, T0 + 10));
	/* A thread is sampled while it exits, after its EXIT record: what the
	 * process kept stays a while. */
	EXPECT_EQ_INT(0, ft_expire(ft, T0 + 10 + FT_GRACE_NS - 1));
	c.calls = 0;
	EXPECT_TRUE(first_frame(ft, P, 0x401000, 0, &ret) != NULL);
	EXPECT_EQ_INT(0, c.calls);
	EXPECT_EQ_INT(P, ft_expire(ft, T0 + 10 + FT_GRACE_NS));
	EXPECT_EQ_INT(0, ft_expire(ft, T0 + 10 + FT_GRACE_NS));
	ft_counts(ft, &procs, &user, &nk);
	EXPECT_EQ_INT(0, (int)procs);
	EXPECT_EQ_INT(0, (int)user);
	/* Kernel frames are every process's. */
	EXPECT_EQ_INT(1, (int)nk);
	EXPECT_TRUE(first_frame(ft, Q, 0xffffffff81000000ull, 1, &ret) == kernel);

	/* The PID again, a new process: the core is asked again, even under
	 * the generation number the old one had. */
	c.calls = 0;
	EXPECT_EQ_INT(0, ft_fork(ft, P, 1, P));
	set_name(&c, 0, 0x401000, "other", "other", "/usr/bin/other", 0);
	EXPECT_TRUE(is_text(first_frame(ft, P, 0x401000, 0, &ret),
			    "\t          401000 other (/usr/bin/other)\n", "other"));
	EXPECT_EQ_INT(1, c.calls);
	ft_free(ft);
}

DEF_TEST(a_pid_used_again_within_the_grace_starts_afresh)
{
	struct tracerig_ctx c = { .gen = 1 };
	struct frametexts *ft = ft_new(&svc, &c);
	int ret;

	CHECK_NOT_NULL(ft);
	set_name(&c, 0, 0x401000, "main", "main", "/usr/bin/app", 0);
	EXPECT_EQ_INT(0, ft_fork(ft, P, 1, P));
	(void)first_frame(ft, P, 0x401000, 0, &ret);
	EXPECT_EQ_INT(1, ft_exit(ft, P, P, T0));
	/* The old one goes now: the caller tells the core before the fork. */
	EXPECT_EQ_INT(1, ft_fork(ft, P, 1, P));
	c.calls = 0;
	(void)first_frame(ft, P, 0x401000, 0, &ret);
	EXPECT_EQ_INT(1, c.calls);
	/* Its grace ending does not take the new one. */
	EXPECT_EQ_INT(0, ft_expire(ft, T0 + FT_GRACE_NS));
	(void)first_frame(ft, P, 0x401000, 0, &ret);
	EXPECT_EQ_INT(1, c.calls);
	ft_free(ft);
}

DEF_TEST(a_process_there_before_the_recording_stays)
{
	struct tracerig_ctx c = { .gen = 1 };
	struct frametexts *ft = ft_new(&svc, &c);
	const struct frame_text *t;
	size_t procs, user, nk;
	int ret;

	CHECK_NOT_NULL(ft);
	set_name(&c, 0, 0x401000, "main", "main", "/usr/bin/app", 0);
	t = first_frame(ft, Q, 0x401000, 0, &ret);
	/* Its threads were never counted: one exit says nothing of the rest. */
	EXPECT_EQ_INT(0, ft_exit(ft, Q, Q + 1, T0));
	EXPECT_EQ_INT(0, ft_exit(ft, Q, Q, T0));
	EXPECT_EQ_INT(0, ft_expire(ft, T0 + 2 * FT_GRACE_NS));
	EXPECT_TRUE(first_frame(ft, Q, 0x401000, 0, &ret) == t);
	ft_counts(ft, &procs, &user, &nk);
	EXPECT_EQ_INT(1, (int)user);
	EXPECT_EQ_INT(1, c.calls);
	ft_free(ft);
}

DEF_TEST(many_processes_come_and_go)
{
	struct tracerig_ctx c = { .gen = 1 };
	struct frametexts *ft = ft_new(&svc, &c);
	size_t procs, user, nk;
	int ret;

	CHECK_NOT_NULL(ft);
	set_name(&c, 0, 0x400000, "main", "main", "/usr/bin/app", 0);
	/* Overlapping lives, so that the tables grow and lose entries in
	 * the middle of their probe runs. */
	for (pid_t pid = 1000; pid < 21000; pid++) {
		EXPECT_EQ_INT(0, ft_fork(ft, pid, 1, pid));
		for (uint64_t a = 0; a < 4; a++)
			(void)first_frame(ft, pid, 0x400000 + a * 64, 0, &ret);
		if (pid >= 1050)
			EXPECT_EQ_INT(1, ft_exit(ft, pid - 50, pid - 50, T0 + (uint64_t)(pid - 50) * 1000));
		if (pid >= 1100)
			EXPECT_EQ_INT(pid - 100, ft_expire(ft, T0 + (uint64_t)(pid - 100) * 1000 +
							      FT_GRACE_NS));
	}
	/* 50 running, 50 ended within their grace. */
	ft_counts(ft, &procs, &user, &nk);
	EXPECT_EQ_INT(100, (int)procs);
	EXPECT_EQ_INT(400, (int)user);
	while (ft_expire(ft, UINT64_MAX) > 0)
		;
	ft_counts(ft, &procs, &user, &nk);
	EXPECT_EQ_INT(50, (int)procs);
	EXPECT_EQ_INT(200, (int)user);
	/* Those still running are served from what is kept. */
	c.calls = 0;
	for (pid_t pid = 20950; pid < 21000; pid++)
		EXPECT_TRUE(first_frame(ft, pid, 0x400000, 0, &ret) != NULL);
	EXPECT_EQ_INT(0, c.calls);
	ft_free(ft);
}

int main(void)
{
	RUN_TEST(a_frame_is_named_once_while_its_generation_stays);
	RUN_TEST(a_new_generation_is_asked_again);
	RUN_TEST(a_generation_moved_by_the_lookup_holds_for_the_rest_of_the_sample);
	RUN_TEST(kernel_frames_are_one_text_for_every_process);
	RUN_TEST(an_unnamed_user_frame_is_asked_every_time);
	RUN_TEST(the_sample_time_reaches_the_core);
	RUN_TEST(many_frames_stay_where_they_are);
	RUN_TEST(a_process_that_ended_keeps_no_text);
	RUN_TEST(a_pid_used_again_within_the_grace_starts_afresh);
	RUN_TEST(a_process_there_before_the_recording_stays);
	RUN_TEST(many_processes_come_and_go);
	TEST_MAIN_END();
}

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

/* The fake core: frame_name answers from `names` by address, counting the
 * calls; the generation is `gen` (moved to `bump_to` during the call that
 * bump_at counts down to, as a lookup rereading mappings does). */
struct tracerig_ctx {
	int calls;
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

static int fake_frame_generation(struct tracerig_ctx *c, pid_t pid, uint32_t *gen)
{
	*gen = c->gen;
	return 0;
}

static const struct tracerig_services svc = {
	.frame_name = fake_frame_name,
	.frame_generation = fake_frame_generation,
};

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
	return ft_text(ft, pid, addr, kernel, ret);
}

static int is_text(const struct frame_text *t, const char *line, const char *fold)
{
	return t && t->line_len == strlen(line) && memcmp(t->s, line, t->line_len) == 0 &&
	       t->fold_len == strlen(fold) && memcmp(t->s + t->line_len, fold, t->fold_len) == 0;
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
	EXPECT_EQ_INT(0, t->no_object);
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
	(void)ft_text(ft, P, 0x402000, 0, &ret);
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
	/* fold_frames adds the kernel mark itself. */
	EXPECT_TRUE(is_text(t, "\tffffffff81000000 schedule ([kernel.kallsyms])\n", "schedule"));
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
	EXPECT_EQ_INT(1, t->no_object);
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
		EXPECT_TRUE(ft_text(ft, P, 0x1000 + a * 16, 1, &ret) != NULL);
	EXPECT_TRUE(ft_text(ft, P, 0x1000, 0, &ret) == first);
	EXPECT_TRUE(is_text(first, "\t            1000 f (/usr/bin/app)\n", "f"));
	ft_free(ft);
}

int main(void)
{
	RUN_TEST(a_frame_is_named_once_while_its_generation_stays);
	RUN_TEST(a_new_generation_is_asked_again);
	RUN_TEST(a_generation_moved_by_the_lookup_holds_for_the_rest_of_the_sample);
	RUN_TEST(kernel_frames_are_one_text_for_every_process);
	RUN_TEST(an_unnamed_user_frame_is_asked_every_time);
	RUN_TEST(many_frames_stay_where_they_are);
	TEST_MAIN_END();
}

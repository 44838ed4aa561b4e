/* The one folded-stack builder (lib/folded.c): summing identical lines,
 * sorted output, weight units, and the root every folded file shares. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/folded.h"
#include "../testing.h"

static char *written(const struct tr_folded *f, uint64_t divisor)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		return NULL;
	if (tr_folded_write(f, out, divisor) < 0) {
		fclose(out);
		free(buf);
		return NULL;
	}
	fclose(out);
	return buf;
}

struct add {
	const char *line;
	size_t len;
	uint64_t weight;
};

/* Adds every `adds` to a new set and returns what it writes with
 * `divisor`; *count gets the distinct lines. */
static char *fold(const struct add *adds, size_t n, uint64_t divisor, size_t *count)
{
	struct tr_folded *f = tr_folded_new();
	char *out;

	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++)
		EXPECT_EQ_INT(0, tr_folded_add(f, adds[i].line, adds[i].len, adds[i].weight));
	*count = tr_folded_count(f);
	out = written(f, divisor);
	tr_folded_free(f);
	return out;
}

DEF_TEST(identical_lines_are_summed_and_written_sorted_in_units)
{
	static const struct add summed[] = {
		{ "b;x", 3, 2 },
		{ "a;y and more", 3, 1 }, /* only the first 3 bytes */
		{ "b;x", 3, 5 },
	};
	/* A divisor turns nanoseconds into microseconds, rounding. */
	static const struct add in_ns[] = {
		{ "b;x", 3, 1500000 },
		{ "a;y", 3, 1500 },   /* 1.5 us rounds to 2 */
		{ "b;x", 3, 500000 },
		{ "c;tiny", 6, 400 }, /* rounds to 0 us: left out */
	};
	static const struct {
		const struct add *adds;
		size_t n, count;
		uint64_t divisor;
		const char *expect;
	} cases[] = {
		{ summed, 3, 2, 1, "a;y 1\nb;x 7\n" },
		{ in_ns, 4, 3, 1000, "a;y 2\nb;x 2000\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t count = 0;
		char *out = fold(cases[i].adds, cases[i].n, cases[i].divisor, &count);

		EXPECT_EQ_INT(cases[i].count, count);
		EXPECT_EQ_STR(cases[i].expect, out);
		free(out);
	}
}

DEF_TEST(an_empty_set_writes_nothing)
{
	struct tr_folded *f = tr_folded_new();
	char *out;

	CHECK_NOT_NULL(f);
	out = written(f, 1);
	EXPECT_EQ_STR("", out);
	free(out);
	tr_folded_free(f);
}

static int sum_each(void *arg, const char *line, uint64_t weight)
{
	(void)line;
	*(uint64_t *)arg += weight;
	return 0;
}

DEF_TEST(many_lines_survive_growth_and_each_visits_all)
{
	struct tr_folded *f = tr_folded_new();
	uint64_t total = 0;
	char line[32];

	CHECK_NOT_NULL(f);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5000; i++) {
			int n = snprintf(line, sizeof(line), "p;f%d", i);

			EXPECT_EQ_INT(0, tr_folded_add(f, line, (size_t)n, 3));
		}
	EXPECT_EQ_INT(5000, tr_folded_count(f));
	EXPECT_EQ_INT(0, tr_folded_each(f, sum_each, &total));
	EXPECT_EQ_INT(30000, total);
	tr_folded_free(f);
}

DEF_TEST(the_root_is_process_then_thread)
{
	char buf[128];

	EXPECT_EQ_INT(18, tr_folded_root(buf, sizeof(buf), "app", 42, "worker-1", 43));
	EXPECT_EQ_STR("app-42;worker-1-43", buf);
	/* Names cannot forge frames or lines; unknown names say so. */
	tr_folded_root(buf, sizeof(buf), "we;ird", 7, "a\nb", 8);
	EXPECT_EQ_STR("we:ird-7;a?b-8", buf);
	tr_folded_root(buf, sizeof(buf), "", 9, NULL, 10);
	EXPECT_EQ_STR("[unknown]-9;[unknown]-10", buf);
	EXPECT_EQ_INT(-ENOSPC, tr_folded_root(buf, 8, "app", 42, "app", 42));
	/* UTF-8 stays, a broken sequence at the name's end is one '?' and
	 * the ID follows it. */
	EXPECT_EQ_INT(21, tr_folded_root(buf, sizeof(buf), "caf\xc3\xa9", 1, "x\xc3", 2147483647));
	EXPECT_EQ_STR("caf\xc3\xa9-1;x?-2147483647", buf);
	/* Exactly room for "app-42;app-42" and its NUL, and one byte short. */
	EXPECT_EQ_INT(13, tr_folded_root(buf, 14, "app", 42, "app", 42));
	EXPECT_EQ_STR("app-42;app-42", buf);
	EXPECT_EQ_INT(-ENOSPC, tr_folded_root(buf, 13, "app", 42, "app", 42));
}

static void parse(const char *stack, struct tr_folded_rootinfo *r, char *comm, char *tcomm)
{
	tr_folded_root_parse(stack, r);
	snprintf(comm, 64, "%.*s", (int)r->comm_len, r->comm);
	snprintf(tcomm, 64, "%.*s", (int)r->tcomm_len, r->tcomm ? r->tcomm : "");
}

DEF_TEST(the_root_parses_in_the_new_form_and_both_old_ones)
{
	struct tr_folded_rootinfo r;
	char comm[64], tcomm[64];

	parse("my-app-42;worker-1-43;main;run", &r, comm, tcomm);
	EXPECT_EQ_STR("my-app", comm);
	EXPECT_EQ_INT(42, r.pid);
	EXPECT_EQ_STR("worker-1", tcomm);
	EXPECT_EQ_INT(43, r.tid);
	EXPECT_EQ_STR("main;run", r.frames);

	/* cpu.folded before the thread frame. */
	parse("my-app-42;main;run", &r, comm, tcomm);
	EXPECT_EQ_STR("my-app", comm);
	EXPECT_EQ_INT(42, r.pid);
	EXPECT_TRUE(r.tcomm == NULL);
	EXPECT_EQ_INT(-1, r.tid);
	EXPECT_EQ_STR("main;run", r.frames);

	/* offcpu.folded / wall.folded before it. */
	parse("my-app;main;read_[k]", &r, comm, tcomm);
	EXPECT_EQ_STR("my-app", comm);
	EXPECT_EQ_INT(-1, r.pid);
	EXPECT_EQ_INT(-1, r.tid);
	EXPECT_EQ_STR("main;read_[k]", r.frames);

	/* Roots alone. */
	parse("app-42;app-42", &r, comm, tcomm);
	EXPECT_EQ_INT(42, r.pid);
	EXPECT_EQ_INT(42, r.tid);
	EXPECT_TRUE(r.frames == NULL);
	parse("swapper", &r, comm, tcomm);
	EXPECT_EQ_STR("swapper", comm);
	EXPECT_EQ_INT(-1, r.pid);
	EXPECT_TRUE(r.frames == NULL);
	/* A name of digits only is a name, not an ID. */
	parse("-12;main", &r, comm, tcomm);
	EXPECT_EQ_INT(-1, r.pid);
}

DEF_TEST(what_the_builder_writes_parses_back)
{
	struct tr_folded_rootinfo r;
	char buf[128], comm[64], tcomm[64];
	int n = tr_folded_root(buf, sizeof(buf), "kworker/0:1-events", 5, "kworker/0:1-events", 5);

	EXPECT_TRUE(n > 0);
	snprintf(buf + n, sizeof(buf) - (size_t)n, ";worker_thread_[k]");
	parse(buf, &r, comm, tcomm);
	EXPECT_EQ_STR("kworker/0:1-events", comm);
	EXPECT_EQ_INT(5, r.pid);
	EXPECT_EQ_STR("kworker/0:1-events", tcomm);
	EXPECT_EQ_INT(5, r.tid);
	EXPECT_EQ_STR("worker_thread_[k]", r.frames);
}

/* Lines of many "processes", some repeated across the whole run (a
 * process alive all along), the same set added to a set that spills every
 * few hundred bytes and to one that never does. */
static void add_mix(struct tr_folded *f, unsigned seed)
{
	char line[128];

	for (unsigned i = 0; i < 4000; i++) {
		unsigned pid = 100 + (i * 7 + seed) % 900, depth = i % 5;
		int len = snprintf(line, sizeof(line), "cc1-%u;cc1-%u;main;parse%u;expr%u", pid, pid,
				   depth, (i * 13) % 17);

		EXPECT_EQ_INT(0, tr_folded_add(f, line, (size_t)len, i % 3 + 1));
		len = snprintf(line, sizeof(line), "sshd-1;sshd-1;poll;do_sys_poll_[k]");
		EXPECT_EQ_INT(0, tr_folded_add(f, line, (size_t)len, 1));
	}
}

static int count_lines(void *arg, const char *line, uint64_t weight)
{
	size_t *n = arg;

	(void)line;
	(void)weight;
	(*n)++;
	return 0;
}

DEF_TEST(spilled_lines_merge_back_to_what_memory_alone_writes)
{
	char dir[] = "/tmp/tracerig-test.foldedXXXXXX";
	struct tr_folded *mem = tr_folded_new(), *spilled = tr_folded_new(),
			 *full = tr_folded_new();
	char *want = NULL, *got = NULL, *got_full = NULL;
	size_t runs = 0, n_want = 0, n_got = 0;

	CHECK_NOT_NULL(mem);
	CHECK_NOT_NULL(spilled);
	CHECK_NOT_NULL(full);
	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, tr_folded_spill(spilled, dir, 2048));
	/* Where no run can be written the lines stay in memory. */
	EXPECT_EQ_INT(0, tr_folded_spill(full, "/nonexistent-tracerig-dir", 2048));
	add_mix(mem, 0);
	add_mix(spilled, 0);
	add_mix(full, 0);
	EXPECT_EQ_INT(0, tr_folded_spilled(spilled, &runs));
	/* Spilled often enough that the runs were merged into one at least
	 * once: never more than 16 descriptors. */
	EXPECT_TRUE(runs >= 1 && runs <= 16);
	EXPECT_TRUE(tr_folded_count(spilled) > tr_folded_count(mem));
	EXPECT_EQ_INT(-ENOENT, tr_folded_spilled(full, &runs));
	EXPECT_EQ_INT(0, runs);
	want = written(mem, 1);
	got = written(spilled, 1);
	got_full = written(full, 1);
	CHECK_NOT_NULL(want);
	CHECK_NOT_NULL(got);
	CHECK_NOT_NULL(got_full);
	EXPECT_TRUE(strlen(want) > 1000);
	EXPECT_EQ_STR(want, got);
	EXPECT_EQ_STR(want, got_full);
	/* Written twice, the same: the runs are read from their start each time. */
	free(got);
	got = written(spilled, 3);
	free(want);
	want = written(mem, 3);
	EXPECT_EQ_STR(want, got);
	EXPECT_EQ_INT(0, tr_folded_each(mem, count_lines, &n_want));
	EXPECT_EQ_INT(0, tr_folded_each(spilled, count_lines, &n_got));
	EXPECT_EQ_INT(n_want, n_got);
	EXPECT_EQ_INT(n_want, tr_folded_count(mem));
	free(want);
	free(got);
	free(got_full);
	tr_folded_free(mem);
	tr_folded_free(spilled);
	tr_folded_free(full);
	/* Nothing left behind in the directory: the runs were unlinked files. */
	EXPECT_EQ_INT(0, rmdir(dir));
}

/* A set is read several times once complete (its file, its graph, the
 * wall view), in an order kept between reads: a line added after a read,
 * or more weight on one already there, shows in the next. */
DEF_TEST(a_set_read_then_added_to_reads_anew)
{
	struct tr_folded *f = tr_folded_new();
	char *first, *again, *after;

	CHECK_NOT_NULL(f);
	EXPECT_EQ_INT(0, tr_folded_add(f, "b;y", 3, 2));
	EXPECT_EQ_INT(0, tr_folded_add(f, "a;x", 3, 1));
	first = written(f, 1);
	again = written(f, 1);
	EXPECT_EQ_STR("a;x 1\nb;y 2\n", first);
	EXPECT_EQ_STR("a;x 1\nb;y 2\n", again);
	EXPECT_EQ_INT(0, tr_folded_add(f, "b;y", 3, 5));
	EXPECT_EQ_INT(0, tr_folded_add(f, "a;w", 3, 4));
	EXPECT_EQ_INT(0, tr_folded_add(f, "c", 1, 1));
	after = written(f, 1);
	EXPECT_EQ_STR("a;w 4\na;x 1\nb;y 7\nc 1\n", after);
	free(first);
	free(again);
	free(after);
	tr_folded_free(f);
}

/* Folded text read back: stacks with spaces in frames, CRLF endings and a
 * repeated line summed; blank lines, lines without a weight, a bare
 * weight and weights of 0 carry nothing. */
DEF_TEST(folded_text_reads_into_a_set)
{
	static const char text[] = "a-1;a-1;operator new(unsigned long) 3\r\n"
				   "\n"
				   "no weight here\n"
				   " 7\n"
				   "a-1;a-1;f 0\n"
				   "a-1;a-1;f 12x\n"
				   "a-1;a-1;g 2\n"
				   "a-1;a-1;g 5";
	struct tr_folded *f = tr_folded_new();
	FILE *in = fmemopen((void *)text, sizeof(text) - 1, "r");
	char *out;

	CHECK_NOT_NULL(f);
	CHECK_NOT_NULL(in);
	EXPECT_EQ_INT(0, tr_folded_read(f, in));
	fclose(in);
	EXPECT_EQ_INT(2, (int)tr_folded_count(f));
	out = written(f, 1);
	EXPECT_EQ_STR("a-1;a-1;g 7\na-1;a-1;operator new(unsigned long) 3\n", out);
	free(out);
	tr_folded_free(f);
}

/* A line's weight: digits after the last space, at most the caller's
 * limit; a negative or too large one is told apart from a line that
 * carries none, and leaves the line whole. */
DEF_TEST(a_line_splits_at_its_last_space)
{
	char line[64];
	uint64_t w = 0;

	strcpy(line, "a-1;b c;d 42\n");
	EXPECT_EQ_INT(1, tr_folded_split(line, 100, &w));
	EXPECT_EQ_STR("a-1;b c;d", line);
	EXPECT_EQ_INT(42, (int)w);
	strcpy(line, "a-1;d 101");
	EXPECT_EQ_INT(-ERANGE, tr_folded_split(line, 100, &w));
	EXPECT_EQ_STR("a-1;d 101", line);
	strcpy(line, "a-1;d -5");
	EXPECT_EQ_INT(-ERANGE, tr_folded_split(line, UINT64_MAX, &w));
	strcpy(line, "a-1;d 99999999999999999999999");
	EXPECT_EQ_INT(-ERANGE, tr_folded_split(line, UINT64_MAX, &w));
	strcpy(line, "a-1;d 5x");
	EXPECT_EQ_INT(0, tr_folded_split(line, 100, &w));
	strcpy(line, "a-1;d +5");
	EXPECT_EQ_INT(0, tr_folded_split(line, 100, &w));
	strcpy(line, " 7");
	EXPECT_EQ_INT(0, tr_folded_split(line, 100, &w));
	strcpy(line, "");
	EXPECT_EQ_INT(0, tr_folded_split(line, 100, &w));
}

int main(void)
{
	RUN_TEST(identical_lines_are_summed_and_written_sorted_in_units);
	RUN_TEST(an_empty_set_writes_nothing);
	RUN_TEST(many_lines_survive_growth_and_each_visits_all);
	RUN_TEST(the_root_is_process_then_thread);
	RUN_TEST(the_root_parses_in_the_new_form_and_both_old_ones);
	RUN_TEST(what_the_builder_writes_parses_back);
	RUN_TEST(spilled_lines_merge_back_to_what_memory_alone_writes);
	RUN_TEST(a_set_read_then_added_to_reads_anew);
	RUN_TEST(folded_text_reads_into_a_set);
	RUN_TEST(a_line_splits_at_its_last_space);
	TEST_MAIN_END();
}

/* The pprof builder (lib/pprof.c): a sample of the same stack and labels
 * is one sample whatever buffers the caller passes its strings in, and
 * never one of other labels, even when a buffer is reused at the same
 * address (pp_add finds recent samples by their inputs' addresses, then
 * compares content); a profile written is read back and merged whole. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/pprof.h"
#include "../testing.h"

static const struct pp_value_type cpu[2] = { { "samples", "count" }, { "cpu", "nanoseconds" } };

static struct pp_builder *builder(void)
{
	struct pp_builder *b = pp_new(cpu, 2, cpu[1], 1000);

	if (!b)
		TEST_FAIL("pp_new");
	return b;
}

DEF_TEST(the_same_labels_in_other_buffers_are_one_sample)
{
	struct pp_builder *b = builder();
	uint64_t ids[2] = { pp_location(b, 0, 0x10, "leaf"), pp_location(b, 0, 0x20, "main") };
	char comm1[16] = "app", comm2[16] = "app";

	for (int i = 0; i < 100; i++) {
		struct pp_label l[] = { { "pid", NULL, 42 }, { "comm", i % 2 ? comm1 : comm2, 0 } };

		EXPECT_EQ_INT(0, pp_add(b, ids, 2, (int64_t[]){ 1, 1000 }, l, 2));
	}
	EXPECT_EQ_INT(1, pp_sample_count(b));
	EXPECT_EQ_INT(100, pp_total(b, 0));
	EXPECT_EQ_INT(100000, pp_total(b, 1));
	pp_free(b);
}

DEF_TEST(a_buffer_reused_with_other_content_is_another_sample)
{
	struct pp_builder *b = builder();
	uint64_t id = pp_location(b, 0, 0x10, "leaf");
	char comm[16];
	struct pp_label l[] = { { "comm", comm, 0 } };

	strcpy(comm, "one");
	EXPECT_EQ_INT(0, pp_add(b, &id, 1, (int64_t[]){ 1, 10 }, l, 1));
	strcpy(comm, "two");
	EXPECT_EQ_INT(0, pp_add(b, &id, 1, (int64_t[]){ 1, 20 }, l, 1));
	strcpy(comm, "one");
	EXPECT_EQ_INT(0, pp_add(b, &id, 1, (int64_t[]){ 1, 30 }, l, 1));
	EXPECT_EQ_INT(2, pp_sample_count(b));
	EXPECT_EQ_INT(60, pp_total(b, 1));
	pp_free(b);
}

DEF_TEST(labels_differ_by_kind_order_and_stack)
{
	struct pp_builder *b = builder();
	uint64_t ids[2] = { pp_location(b, 0, 0x10, "leaf"), pp_location(b, 0, 0x20, "main") };
	struct pp_label str0[] = { { "x", "", 0 } }, num0[] = { { "x", NULL, 0 } };
	struct pp_label ab[] = { { "a", NULL, 1 }, { "b", NULL, 2 } };
	struct pp_label ba[] = { { "b", NULL, 2 }, { "a", NULL, 1 } };

	EXPECT_EQ_INT(0, pp_add(b, ids, 2, (int64_t[]){ 1, 1 }, str0, 1));
	EXPECT_EQ_INT(0, pp_add(b, ids, 2, (int64_t[]){ 1, 1 }, num0, 1));
	EXPECT_EQ_INT(0, pp_add(b, ids, 2, (int64_t[]){ 1, 1 }, ab, 2));
	EXPECT_EQ_INT(0, pp_add(b, ids, 2, (int64_t[]){ 1, 1 }, ba, 2));
	EXPECT_EQ_INT(0, pp_add(b, ids, 1, (int64_t[]){ 1, 1 }, ab, 2));
	EXPECT_EQ_INT(0, pp_add(b, ids + 1, 1, (int64_t[]){ 1, 1 }, ab, 2));
	EXPECT_EQ_INT(6, pp_sample_count(b));
	/* And each again: no new sample. */
	EXPECT_EQ_INT(0, pp_add(b, ids, 2, (int64_t[]){ 1, 1 }, str0, 1));
	EXPECT_EQ_INT(0, pp_add(b, ids, 2, (int64_t[]){ 1, 1 }, num0, 1));
	EXPECT_EQ_INT(0, pp_add(b, ids, 2, (int64_t[]){ 1, 1 }, ba, 2));
	EXPECT_EQ_INT(6, pp_sample_count(b));
	EXPECT_EQ_INT(9, pp_total(b, 0));
	pp_free(b);
}

DEF_TEST(a_written_profile_reads_back_and_merges_whole)
{
	static const struct pp_value_type ns = { "wall", "nanoseconds" };
	char path[] = "/tmp/tracerig-test-pprof.XXXXXX";
	struct pp_builder *b = builder(), *w = pp_new(&ns, 1, ns, 0);
	struct pp_profile *p = NULL;
	uint64_t m, ids[2], mark;
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	CHECK_NOT_NULL(f);
	CHECK_NOT_NULL(w);
	m = pp_mapping(b, 0x1000, 0x2000, 0, "/bin/app", "abcd");
	ids[0] = pp_location(b, m, 0x1010, "leaf");
	ids[1] = pp_location(b, m, 0x1020, "main");
	EXPECT_EQ_INT(0, pp_add(b, ids, 2, (int64_t[]){ 2, 2000 },
				(struct pp_label[]){ { "pid", NULL, 7 } }, 1));
	EXPECT_EQ_INT(0, pp_add(b, ids, 2, (int64_t[]){ 3, 3000 },
				(struct pp_label[]){ { "pid", NULL, 8 } }, 1));
	EXPECT_EQ_INT(0, pp_write_gz(b, f));
	EXPECT_EQ_INT(0, fclose(f));
	EXPECT_EQ_INT(0, pp_read_gz(path, &p));
	CHECK_NOT_NULL(p);
	EXPECT_EQ_INT(1, pp_profile_column(p, "nanoseconds"));
	EXPECT_EQ_INT(0, pp_profile_column(p, "count"));
	EXPECT_EQ_INT(-1, pp_profile_column(p, "bytes"));
	mark = pp_location(w, 0, 0, "[on-cpu]");
	EXPECT_EQ_INT(0, pp_merge(w, p, 1, 1, mark, NULL, NULL));
	EXPECT_EQ_INT(2, pp_sample_count(w));
	EXPECT_EQ_INT(5000, pp_total(w, 0));
	/* The count column at 10 ns a sample adds to the same two samples. */
	EXPECT_EQ_INT(0, pp_merge(w, p, 0, 10, mark, NULL, NULL));
	EXPECT_EQ_INT(2, pp_sample_count(w));
	EXPECT_EQ_INT(5050, pp_total(w, 0));
	EXPECT_EQ_INT(-EINVAL, pp_merge(w, p, 2, 1, mark, NULL, NULL));
	pp_profile_free(p);
	p = NULL;
	f = fopen(path, "w");
	CHECK_NOT_NULL(f);
	fputs("not a profile\n", f);
	fclose(f);
	EXPECT_EQ_INT(-EINVAL, pp_read_gz(path, &p));
	unlink(path);
	EXPECT_EQ_INT(-ENOENT, pp_read_gz(path, &p));
	EXPECT_TRUE(p == NULL);
	pp_free(w);
	pp_free(b);
}

int main(void)
{
	RUN_TEST(the_same_labels_in_other_buffers_are_one_sample);
	RUN_TEST(a_buffer_reused_with_other_content_is_another_sample);
	RUN_TEST(labels_differ_by_kind_order_and_stack);
	RUN_TEST(a_written_profile_reads_back_and_merges_whole);
	TEST_MAIN_END();
}

/* The pprof builder (lib/pprof.c): a sample of the same stack and labels
 * is one sample whatever buffers the caller passes its strings in, and
 * never one of other labels, even when a buffer is reused at the same
 * address (pp_add finds recent samples by their inputs' addresses, then
 * compares content); a builder merges whole into another, its spilled
 * samples read back, and what it writes is what it holds. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/pprof.h"
#include "profile.pb-c.h"
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

/* A profile file as protobuf-c reads it (a reader of our own would
 * agree with the writer by construction): NULL when it is none. */
static Perftools__Profiles__Profile *read_profile(const char *path)
{
	gzFile z = gzopen(path, "rb");
	size_t len = 0, cap = 1 << 20;
	uint8_t *data = malloc(cap);
	Perftools__Profiles__Profile *p = NULL;
	int got;

	while (z && data && (got = gzread(z, data + len, (unsigned)(cap - len))) > 0) {
		len += (size_t)got;
		if (len == cap) {
			uint8_t *grown = realloc(data, cap * 2);

			if (!grown)
				break;
			data = grown;
			cap *= 2;
		}
	}
	if (z && data && gzclose(z) == Z_OK)
		p = perftools__profiles__profile__unpack(NULL, len, data);
	free(data);
	return p;
}

DEF_TEST(a_profile_merges_whole_into_another)
{
	static const struct pp_value_type ns = { "wall", "nanoseconds" };
	char path[] = "/tmp/tracerig-test-pprof.XXXXXX";
	struct pp_builder *b = builder(), *w = pp_new(&ns, 1, ns, 0);
	Perftools__Profiles__Profile *p;
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
	EXPECT_EQ_INT(1, pp_column(b, "nanoseconds"));
	EXPECT_EQ_INT(0, pp_column(b, "count"));
	EXPECT_EQ_INT(-1, pp_column(b, "bytes"));
	mark = pp_location(w, 0, 0, "[on-cpu]");
	EXPECT_EQ_INT(0, pp_merge(w, b, 1, 1, mark, NULL, NULL));
	EXPECT_EQ_INT(2, pp_sample_count(w));
	EXPECT_EQ_INT(5000, pp_total(w, 0));
	/* The count column at 10 ns a sample adds to the same two samples. */
	EXPECT_EQ_INT(0, pp_merge(w, b, 0, 10, mark, NULL, NULL));
	EXPECT_EQ_INT(2, pp_sample_count(w));
	EXPECT_EQ_INT(5050, pp_total(w, 0));
	EXPECT_EQ_INT(-EINVAL, pp_merge(w, b, 2, 1, mark, NULL, NULL));
	/* Written, the merged profile keeps the object, its build id and the
	 * mark under each stack. */
	EXPECT_EQ_INT(0, pp_write_gz(w, f));
	EXPECT_EQ_INT(0, fclose(f));
	p = read_profile(path);
	CHECK_NOT_NULL(p);
	EXPECT_EQ_INT(2, p->n_sample);
	EXPECT_EQ_INT(1, p->n_mapping);
	EXPECT_EQ_STR("/bin/app", p->string_table[p->mapping[0]->filename]);
	EXPECT_EQ_STR("abcd", p->string_table[p->mapping[0]->build_id]);
	EXPECT_EQ_INT(3, p->sample[0]->n_location_id);
	EXPECT_EQ_INT(mark, p->sample[0]->location_id[0]);
	perftools__profiles__profile__free_unpacked(p, NULL);
	unlink(path);
	pp_free(w);
	pp_free(b);
}

static int count_pid(void *arg, int64_t pid)
{
	(void)pid;
	(*(size_t *)arg)++;
	return 1;
}

/* Two processes map the same bytes of one object at their own addresses
 * (ASLR): one mapping, at the first one's address, and one location per
 * frame of it, not one per process. */
DEF_TEST(an_object_mapped_at_other_addresses_is_one_mapping)
{
	struct pp_builder *b = builder();
	uint64_t first = pp_mapping(b, 0x555500001000, 0x555500009000, 0x1000, "/bin/cc1", "abcd");
	uint64_t second = pp_mapping(b, 0x5633aa001000, 0x5633aa009000, 0x1000, "/bin/cc1", "abcd");
	uint64_t moved = pp_mapped_address(b, second, 0x5633aa001000, 0x5633aa001234);

	EXPECT_TRUE(first != 0);
	EXPECT_EQ_INT(first, second);
	EXPECT_EQ_INT(0x555500001234, moved);
	EXPECT_EQ_INT(pp_location(b, first, 0x555500001234, "parse"),
		      pp_location(b, second, moved, "parse"));
	/* Other bytes of it, another object's build id, another size: other mappings. */
	EXPECT_TRUE(pp_mapping(b, 0x5633aa009000, 0x5633aa011000, 0x9000, "/bin/cc1", "abcd") !=
		    first);
	EXPECT_TRUE(pp_mapping(b, 0x5633aa001000, 0x5633aa009000, 0x1000, "/bin/cc1", "ef01") !=
		    first);
	EXPECT_TRUE(pp_mapping(b, 0x5633aa001000, 0x5633aa00a000, 0x1000, "/bin/cc1", "abcd") !=
		    first);
	/* No mapping: the address stays as it is. */
	EXPECT_EQ_INT(0x1234, pp_mapped_address(b, 0, 0x1000, 0x1234));
	pp_free(b);
}

/* The samples of 300 "processes" (pid labels), some stacks in all of
 * them, added to a builder that spills every few KiB and to one that
 * never does: read back and merged, both are the same profile. */
static void add_many(struct pp_builder *b)
{
	uint64_t m = pp_mapping(b, 0x1000, 0x9000, 0, "/bin/cc1", "abcd"), ids[3];
	char name[32];

	for (unsigned i = 0; i < 3000; i++) {
		unsigned j = i % 600; /* each stack and pid 5 times */

		snprintf(name, sizeof(name), "f%u", j % 40);
		ids[0] = pp_location(b, m, 0x1000 + (j % 40) * 16, name);
		ids[1] = pp_location(b, m, 0x2000 + (j % 7) * 16, j % 7 ? "parse" : "lex");
		ids[2] = pp_location(b, m, 0x3000, "main");
		EXPECT_EQ_INT(0, pp_add(b, ids, 3, (int64_t[]){ 1, 1000 + i % 3 },
					(struct pp_label[]){ { "pid", NULL, 100 + (j * 7) % 300 },
							     { "thread", "cc1", 0 } },
					2));
	}
}

static struct pp_builder *merged(const struct pp_builder *b, size_t *n_read)
{
	static const struct pp_value_type ns = { "cpu", "nanoseconds" };
	struct pp_builder *w = pp_new(&ns, 1, ns, 0);

	if (w)
		EXPECT_EQ_INT(0, pp_merge(w, b, 1, 1, 0, count_pid, n_read));
	return w;
}

/* The samples of the file at path and their first column's sum. */
static size_t file_samples(const char *path, int64_t *sum)
{
	Perftools__Profiles__Profile *p = read_profile(path);
	size_t n;

	*sum = 0;
	if (!p)
		return 0;
	n = p->n_sample;
	for (size_t i = 0; i < n; i++)
		*sum += p->sample[i]->value[0];
	perftools__profiles__profile__free_unpacked(p, NULL);
	return n;
}

static int write_to(struct pp_builder *b, const char *path)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = pp_write_gz(b, f);
	if (fclose(f) != 0 && !ret)
		ret = -EIO;
	return ret;
}

DEF_TEST(spilled_samples_are_written_and_merged_as_the_same_profile)
{
	char dir[] = "/tmp/tracerig-test.ppspillXXXXXX", a[64], c[64], e[64];
	struct pp_builder *mem = builder(), *spilled = builder(), *full = builder(), *wm, *ws,
			  *wf;
	size_t spills = 0, n_mem = 0, n_spilled = 0, n_full = 0;
	uint64_t bytes = 0;
	int64_t sum;

	CHECK_NOT_NULL(mkdtemp(dir));
	EXPECT_EQ_INT(0, pp_spill(spilled, dir, 16384));
	EXPECT_EQ_INT(0, pp_spill(full, "/nonexistent-tracerig-dir", 16384));
	add_many(mem);
	add_many(spilled);
	add_many(full);
	EXPECT_EQ_INT(0, pp_spilled(spilled, &spills, &bytes));
	EXPECT_TRUE(spills >= 2);
	EXPECT_TRUE(bytes > 0);
	EXPECT_EQ_INT(-ENOENT, pp_spilled(full, &spills, NULL));
	/* Counted across spills: a stack on both sides of one is two. */
	EXPECT_TRUE(pp_sample_count(spilled) > pp_sample_count(mem));
	EXPECT_EQ_INT(pp_sample_count(mem), pp_sample_count(full));
	EXPECT_EQ_INT(pp_total(mem, 0), pp_total(spilled, 0));
	EXPECT_EQ_INT(pp_total(mem, 1), pp_total(spilled, 1));
	EXPECT_EQ_INT(3000, pp_total(spilled, 0));
	snprintf(a, sizeof(a), "%s/mem.pb.gz", dir);
	snprintf(c, sizeof(c), "%s/spilled.pb.gz", dir);
	snprintf(e, sizeof(e), "%s/full.pb.gz", dir);
	EXPECT_EQ_INT(0, write_to(mem, a));
	EXPECT_EQ_INT(0, write_to(spilled, c));
	EXPECT_EQ_INT(0, write_to(full, e));
	/* Written twice: the spilled samples are read from the start again. */
	EXPECT_EQ_INT(0, write_to(spilled, c));
	/* The files hold every sample the builders counted. */
	EXPECT_EQ_INT(pp_sample_count(spilled), file_samples(c, &sum));
	EXPECT_EQ_INT(3000, sum);
	EXPECT_EQ_INT(pp_sample_count(mem), file_samples(a, &sum));
	EXPECT_EQ_INT(3000, sum);
	EXPECT_EQ_INT(pp_sample_count(full), file_samples(e, &sum));
	/* Merged (the spilled samples read back after being written), every
	 * sample of each... */
	wm = merged(mem, &n_mem);
	ws = merged(spilled, &n_spilled);
	wf = merged(full, &n_full);
	CHECK_NOT_NULL(wm);
	CHECK_NOT_NULL(ws);
	CHECK_NOT_NULL(wf);
	EXPECT_EQ_INT(pp_sample_count(spilled), n_spilled);
	EXPECT_EQ_INT(pp_sample_count(mem), n_mem);
	/* ... and summed by stack and labels they are memory's profile. */
	EXPECT_EQ_INT(pp_sample_count(wm), pp_sample_count(ws));
	EXPECT_EQ_INT(pp_total(wm, 0), pp_total(ws, 0));
	EXPECT_EQ_INT(pp_sample_count(wm), pp_sample_count(wf));
	EXPECT_EQ_INT(pp_total(wm, 0), pp_total(wf, 0));
	EXPECT_EQ_INT(3000 * 1000 + 1000 * (0 + 1 + 2), pp_total(wm, 0));
	EXPECT_EQ_INT(600, pp_sample_count(wm));
	pp_free(wm);
	pp_free(ws);
	pp_free(wf);
	pp_free(mem);
	pp_free(spilled);
	pp_free(full);
	unlink(a);
	unlink(c);
	unlink(e);
	/* Nothing else in the directory: the spill file was unlinked. */
	EXPECT_EQ_INT(0, rmdir(dir));
}

int main(void)
{
	RUN_TEST(the_same_labels_in_other_buffers_are_one_sample);
	RUN_TEST(a_buffer_reused_with_other_content_is_another_sample);
	RUN_TEST(labels_differ_by_kind_order_and_stack);
	RUN_TEST(an_object_mapped_at_other_addresses_is_one_mapping);
	RUN_TEST(spilled_samples_are_written_and_merged_as_the_same_profile);
	RUN_TEST(a_profile_merges_whole_into_another);
	TEST_MAIN_END();
}

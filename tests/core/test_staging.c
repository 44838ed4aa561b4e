/* Staged entries stay inside the staging directory, whatever their name. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../core/archive/staging.h"
#include "../testing.h"

struct seen {
	char names[8][64];
	uint64_t sizes[8];
	int n;
};

static int collect(void *arg, const char *name, const char *path, uint64_t size)
{
	struct seen *s = arg;

	(void)path;
	if (s->n < 8) {
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
		s->sizes[s->n++] = size;
	}
	return 0;
}

DEF_TEST(entry_names_cannot_escape)
{
	EXPECT_TRUE(tr_entry_name_ok("perf.data"));
	EXPECT_TRUE(tr_entry_name_ok("lttngTrace/ust/uid/0/64-bit/metadata"));
	EXPECT_TRUE(!tr_entry_name_ok("/etc/passwd"));
	EXPECT_TRUE(!tr_entry_name_ok("../x"));
	EXPECT_TRUE(!tr_entry_name_ok("a/../../x"));
	EXPECT_TRUE(!tr_entry_name_ok("a//b"));
	EXPECT_TRUE(!tr_entry_name_ok("a/"));
	EXPECT_TRUE(!tr_entry_name_ok(""));
}

DEF_TEST(entries_are_listed_sorted_with_sizes)
{
	struct tracerig_archive ar;
	struct seen seen = { 0 };
	char path[4096];
	int fd;

	EXPECT_EQ_INT(0, tr_staging_create(&ar, "/tmp/unit.trace.zip"));
	fd = tr_staging_create_entry(&ar, "z.txt");
	EXPECT_TRUE(fd >= 0);
	EXPECT_EQ_INT(5, write(fd, "hello", 5));
	close(fd);
	fd = tr_staging_create_entry(&ar, "lttngTrace/ust/metadata");
	EXPECT_TRUE(fd >= 0);
	close(fd);
	EXPECT_EQ_INT(-EINVAL, tr_staging_create_entry(&ar, "../escape"));
	EXPECT_EQ_INT(0, tr_staging_foreach(&ar, collect, &seen));
	EXPECT_EQ_INT(2, seen.n);
	EXPECT_EQ_STR("lttngTrace/ust/metadata", seen.names[0]);
	EXPECT_EQ_STR("z.txt", seen.names[1]);
	EXPECT_EQ_INT(5, (int)seen.sizes[1]);
	/* Staging lives under $TMPDIR (or /var/tmp), not on the output's disk;
	 * the temporary archive is next to the output. */
	EXPECT_CONTAINS("/tracerig-unit.trace.zip.staging-", ar.dir);
	EXPECT_TRUE(strncmp(ar.dir, tr_staging_parent(), strlen(tr_staging_parent())) == 0);
	EXPECT_CONTAINS("/tmp/.unit.trace.zip.tmp-", ar.output);
	EXPECT_EQ_INT(-1, access(ar.output, F_OK));
	snprintf(path, sizeof(path), "%s/z.txt", ar.dir);
	EXPECT_EQ_INT(0, access(path, F_OK));
	EXPECT_EQ_INT(0, tr_staging_remove_entry(&ar, "z.txt"));
	EXPECT_EQ_INT(-1, access(path, F_OK)); /* gone from the staging directory */
	EXPECT_EQ_INT(0, tr_staging_foreach(&ar, collect, &seen));
	EXPECT_EQ_INT(3, seen.n); /* the metadata entry again, not z.txt */
	EXPECT_EQ_STR("lttngTrace/ust/metadata", seen.names[2]);
	EXPECT_EQ_INT(0, tr_staging_remove(&ar));
	EXPECT_EQ_INT(-1, access(ar.dir, F_OK));
	tr_staging_free(&ar);
}

int main(void)
{
	RUN_TEST(entry_names_cannot_escape);
	RUN_TEST(entries_are_listed_sorted_with_sizes);
	TEST_MAIN_END();
}

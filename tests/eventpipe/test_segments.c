/* Flight mode's segments: a snapshot gets exactly the files that overlap
 * its window, under their own names, and pruning deletes only the files
 * that ended before its bound. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "segments.h"
#include "testing.h"

static char dir[64], out[80];

static void make_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		TEST_FAIL("creating %s: %s", path, strerror(errno));
		return;
	}
	fputs(text, f);
	fclose(f);
}

static int exists(const char *d, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", d, name);
	return access(path, F_OK) == 0;
}

/* Three consecutive sessions: [0,10] [10,20] [20,30] (ns). */
static void three(struct ep_segments *l)
{
	make_file("app.7.1.nettrace", "one");
	make_file("app.7.2.nettrace", "two");
	make_file("app.7.3.nettrace", "three");
	EXPECT_EQ_INT(0, ep_segments_add(l, "app.7.1.nettrace", 0, 10, 1));
	EXPECT_EQ_INT(0, ep_segments_add(l, "app.7.2.nettrace", 10, 20, 1));
	EXPECT_EQ_INT(0, ep_segments_add(l, "app.7.3.nettrace", 20, 30, 0));
}

DEF_TEST(snapshot_takes_the_overlapping_files)
{
	struct ep_segments l = { 0 };
	size_t n = 99;
	char cmd[256];

	three(&l);
	snprintf(out, sizeof(out), "%s/snap", dir);
	if (mkdir(out, 0700) < 0)
		TEST_FAIL("mkdir %s: %s", out, strerror(errno));
	EXPECT_EQ_INT(0, ep_segments_snapshot(&l, dir, out, 15, 30, &n));
	EXPECT_EQ_INT(2, n);
	EXPECT_TRUE(!exists(out, "app.7.1.nettrace"));
	EXPECT_TRUE(exists(out, "app.7.2.nettrace"));
	EXPECT_TRUE(exists(out, "app.7.3.nettrace"));
	/* The sources stay for the next snapshot. */
	EXPECT_TRUE(exists(dir, "app.7.2.nettrace"));
	/* A second snapshot into the same staging refuses to overwrite. */
	EXPECT_EQ_INT(-EEXIST, ep_segments_snapshot(&l, dir, out, 15, 30, &n));
	/* A window that ends before a session began leaves it out. */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", out);
	EXPECT_EQ_INT(0, system(cmd));
	EXPECT_EQ_INT(0, mkdir(out, 0700));
	EXPECT_EQ_INT(0, ep_segments_snapshot(&l, dir, out, 0, 5, &n));
	EXPECT_EQ_INT(1, n);
	EXPECT_TRUE(exists(out, "app.7.1.nettrace"));
	ep_segments_free(&l);
	EXPECT_EQ_INT(0, system(cmd));
}

DEF_TEST(prune_deletes_only_what_ended_before)
{
	struct ep_segments l = { 0 };

	three(&l);
	EXPECT_EQ_INT(1, ep_segments_prune(&l, dir, 15));
	EXPECT_EQ_INT(2, l.n);
	EXPECT_TRUE(!exists(dir, "app.7.1.nettrace"));
	EXPECT_TRUE(exists(dir, "app.7.2.nettrace"));
	EXPECT_EQ_STR("app.7.2.nettrace", l.v[0].entry);
	EXPECT_EQ_INT(0, ep_segments_prune(&l, dir, 10));
	EXPECT_EQ_INT(2, ep_segments_prune(&l, dir, 31));
	EXPECT_EQ_INT(0, l.n);
	EXPECT_TRUE(!exists(dir, "app.7.3.nettrace"));
	ep_segments_free(&l);
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "%s/tr-segments.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
									      : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN_TEST(snapshot_takes_the_overlapping_files);
	RUN_TEST(prune_deletes_only_what_ended_before);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", dir);
	TEST_MAIN_END();
}

/* The archive's path: what is planted at the temporary or the final name is
 * never followed, truncated or replaced. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/archive/output.h"
#include "../../core/log.h"
#include "../testing.h"

static char dir[] = "/tmp/tracerig-test-output-XXXXXX";

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int has(const char *path, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strcmp(buf, text) == 0;
}

DEF_TEST(a_link_at_the_temporary_name_is_not_followed)
{
	struct tracerig_archive ar;
	char victim[256], out[256], planted[512];
	struct stat st;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(out, sizeof(out), "%s/a.trace.zip", dir);
	put(victim, "root's file\n");
	EXPECT_EQ_INT(0, tr_staging_create(&ar, out));
	CHECK_NOT_NULL(ar.output);
	/* Someone guessed the name: a link to a file of root's. */
	snprintf(planted, sizeof(planted), "%s", ar.output);
	EXPECT_EQ_INT(0, symlink(victim, planted));
	EXPECT_EQ_INT(0, tr_output_create_temp(&ar));
	EXPECT_TRUE(has(victim, "root's file\n"));
	EXPECT_EQ_INT(0, lstat(ar.output, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ_INT(0600, st.st_mode & 0777);
	EXPECT_EQ_INT(0, (int)st.st_size);
	unlink(ar.output);
	/* The link is left as it was, for whoever planted it: the test's
	 * directory must still go. */
	unlink(planted);
	tr_staging_remove(&ar);
	tr_staging_free(&ar);
}

DEF_TEST(the_final_rename_replaces_only_a_regular_file)
{
	struct tracerig_archive ar;
	struct tr_output *o = tr_output_new();
	char out[256];

	CHECK_NOT_NULL(o);
	snprintf(out, sizeof(out), "%s/b.trace.zip", dir);
	EXPECT_EQ_INT(0, tr_output_prepare(o, out, "b", 0));
	CHECK_NOT_NULL(tr_output_path(o));
	EXPECT_EQ_STR(out, tr_output_path(o));
	/* The test's directory is absolute already: resolved, the same. */
	EXPECT_EQ_STR(out, tr_output_absolute(o));
	EXPECT_EQ_INT(0, tr_staging_create(&ar, tr_output_path(o)));
	EXPECT_EQ_INT(0, tr_output_create_temp(&ar));
	put(ar.output, "new\n");
	/* Became a directory during the session: kept, archive dropped. */
	EXPECT_EQ_INT(0, mkdir(out, 0700));
	EXPECT_EQ_INT(-EEXIST, tr_output_commit(o, &ar));
	EXPECT_EQ_INT(-1, access(ar.output, F_OK));
	EXPECT_EQ_INT(0, rmdir(out));
	/* A regular file named explicitly is replaced. */
	put(out, "old\n");
	EXPECT_EQ_INT(0, tr_output_create_temp(&ar));
	put(ar.output, "new\n");
	EXPECT_EQ_INT(0, tr_output_commit(o, &ar));
	EXPECT_TRUE(has(out, "new\n"));
	tr_output_free(o);
	unlink(out);
	tr_staging_remove(&ar);
	tr_staging_free(&ar);
}

DEF_TEST(a_default_name_that_appears_meanwhile_is_not_replaced)
{
	struct tracerig_archive ar;
	struct tr_output *o = tr_output_new();
	char subdir[256], first[300], second[300];

	CHECK_NOT_NULL(o);
	snprintf(subdir, sizeof(subdir), "%s/default", dir);
	EXPECT_EQ_INT(0, mkdir(subdir, 0700));
	snprintf(first, sizeof(first), "%s/c.trace.zip", subdir);
	snprintf(second, sizeof(second), "%s/c-2.trace.zip", subdir);
	EXPECT_EQ_INT(0, tr_output_prepare(o, subdir, "c", 0));
	CHECK_NOT_NULL(tr_output_path(o));
	EXPECT_EQ_STR(first, tr_output_path(o));
	EXPECT_EQ_INT(0, tr_staging_create(&ar, tr_output_path(o)));
	EXPECT_EQ_INT(0, tr_output_create_temp(&ar));
	put(ar.output, "mine\n");
	put(first, "another run's\n");
	EXPECT_EQ_INT(0, tr_output_commit(o, &ar));
	EXPECT_EQ_STR(second, tr_output_path(o));
	EXPECT_EQ_STR(second, tr_output_absolute(o));
	EXPECT_TRUE(has(first, "another run's\n"));
	EXPECT_TRUE(has(second, "mine\n"));
	tr_output_free(o);
	unlink(first);
	unlink(second);
	rmdir(subdir);
	tr_staging_remove(&ar);
	tr_staging_free(&ar);
}

int main(void)
{
	tr_log_set_verbosity(TRACERIG_LOG_ERROR - 1);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("TMPDIR", dir, 1);
	RUN_TEST(a_link_at_the_temporary_name_is_not_followed);
	RUN_TEST(the_final_rename_replaces_only_a_regular_file);
	RUN_TEST(a_default_name_that_appears_meanwhile_is_not_replaced);
	{
		char victim[300];

		snprintf(victim, sizeof(victim), "%s/victim", dir);
		unlink(victim);
	}
	rmdir(dir);
	tr_log_close_file();
	TEST_MAIN_END();
}

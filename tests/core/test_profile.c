/* Profiles keep every key's file and line so errors can point at them. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/log.h"
#include "../../core/session/profile.h"
#include "../testing.h"

static char path[] = "/tmp/tracerig-test-profile-XXXXXX";

static int write_profile(const char *text)
{
	int fd = mkstemp(path);
	FILE *f;

	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return 0;
}

DEF_TEST(keys_remember_their_lines)
{
	struct tr_profile p = { 0 };
	struct tr_entry *e;

	snprintf(path, sizeof(path), "/tmp/tracerig-test-profile-XXXXXX");
	EXPECT_EQ_INT(0, write_profile("; comment\n[tracerig]\nname = demo\n\n[perf_events]\n"
				       "frequency = 99\nevents = a,\n  b\n"));
	EXPECT_EQ_INT(0, tr_profile_load(&p, path));
	e = tr_section_entry(tr_profile_section(&p, "perf_events"), "frequency");
	CHECK_NOT_NULL(e);
	EXPECT_EQ_INT(6, e->line);
	EXPECT_EQ_STR("99", e->value);
	e = tr_section_entry(tr_profile_section(&p, "tracerig"), "name");
	CHECK_NOT_NULL(e);
	EXPECT_EQ_INT(3, e->line);
	/* An indented line continues a list. */
	e = tr_section_entry(tr_profile_section(&p, "perf_events"), "events");
	CHECK_NOT_NULL(e);
	EXPECT_EQ_STR("a,,b", e->value);
	EXPECT_EQ_INT(2, (int)p.n_sections);
	tr_profile_free(&p);
	unlink(path);
}

DEF_TEST(duplicate_keys_and_sections_are_errors)
{
	struct tr_profile p = { 0 };

	snprintf(path, sizeof(path), "/tmp/tracerig-test-profile-XXXXXX");
	EXPECT_EQ_INT(0, write_profile("[a]\nx = 1\ny = 2\nx = 3\n[b]\n[a]\n"));
	EXPECT_EQ_INT(2, tr_profile_load(&p, path));
	tr_profile_free(&p);
	unlink(path);
}

DEF_TEST(keys_outside_sections_are_errors)
{
	struct tr_profile p = { 0 };

	snprintf(path, sizeof(path), "/tmp/tracerig-test-profile-XXXXXX");
	EXPECT_EQ_INT(0, write_profile("x = 1\n[a]\n"));
	EXPECT_EQ_INT(1, tr_profile_load(&p, path));
	tr_profile_free(&p);
	unlink(path);
}

DEF_TEST(set_overrides_and_adds)
{
	struct tr_profile p = { 0 };
	struct tr_entry *e;

	snprintf(path, sizeof(path), "/tmp/tracerig-test-profile-XXXXXX");
	EXPECT_EQ_INT(0, write_profile("[a]\nx = 1\n"));
	EXPECT_EQ_INT(0, tr_profile_load(&p, path));
	EXPECT_EQ_INT(0, tr_profile_set(&p, "a.x=2"));
	EXPECT_EQ_INT(0, tr_profile_set(&p, "b.y=with=equals"));
	EXPECT_EQ_INT(-EINVAL, tr_profile_set(&p, "novalue"));
	EXPECT_EQ_INT(-EINVAL, tr_profile_set(&p, ".x=1"));
	e = tr_section_entry(tr_profile_section(&p, "a"), "x");
	CHECK_NOT_NULL(e);
	EXPECT_EQ_STR("2", e->value);
	EXPECT_EQ_STR("--set", e->origin);
	e = tr_section_entry(tr_profile_section(&p, "b"), "y");
	CHECK_NOT_NULL(e);
	EXPECT_EQ_STR("with=equals", e->value);
	tr_profile_free(&p);
	unlink(path);
}

/* Debian's libinih starts with a 200-byte line buffer: longer lines must
 * reach the parser whole, and the line numbers after them stay right. */
DEF_TEST(long_lines_up_to_the_documented_limit)
{
	struct tr_profile p = { 0 };
	struct tr_entry *e;
	size_t n = TR_PROFILE_MAX_LINE - strlen("events = ");
	char *text = malloc(TR_PROFILE_MAX_LINE + 64);

	CHECK_NOT_NULL(text);
	strcpy(text, "[a]\nevents = ");
	memset(text + strlen(text), 'e', n);
	strcpy(text + strlen("[a]\nevents = ") + n, "\nnext = 1\n");
	snprintf(path, sizeof(path), "/tmp/tracerig-test-profile-XXXXXX");
	EXPECT_EQ_INT(0, write_profile(text));
	EXPECT_EQ_INT(0, tr_profile_load(&p, path));
	e = tr_section_entry(tr_profile_section(&p, "a"), "events");
	CHECK_NOT_NULL(e);
	EXPECT_EQ_INT((long long)n, (long long)strlen(e->value));
	e = tr_section_entry(tr_profile_section(&p, "a"), "next");
	CHECK_NOT_NULL(e);
	EXPECT_EQ_INT(3, e->line);
	tr_profile_free(&p);
	unlink(path);

	/* One character more is an error, and the rest of the line is not
	 * taken for a line of its own. */
	strcpy(text, "[a]\nevents = ");
	memset(text + strlen(text), 'e', n + 1);
	strcpy(text + strlen("[a]\nevents = ") + n + 1, "\nnext = 1\n");
	snprintf(path, sizeof(path), "/tmp/tracerig-test-profile-XXXXXX");
	EXPECT_EQ_INT(0, write_profile(text));
	EXPECT_EQ_INT(1, tr_profile_load(&p, path));
	e = tr_section_entry(tr_profile_section(&p, "a"), "next");
	CHECK_NOT_NULL(e);
	EXPECT_EQ_INT(3, e->line);
	tr_profile_free(&p);
	unlink(path);
	free(text);
}

DEF_TEST(a_trailing_backslash_joins_with_a_space)
{
	struct tr_profile p = { 0 };
	struct tr_entry *e;

	snprintf(path, sizeof(path), "/tmp/tracerig-test-profile-XXXXXX");
	EXPECT_EQ_INT(0, write_profile("[a]\nfilter = comm == \"x\" \\\n  && pid > 1 \\\n"
				       "  && cpu == 0\nevents = a\n  b\n"));
	EXPECT_EQ_INT(0, tr_profile_load(&p, path));
	e = tr_section_entry(tr_profile_section(&p, "a"), "filter");
	CHECK_NOT_NULL(e);
	EXPECT_EQ_STR("comm == \"x\" && pid > 1 && cpu == 0", e->value);
	EXPECT_EQ_INT(4, e->line);
	e = tr_section_entry(tr_profile_section(&p, "a"), "events");
	CHECK_NOT_NULL(e);
	EXPECT_EQ_STR("a,b", e->value);
	tr_profile_free(&p);
	unlink(path);
}

DEF_TEST(only_regular_files_are_read)
{
	struct tr_profile p = { 0 };
	char fifo[] = "/tmp/tracerig-test-fifo-XXXXXX";
	int fd = mkstemp(fifo);

	CHECK_NOT_NULL(fd >= 0 ? fifo : NULL);
	close(fd);
	unlink(fifo);
	EXPECT_EQ_INT(0, mkfifo(fifo, 0600));
	/* Would block forever if opened for reading like a file. */
	EXPECT_EQ_INT(1, tr_profile_load(&p, fifo));
	tr_profile_free(&p);
	unlink(fifo);
	EXPECT_EQ_INT(1, tr_profile_load(&p, "/dev/zero"));
	tr_profile_free(&p);
	EXPECT_EQ_INT(1, tr_profile_load(&p, "/tmp"));
	tr_profile_free(&p);
}

DEF_TEST(missing_file_is_an_errno)
{
	struct tr_profile p = { 0 };

	EXPECT_EQ_INT(-ENOENT, tr_profile_load(&p, "/nonexistent/profile.ini"));
	tr_profile_free(&p);
}

int main(void)
{
	tr_log_set_verbosity(TRACERIG_LOG_ERROR - 1);
	RUN_TEST(keys_remember_their_lines);
	RUN_TEST(duplicate_keys_and_sections_are_errors);
	RUN_TEST(keys_outside_sections_are_errors);
	RUN_TEST(set_overrides_and_adds);
	RUN_TEST(long_lines_up_to_the_documented_limit);
	RUN_TEST(a_trailing_backslash_joins_with_a_space);
	RUN_TEST(only_regular_files_are_read);
	RUN_TEST(missing_file_is_an_errno);
	tr_log_close_file();
	TEST_MAIN_END();
}

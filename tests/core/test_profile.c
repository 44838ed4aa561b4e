/* Profiles keep every key's file and line so errors can point at them. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../core/log.h"
#include "../../core/profile.h"
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
	RUN_TEST(missing_file_is_an_errno);
	tr_log_close_file();
	TEST_MAIN_END();
}

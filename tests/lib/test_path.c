/* A path's base name without its suffix. */
#include "config.h"

#include "lib/path.h"
#include "../testing.h"

static const char *const archive[] = { ".trace.zip", ".zip", NULL };
static const char *const profile[] = { ".ini", NULL };

static const char *stem(const char *path, const char *const *suffixes)
{
	static char buf[64];

	tr_path_stem(path, suffixes, buf, sizeof(buf));
	return buf;
}

DEF_TEST(directory_and_first_matching_suffix_go)
{
	EXPECT_EQ_STR("web", stem("/tmp/out/web.trace.zip", archive));
	EXPECT_EQ_STR("web", stem("web.zip", archive));
	EXPECT_EQ_STR("cpu", stem("profiles/cpu.ini", profile));
	EXPECT_EQ_STR("cpu.ini.bak", stem("cpu.ini.bak", profile));
	EXPECT_EQ_STR("web.trace", stem("web.trace", archive));
}

DEF_TEST(a_name_that_is_only_the_suffix_keeps_it)
{
	EXPECT_EQ_STR(".ini", stem("/etc/.ini", profile));
	EXPECT_EQ_STR(".zip", stem(".zip", archive));
	EXPECT_EQ_STR("", stem("dir/", archive));
}

DEF_TEST(no_suffixes_is_the_base_name)
{
	EXPECT_EQ_STR("a.ini", stem("x/y/a.ini", NULL));
}

DEF_TEST(the_result_is_cut_to_the_buffer)
{
	char buf[4];

	tr_path_stem("/a/abcdef.ini", profile, buf, sizeof(buf));
	EXPECT_EQ_STR("abc", buf);
}

int main(void)
{
	RUN_TEST(directory_and_first_matching_suffix_go);
	RUN_TEST(a_name_that_is_only_the_suffix_keeps_it);
	RUN_TEST(no_suffixes_is_the_base_name);
	RUN_TEST(the_result_is_cut_to_the_buffer);
	TEST_MAIN_END();
}

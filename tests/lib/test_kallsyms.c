/* /proc/kallsyms lines, from text and from a file. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/kallsyms.h"
#include "../testing.h"

DEF_TEST(kernel_and_module_lines)
{
	struct tr_kallsyms_line l;

	EXPECT_EQ_INT(0, tr_kallsyms_parse("ffffffff81000000 T _text\n", &l));
	EXPECT_TRUE(l.addr == 0xffffffff81000000ull);
	EXPECT_EQ_INT('T', l.type);
	EXPECT_EQ_INT(5, l.name_len);
	EXPECT_TRUE(strncmp(l.name, "_text", 5) == 0);
	EXPECT_TRUE(l.module == NULL);

	EXPECT_EQ_INT(0, tr_kallsyms_parse("ffffffffc0a01000 t ext4_fill_super\t[ext4]\n", &l));
	EXPECT_EQ_INT('t', l.type);
	EXPECT_EQ_INT(15, l.name_len);
	EXPECT_EQ_INT(4, l.module_len);
	EXPECT_TRUE(l.module && strncmp(l.module, "ext4", 4) == 0 && l.module[-1] == '[');

	/* What kptr_restrict shows: every address zero, still well formed. */
	EXPECT_EQ_INT(0, tr_kallsyms_parse("0000000000000000 T _text\n", &l));
	EXPECT_TRUE(l.addr == 0);
}

DEF_TEST(other_shapes_are_refused)
{
	struct tr_kallsyms_line l;

	EXPECT_EQ_INT(-EINVAL, tr_kallsyms_parse("", &l));
	EXPECT_EQ_INT(-EINVAL, tr_kallsyms_parse("garbage\n", &l));
	EXPECT_EQ_INT(-EINVAL, tr_kallsyms_parse("ffffffff81000000 TT _text\n", &l));
	EXPECT_EQ_INT(-EINVAL, tr_kallsyms_parse("ffffffff81000000 T \n", &l));
}

struct seen {
	int lines, stop_at;
	char last[64];
};

static int note(void *arg, const struct tr_kallsyms_line *l)
{
	struct seen *s = arg;

	s->lines++;
	snprintf(s->last, sizeof(s->last), "%.*s", (int)l->name_len, l->name);
	return s->lines == s->stop_at;
}

DEF_TEST(each_well_formed_line_of_a_file_until_told_to_stop)
{
	char path[] = "/tmp/kallsyms-test.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct seen s = { 0 };

	CHECK_NOT_NULL(f);
	fputs("ffffffff81000000 T _text\nnot a line\nffffffff81e00000 T _etext\n"
	      "ffffffffc0a01000 t ext4_fill_super\t[ext4]\n", f);
	fclose(f);
	EXPECT_EQ_INT(0, tr_kallsyms_each(path, note, &s));
	EXPECT_EQ_INT(3, s.lines);
	EXPECT_EQ_STR("ext4_fill_super", s.last);
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	EXPECT_EQ_INT(1, tr_kallsyms_each(path, note, &s));
	EXPECT_EQ_STR("_etext", s.last);
	unlink(path);
	EXPECT_EQ_INT(-ENOENT, tr_kallsyms_each(path, note, &s));
}

int main(void)
{
	RUN_TEST(kernel_and_module_lines);
	RUN_TEST(other_shapes_are_refused);
	RUN_TEST(each_well_formed_line_of_a_file_until_told_to_stop);
	TEST_MAIN_END();
}

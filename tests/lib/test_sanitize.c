/* The one rule for text from traced processes, on hostile strings. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sanitize.h"
#include "../testing.h"

static const char *clean(const char *s)
{
	static char buf[256];

	tr_sanitize_name(buf, sizeof(buf), s);
	return buf;
}

DEF_TEST(line_breaks_cannot_inject_lines)
{
	/* A jitdump code name that would add a frame line and a sample. */
	EXPECT_EQ_STR("fn??ffffffff81000000 evil (/x)?", clean("fn\n\tffffffff81000000 evil (/x)\r"));
	EXPECT_TRUE(strchr(clean("a\nb\rc\td\fe\vf"), '\n') == NULL);
	EXPECT_EQ_STR("a?b?c?d?e?f", clean("a\nb\rc\td\fe\vf"));
}

DEF_TEST(folded_separators_cannot_be_forged)
{
	/* ';' would split one frame into two; the count after the last space
	 * cannot be forged without a newline. */
	EXPECT_EQ_STR("main:secret:frames 1000000", clean("main;secret;frames 1000000"));
	EXPECT_EQ_STR("x 1?evil:stack 99", clean("x 1\nevil;stack 99"));
	/* Spaces stay: C++ and .NET names have them. */
	EXPECT_EQ_STR("void Foo::bar(int, long)", clean("void Foo::bar(int, long)"));
}

DEF_TEST(terminal_escapes_are_defused)
{
	EXPECT_EQ_STR("?[31mred?[0m", clean("\x1b[31mred\x1b[0m"));
	EXPECT_EQ_STR("?]0:title?", clean("\x1b]0;title\x07"));
	EXPECT_EQ_STR("del?", clean("del\x7f"));
	/* C1 controls in UTF-8 (U+009B is CSI for some terminals) and raw. */
	EXPECT_EQ_STR("??[2J", clean("\xc2\x9b[2J"));
	EXPECT_EQ_STR("?[2J", clean("\x9b[2J"));
}

DEF_TEST(utf8_kept_invalid_bytes_replaced)
{
	EXPECT_EQ_STR("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
		      clean("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"));
	EXPECT_EQ_STR("?x", clean("\xffx"));
	EXPECT_EQ_STR("??", clean("\xc0\xaf"));          /* overlong '/' */
	EXPECT_EQ_STR("???", clean("\xed\xa0\x80"));     /* surrogate */
	EXPECT_EQ_STR("????", clean("\xf4\x90\x80\x80")); /* past U+10FFFF */
	EXPECT_EQ_STR("a??", clean("a\xe6\x97"));        /* cut sequence: one ? a byte */
}

DEF_TEST(same_length_in_place_never_cutting_a_character)
{
	char buf[32] = "a;b\nc\xc3\xa9";
	size_t n = tr_sanitize_name(buf, sizeof(buf), buf);

	EXPECT_EQ_INT(strlen("a;b\nc\xc3\xa9"), n);
	EXPECT_EQ_STR("a:b?c\xc3\xa9", buf);
	/* Room for "a" and a NUL but not the two bytes of "é". */
	n = tr_sanitize_name(buf, 3, "a\xc3\xa9");
	EXPECT_EQ_INT(1, n);
	EXPECT_EQ_STR("a", buf);
	EXPECT_EQ_INT(0, tr_sanitize_name(buf, 1, "abc"));
	EXPECT_EQ_STR("", buf);
}

DEF_TEST(needs_and_fputs_agree_with_the_copy)
{
	static const char *const inputs[] = { "plain", "with space", "semi;colon", "nl\n",
					       "\x1b[1m", "caf\xc3\xa9", "\xff\xfe", "" };
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		char *mem = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&mem, &len);

		CHECK_NOT_NULL(f);
		EXPECT_EQ_INT(0, tr_sanitize_fputs(inputs[i], f));
		fclose(f);
		EXPECT_EQ_STR(clean(inputs[i]), mem);
		EXPECT_EQ_INT(strcmp(clean(inputs[i]), inputs[i]) != 0,
			      tr_name_needs_sanitizing(inputs[i]));
		free(mem);
	}
}

DEF_TEST(log_text_keeps_semicolons)
{
	char buf[64];

	EXPECT_EQ_INT(11, tr_sanitize_text(buf, sizeof(buf), "a;b\n\x1b[1mc;d"));
	EXPECT_EQ_STR("a;b??[1mc;d", buf);
}

int main(void)
{
	RUN_TEST(line_breaks_cannot_inject_lines);
	RUN_TEST(folded_separators_cannot_be_forged);
	RUN_TEST(terminal_escapes_are_defused);
	RUN_TEST(utf8_kept_invalid_bytes_replaced);
	RUN_TEST(same_length_in_place_never_cutting_a_character);
	RUN_TEST(needs_and_fputs_agree_with_the_copy);
	RUN_TEST(log_text_keeps_semicolons);
	TEST_MAIN_END();
}

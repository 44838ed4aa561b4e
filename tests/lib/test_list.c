/* The one rule for list values. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/list.h"
#include "../testing.h"

/* The items joined by '|', to compare in one line. */
static const char *items(const char *list, int words)
{
	static char out[256];
	const char *item;
	size_t len, used = 0;

	out[0] = '\0';
	while (words ? tr_words_next(&list, &item, &len) : tr_list_next(&list, &item, &len))
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s%.*s", used ? "|" : "",
					 (int)len, item);
	return out;
}

DEF_TEST(items_are_trimmed_and_empty_ones_skipped)
{
	EXPECT_EQ_STR("a|b|c", items("a, b,,c ", 0));
	EXPECT_EQ_STR("a|b", items(" \ta\t,\n b\n", 0));
	EXPECT_EQ_STR("", items("", 0));
	EXPECT_EQ_STR("", items(" , ,", 0));
	EXPECT_EQ_STR("", items(NULL, 0));
	/* Inside an item, white space stays. */
	EXPECT_EQ_STR("LD_PRELOAD=/a b.so|X=1", items("LD_PRELOAD=/a b.so, X=1", 0));
}

DEF_TEST(words_also_split_at_white_space)
{
	/* What -p "$(pidof a b)" gives. */
	EXPECT_EQ_STR("12|34", items("12 34", 1));
	EXPECT_EQ_STR("12|34|56", items("12 ,34\n56,", 1));
	EXPECT_EQ_STR("S|D", items("S D", 1));
	EXPECT_EQ_STR("", items(" \t\n", 1));
}

DEF_TEST(membership_is_by_whole_item)
{
	EXPECT_EQ_INT(1, tr_list_has("testa, lttng", "lttng"));
	EXPECT_EQ_INT(1, tr_list_has("lttng", "lttng"));
	EXPECT_EQ_INT(0, tr_list_has("lttng2, xlttng", "lttng"));
	EXPECT_EQ_INT(0, tr_list_has("", "lttng"));
	EXPECT_EQ_INT(0, tr_list_has(NULL, "lttng"));
	EXPECT_EQ_INT(0, tr_list_has("a,,b", ""));
}

DEF_TEST(item_copies_are_terminated_and_say_when_cut)
{
	char buf[4];

	EXPECT_EQ_INT(0, tr_list_item(buf, sizeof(buf), "abc,d", 3));
	EXPECT_EQ_STR("abc", buf);
	EXPECT_EQ_INT(-ENAMETOOLONG, tr_list_item(buf, sizeof(buf), "abcd", 4));
	EXPECT_EQ_STR("abc", buf);
}

int main(void)
{
	RUN_TEST(items_are_trimmed_and_empty_ones_skipped);
	RUN_TEST(words_also_split_at_white_space);
	RUN_TEST(membership_is_by_whole_item);
	RUN_TEST(item_copies_are_terminated_and_say_when_cut);
	TEST_MAIN_END();
}

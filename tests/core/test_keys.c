/* Typed profile values: what the core accepts and how it says no. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <stdlib.h>

#include "../../core/session/keys.h"
#include "../testing.h"

static const struct tracerig_key keys[] = {
	{ .name = "frequency", .type = TRACERIG_KEY_INT, .default_value = "1000", .min = 1,
	  .max = 100000,
	  .description = "Hz" },
	{ .name = "buffer", .type = TRACERIG_KEY_SIZE, .default_value = "4M", .min = 4096,
	  .max = 1LL << 30,
	  .description = "bytes" },
	{ .name = "duration", .type = TRACERIG_KEY_DURATION, .default_value = "10",
	  .description = "" },
	{ .name = "callgraph", .type = TRACERIG_KEY_ENUM, .default_value = "fp",
	  .choices = "fp,none",
	  .description = "" },
	{ .name = "kernel", .type = TRACERIG_KEY_BOOL, .default_value = "yes",
	  .description = "" },
	{ .name = "events", .type = TRACERIG_KEY_LIST, .default_value = "cpu-clock",
	  .description = "" },
	{ .name = NULL },
};

static long long parse(const char *key, const char *text, int *ret)
{
	char err[256];
	long long num = -1;

	*ret = tr_key_parse(tr_key_find(keys, key), text, &num, err, sizeof(err));
	return num;
}

DEF_TEST(integers_are_range_checked)
{
	int ret;

	EXPECT_EQ_INT(499, parse("frequency", "499", &ret));
	EXPECT_EQ_INT(0, ret);
	parse("frequency", "0", &ret);
	EXPECT_EQ_INT(-ERANGE, ret);
	parse("frequency", "12abc", &ret);
	EXPECT_EQ_INT(-EINVAL, ret);
}

DEF_TEST(sizes_take_binary_suffixes)
{
	int ret;

	EXPECT_EQ_INT(8 << 20, parse("buffer", "8M", &ret));
	EXPECT_EQ_INT(512 << 10, parse("buffer", "512k", &ret));
	EXPECT_EQ_INT(1 << 30, parse("buffer", "1G", &ret));
	parse("buffer", "8 parsecs", &ret);
	EXPECT_EQ_INT(-EINVAL, ret);
}

DEF_TEST(durations_are_milliseconds_and_bare_numbers_seconds)
{
	int ret;

	EXPECT_EQ_INT(10000, parse("duration", "10", &ret));
	EXPECT_EQ_INT(500, parse("duration", "500ms", &ret));
	EXPECT_EQ_INT(120000, parse("duration", "2m", &ret));
	EXPECT_EQ_INT(1500, parse("duration", "1.5s", &ret));
	parse("duration", "-3", &ret);
	EXPECT_EQ_INT(-EINVAL, ret);
}

/* Only plain decimal: what strtol/strtold would also accept reads as
 * something other than what was meant. */
DEF_TEST(numbers_are_plain_decimal)
{
	static const char *const not_numbers[] = { "0x2", "010x", " 5", "+5", "5 ", "1e3", "inf",
						   "nan", "0x1p3", ".5", "5.", "", "--1" };
	char err[256];
	long long num;
	int ret;

	for (size_t i = 0; i < sizeof(not_numbers) / sizeof(not_numbers[0]); i++) {
		parse("frequency", not_numbers[i], &ret);
		if (ret != -EINVAL)
			TEST_FAIL("integer '%s' accepted", not_numbers[i]);
		parse("buffer", not_numbers[i], &ret);
		if (ret != -EINVAL && strcmp(not_numbers[i], "5 ") != 0)
			TEST_FAIL("size '%s' accepted", not_numbers[i]);
		parse("duration", not_numbers[i], &ret);
		if (ret != -EINVAL && strcmp(not_numbers[i], "5 ") != 0)
			TEST_FAIL("duration '%s' accepted", not_numbers[i]);
	}
	/* Leading zeros are decimal, not octal. */
	EXPECT_EQ_INT(10, parse("frequency", "010", &ret));
	EXPECT_EQ_INT(0, ret);
	EXPECT_EQ_INT(-ERANGE, tr_key_parse(tr_key_find(keys, "frequency"), "99999999999999999999",
					    &num, err, sizeof(err)));
	EXPECT_EQ_STR("'99999999999999999999' is too large", err);
	EXPECT_EQ_INT(-EINVAL, tr_key_parse(tr_key_find(keys, "duration"), "0x2", &num, err,
					    sizeof(err)));
	EXPECT_EQ_STR("'0x2' is not a duration (seconds, or a number with ms, s, m or h)", err);
	EXPECT_EQ_INT(-ERANGE, tr_key_parse(tr_key_find(keys, "buffer"), "99999999999G", &num,
					    err, sizeof(err)));
	EXPECT_EQ_STR("'99999999999G' is too large", err);
}

DEF_TEST(durations_below_one_millisecond_are_errors)
{
	char err[256];
	long long num;

	EXPECT_EQ_INT(-ERANGE, tr_key_parse(tr_key_find(keys, "duration"), "0.4ms", &num, err,
					    sizeof(err)));
	EXPECT_EQ_STR("'0.4ms' is shorter than 1 ms, the smallest duration (use at least 1ms, "
		      "or 0 for no limit)", err);
	EXPECT_EQ_INT(-ERANGE, tr_key_parse(tr_key_find(keys, "duration"), "0.0001", &num, err,
					    sizeof(err)));
	/* 0 is "no limit", and 1ms the smallest limit. */
	EXPECT_EQ_INT(0, tr_key_parse(tr_key_find(keys, "duration"), "0", &num, err, sizeof(err)));
	EXPECT_EQ_INT(0, num);
	EXPECT_EQ_INT(0, tr_key_parse(tr_key_find(keys, "duration"), "0s", &num, err, sizeof(err)));
	EXPECT_EQ_INT(0, tr_key_parse(tr_key_find(keys, "duration"), "1ms", &num, err, sizeof(err)));
	EXPECT_EQ_INT(1, num);
	EXPECT_EQ_INT(0, tr_key_parse(tr_key_find(keys, "duration"), "0.001", &num, err,
				      sizeof(err)));
	EXPECT_EQ_INT(1, num);
}

DEF_TEST(enums_and_booleans)
{
	char err[256];
	long long num;
	int ret;

	EXPECT_EQ_INT(1, parse("kernel", "on", &ret));
	EXPECT_EQ_INT(0, parse("kernel", "No", &ret));
	parse("kernel", "maybe", &ret);
	EXPECT_EQ_INT(-EINVAL, ret);
	EXPECT_EQ_INT(0, tr_key_parse(tr_key_find(keys, "callgraph"), "none", &num, err, sizeof(err)));
	EXPECT_EQ_INT(-EINVAL, tr_key_parse(tr_key_find(keys, "callgraph"), "dwarf", &num, err,
					    sizeof(err)));
	EXPECT_CONTAINS("fp,none", err);
}

DEF_TEST(did_you_mean_finds_typos_and_prefixes)
{
	EXPECT_EQ_STR("frequency", tr_key_suggest(keys, "frequncy"));
	EXPECT_EQ_STR("frequency", tr_key_suggest(keys, "freq"));
	EXPECT_EQ_STR("callgraph", tr_key_suggest(keys, "call_graph"));
	EXPECT_TRUE(tr_key_suggest(keys, "zzzzzzzz") == NULL);
}

DEF_TEST(lists_split_by_the_one_list_rule)
{
	struct tracerig_list l;

	EXPECT_EQ_INT(0, tr_key_split(" a, b c,,d ,", &l));
	EXPECT_EQ_INT(3, (long long)l.n);
	if (l.n == 3) {
		EXPECT_EQ_STR("a", l.items[0]);
		EXPECT_EQ_STR("b c", l.items[1]);
		EXPECT_EQ_STR("d", l.items[2]);
	}
	free((void *)l.items);
	EXPECT_EQ_INT(0, tr_key_split(" , ", &l));
	EXPECT_EQ_INT(0, (long long)l.n);
	EXPECT_TRUE(l.items == NULL);
	EXPECT_EQ_INT(0, tr_key_split(NULL, &l));
	EXPECT_EQ_INT(0, (long long)l.n);
}

DEF_TEST(choices_arrive_as_their_index)
{
	EXPECT_EQ_INT(0, tr_key_choice("fp, dwarf,none", "fp"));
	EXPECT_EQ_INT(1, tr_key_choice("fp, dwarf,none", "dwarf"));
	EXPECT_EQ_INT(2, tr_key_choice("fp, dwarf,none", "none"));
	EXPECT_EQ_INT(-1, tr_key_choice("fp, dwarf,none", "dwar"));
	EXPECT_EQ_INT(-1, tr_key_choice("fp, dwarf,none", NULL));
}

struct bound {
	const char *s;
	long long big;
	int small, flag;
	short wrong;
	struct tracerig_list list;
};

DEF_TEST(bindings_must_match_their_type)
{
	const struct tracerig_key good[] = {
		{ .name = "s", .type = TRACERIG_KEY_STRING, TRACERIG_BIND(struct bound, s) },
		{ .name = "big", .type = TRACERIG_KEY_SIZE, TRACERIG_BIND(struct bound, big) },
		{ .name = "small", .type = TRACERIG_KEY_INT, .min = 0, .max = 100,
		  TRACERIG_BIND(struct bound, small) },
		{ .name = "flag", .type = TRACERIG_KEY_BOOL, TRACERIG_BIND(struct bound, flag) },
		{ .name = "list", .type = TRACERIG_KEY_LIST, TRACERIG_BIND(struct bound, list) },
		{ .name = "unbound", .type = TRACERIG_KEY_INT },
		{ .name = NULL },
	};
	const struct tracerig_key unranged_int[] = {
		{ .name = "small", .type = TRACERIG_KEY_INT, TRACERIG_BIND(struct bound, small) },
		{ .name = NULL },
	};
	const struct tracerig_key wide_range[] = {
		{ .name = "small", .type = TRACERIG_KEY_SIZE, .min = 0, .max = 1LL << 40,
		  TRACERIG_BIND(struct bound, small) },
		{ .name = NULL },
	};
	const struct tracerig_key short_bool[] = {
		{ .name = "wrong", .type = TRACERIG_KEY_BOOL, TRACERIG_BIND(struct bound, wrong) },
		{ .name = NULL },
	};
	const struct tracerig_key no_choices[] = {
		{ .name = "mode", .type = TRACERIG_KEY_ENUM },
		{ .name = NULL },
	};
	char why[256] = "";

	EXPECT_EQ_INT(0, tr_key_check_table(good, why, sizeof(why)));
	EXPECT_EQ_INT(-EINVAL, tr_key_check_table(unranged_int, why, sizeof(why)));
	EXPECT_CONTAINS("key 'small' (integer) is bound to a field of 4 bytes", why);
	EXPECT_EQ_INT(-EINVAL, tr_key_check_table(wide_range, why, sizeof(why)));
	EXPECT_EQ_INT(-EINVAL, tr_key_check_table(short_bool, why, sizeof(why)));
	EXPECT_CONTAINS("needs an int", why);
	EXPECT_EQ_INT(-EINVAL, tr_key_check_table(no_choices, why, sizeof(why)));
	EXPECT_CONTAINS("key 'mode' is a choice without choices", why);
}

/* A list key with choices: each item one of them (the core says every
 * other item, with its line, before the plugin's check or init). */
DEF_TEST(list_items_are_checked_against_their_choices)
{
	static const struct tracerig_key states = { .name = "states",
						    .type = TRACERIG_KEY_LIST,
						    .choices = "all,S,D,idle" };
	static const struct tracerig_key free_form = { .name = "events",
						       .type = TRACERIG_KEY_LIST };
	const char *cursor = " S, idel ,D,, sleeping", *item;
	size_t len;

	EXPECT_EQ_INT(1, tr_key_next_wrong_item(&states, &cursor, &item, &len));
	EXPECT_TRUE(len == 4 && memcmp(item, "idel", 4) == 0);
	EXPECT_EQ_INT(1, tr_key_next_wrong_item(&states, &cursor, &item, &len));
	EXPECT_TRUE(len == 8 && memcmp(item, "sleeping", 8) == 0);
	EXPECT_EQ_INT(0, tr_key_next_wrong_item(&states, &cursor, &item, &len));
	/* A prefix of a choice is not the choice. */
	cursor = "al";
	EXPECT_EQ_INT(1, tr_key_next_wrong_item(&states, &cursor, &item, &len));
	cursor = "anything, at all";
	EXPECT_EQ_INT(0, tr_key_next_wrong_item(&free_form, &cursor, &item, &len));
}

DEF_TEST(a_list_default_must_be_among_its_choices)
{
	static const struct tracerig_key good[] = {
		{ .name = "states",
		  .type = TRACERIG_KEY_LIST,
		  .choices = "all,S,D",
		  .default_value = "S, D" },
		{ 0 },
	};
	static const struct tracerig_key bad[] = {
		{ .name = "states",
		  .type = TRACERIG_KEY_LIST,
		  .choices = "all,S,D",
		  .default_value = "S, R" },
		{ 0 },
	};
	char why[256] = "";

	EXPECT_EQ_INT(0, tr_key_check_table(good, why, sizeof(why)));
	EXPECT_EQ_INT(-EINVAL, tr_key_check_table(bad, why, sizeof(why)));
	EXPECT_CONTAINS("key 'states' defaults to 'R', not one of its choices", why);
}

int main(void)
{
	RUN_TEST(integers_are_range_checked);
	RUN_TEST(sizes_take_binary_suffixes);
	RUN_TEST(durations_are_milliseconds_and_bare_numbers_seconds);
	RUN_TEST(numbers_are_plain_decimal);
	RUN_TEST(durations_below_one_millisecond_are_errors);
	RUN_TEST(enums_and_booleans);
	RUN_TEST(did_you_mean_finds_typos_and_prefixes);
	RUN_TEST(lists_split_by_the_one_list_rule);
	RUN_TEST(choices_arrive_as_their_index);
	RUN_TEST(bindings_must_match_their_type);
	RUN_TEST(list_items_are_checked_against_their_choices);
	RUN_TEST(a_list_default_must_be_among_its_choices);
	TEST_MAIN_END();
}

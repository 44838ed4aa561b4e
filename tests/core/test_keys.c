/* Typed profile values: what the core accepts and how it says no. */
#include "config.h"

#include <errno.h>

#include "../../core/keys.h"
#include "../testing.h"

static const struct tracerig_key keys[] = {
	{ "frequency", TRACERIG_KEY_INT, "1000", NULL, 1, 100000, "Hz" },
	{ "buffer", TRACERIG_KEY_SIZE, "4M", NULL, 4096, 1LL << 30, "bytes" },
	{ "duration", TRACERIG_KEY_DURATION, "10", NULL, 0, 0, "" },
	{ "callgraph", TRACERIG_KEY_ENUM, "fp", "fp,none", 0, 0, "" },
	{ "kernel", TRACERIG_KEY_BOOL, "yes", NULL, 0, 0, "" },
	{ "events", TRACERIG_KEY_LIST, "cpu-clock", NULL, 0, 0, "" },
	{ NULL, 0, NULL, NULL, 0, 0, NULL },
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

int main(void)
{
	RUN_TEST(integers_are_range_checked);
	RUN_TEST(sizes_take_binary_suffixes);
	RUN_TEST(durations_are_milliseconds_and_bare_numbers_seconds);
	RUN_TEST(numbers_are_plain_decimal);
	RUN_TEST(durations_below_one_millisecond_are_errors);
	RUN_TEST(enums_and_booleans);
	RUN_TEST(did_you_mean_finds_typos_and_prefixes);
	TEST_MAIN_END();
}

/* The manifest reader: what tracerig writes it reads back, and what is not
 * JSON (or nests deeper than a manifest ever does) is refused whole. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/archive/jsonread.h"
#include "../testing.h"

static int parse(const char *text, struct tr_jv *v)
{
	return tr_jv_parse(text, strlen(text), v);
}

DEF_TEST(a_manifest_reads_back_by_path)
{
	struct tr_jv v;
	double n = 0;

	EXPECT_EQ_INT(0, parse("{\"host\": {\"hostname\": \"h1\", \"cpus_online\": 4},\n"
			       " \"plugins\": [{\"name\": \"zip\", \"required\": true}, null],\n"
			       " \"none\": null, \"no\": false}", &v));
	EXPECT_EQ_STR("h1", tr_jv_str(tr_jv_get(&v, "host", "hostname", NULL)));
	EXPECT_TRUE(tr_jv_num(tr_jv_get(&v, "host", "cpus_online", NULL), &n));
	EXPECT_TRUE(n == 4);
	EXPECT_EQ_INT(TR_JV_ARRAY, tr_jv_get(&v, "plugins", NULL)->type);
	EXPECT_EQ_INT(2, (int)tr_jv_get(&v, "plugins", NULL)->n);
	EXPECT_TRUE(tr_jv_true(tr_jv_get(&tr_jv_get(&v, "plugins", NULL)->items[0], "required",
					 NULL)));
	EXPECT_TRUE(!tr_jv_true(tr_jv_get(&v, "no", NULL)));
	EXPECT_TRUE(tr_jv_get(&v, "host", "kernel", NULL) == NULL);
	EXPECT_TRUE(tr_jv_get(&v, "none", "below", NULL) == NULL);
	EXPECT_TRUE(tr_jv_str(tr_jv_get(&v, "host", NULL)) == NULL);
	EXPECT_TRUE(!tr_jv_num(tr_jv_get(&v, "host", "hostname", NULL), &n));
	tr_jv_free(&v);
}

DEF_TEST(escapes_become_the_characters)
{
	struct tr_jv v;

	EXPECT_EQ_INT(0, parse("[\"a\\\"b\\\\c\\/d\\n\\t\", \"\\u00e9\\u20ac\", \"\\u0000x\"]", &v));
	EXPECT_EQ_STR("a\"b\\c/d\n\t", v.items[0].string);
	EXPECT_EQ_STR("\xc3\xa9\xe2\x82\xac", v.items[1].string);
	/* A NUL would cut the string short: it is read as '?'. */
	EXPECT_EQ_STR("?x", v.items[2].string);
	tr_jv_free(&v);
}

DEF_TEST(what_is_not_json_is_refused)
{
	static const char *const bad[] = {
		"", "{", "[1,]", "{\"a\" 1}", "{\"a\": 1} x", "tru", "\"open", "[\"\\u12g4\"]",
		"{1: 2}", "[1 2]",
	};
	char deep[200];
	struct tr_jv v;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ_INT(-EINVAL, parse(bad[i], &v));
		EXPECT_TRUE(v.n == 0 && v.items == NULL);
	}
	/* 64 levels are read, 65 are not. */
	memset(deep, '[', 64);
	memset(deep + 64, ']', 64);
	deep[128] = '\0';
	EXPECT_EQ_INT(0, parse(deep, &v));
	tr_jv_free(&v);
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	deep[130] = '\0';
	EXPECT_EQ_INT(-EINVAL, parse(deep, &v));
}

int main(void)
{
	RUN_TEST(a_manifest_reads_back_by_path);
	RUN_TEST(escapes_become_the_characters);
	RUN_TEST(what_is_not_json_is_refused);
	TEST_MAIN_END();
}

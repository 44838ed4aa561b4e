/* manifest.json must stay valid JSON whatever a profile or path contains. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "../../core/archive/json.h"
#include "../testing.h"

DEF_TEST(strings_are_escaped_and_nesting_is_balanced)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct tr_json j;

	CHECK_NOT_NULL(f);
	tr_json_init(&j, f);
	tr_json_object(&j, NULL);
	tr_json_string(&j, "quote", "say \"hi\"\\\n\t\x01");
	tr_json_array(&j, "list");
	tr_json_u64(&j, NULL, 18446744073709551615ull);
	tr_json_i64(&j, NULL, -5);
	tr_json_end_array(&j);
	tr_json_array(&j, "empty");
	tr_json_end_array(&j);
	tr_json_string(&j, "none", NULL);
	tr_json_bool(&j, "yes", 1);
	tr_json_end_object(&j);
	tr_json_finish(&j);
	fclose(f);
	EXPECT_CONTAINS("\"quote\": \"say \\\"hi\\\"\\\\\\n\\t\\u0001\"", buf);
	EXPECT_CONTAINS("18446744073709551615,", buf);
	EXPECT_CONTAINS("\"empty\": []", buf);
	EXPECT_CONTAINS("\"none\": null", buf);
	EXPECT_CONTAINS("\"yes\": true\n}", buf);
	free(buf);
}

int main(void)
{
	RUN_TEST(strings_are_escaped_and_nesting_is_balanced);
	TEST_MAIN_END();
}

/* Growable arrays double, keep what they held, and fail without losing it. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "lib/vec.h"
#include "../testing.h"

DEF_TEST(first_growth_takes_the_initial_capacity)
{
	size_t cap = 0;
	int *v = tr_vec_grow(NULL, &cap, 1, sizeof(*v), 64);

	CHECK_NOT_NULL(v);
	EXPECT_EQ_INT(64, cap);
	free(v);
}

DEF_TEST(growth_doubles_and_keeps_the_items)
{
	size_t cap = 0, n = 0, grew = 0;
	int *v = NULL;

	for (int i = 0; i < 1000; i++) {
		size_t before = cap;
		int *g = tr_vec_grow(v, &cap, n + 1, sizeof(*g), 4);

		CHECK_NOT_NULL(g);
		if (cap != before) {
			grew++;
			EXPECT_EQ_INT(before ? before * 2 : 4, cap);
		}
		v = g;
		v[n++] = i;
	}
	/* 4, 8, ..., 1024: doubling, not one realloc per item. */
	EXPECT_EQ_INT(9, grew);
	EXPECT_EQ_INT(1024, cap);
	for (int i = 0; i < 1000; i++)
		if (v[i] != i) {
			TEST_FAIL("item %d is %d after growing", i, v[i]);
			break;
		}
	free(v);
}

DEF_TEST(room_already_there_is_not_reallocated)
{
	size_t cap = 0;
	char *v = tr_vec_grow(NULL, &cap, 10, 1, 16);

	CHECK_NOT_NULL(v);
	EXPECT_TRUE(tr_vec_grow(v, &cap, 16, 1, 16) == v);
	EXPECT_EQ_INT(16, cap);
	free(v);
}

DEF_TEST(a_large_need_is_met_at_once)
{
	size_t cap = 4;
	char *v = malloc(4);
	char *g;

	CHECK_NOT_NULL(v);
	g = tr_vec_grow(v, &cap, 100, 1, 4);
	CHECK_NOT_NULL(g);
	EXPECT_EQ_INT(128, cap);
	free(g);
}

DEF_TEST(overflow_fails_and_leaves_the_array)
{
	size_t cap = 8;
	char *v = malloc(8 * sizeof(uint64_t));

	CHECK_NOT_NULL(v);
	EXPECT_TRUE(tr_vec_grow(v, &cap, SIZE_MAX / 4, sizeof(uint64_t), 8) == NULL);
	EXPECT_EQ_INT(8, cap);
	EXPECT_TRUE(tr_vec_grow(v, &cap, SIZE_MAX, 1, 8) == NULL);
	EXPECT_EQ_INT(8, cap);
	free(v);
}

DEF_TEST(a_limit_caps_growth_and_refuses_more)
{
	size_t cap = 0;
	char *v = tr_vec_grow_max(NULL, &cap, 1, 1, 256, 1000), *g;

	CHECK_NOT_NULL(v);
	EXPECT_EQ_INT(256, cap);
	g = tr_vec_grow_max(v, &cap, 600, 1, 256, 1000);
	CHECK_NOT_NULL(g);
	/* 1024 would pass the limit: the limit it is. */
	EXPECT_EQ_INT(1000, cap);
	EXPECT_TRUE(tr_vec_grow_max(g, &cap, 1000, 1, 256, 1000) == g);
	EXPECT_TRUE(tr_vec_grow_max(g, &cap, 1001, 1, 256, 1000) == NULL);
	EXPECT_EQ_INT(1000, cap);
	free(g);
	cap = 0;
	/* An initial capacity past the limit starts at the limit. */
	v = tr_vec_grow_max(NULL, &cap, 1, 1, 4096, 100);
	CHECK_NOT_NULL(v);
	EXPECT_EQ_INT(100, cap);
	free(v);
}

int main(void)
{
	RUN_TEST(first_growth_takes_the_initial_capacity);
	RUN_TEST(growth_doubles_and_keeps_the_items);
	RUN_TEST(room_already_there_is_not_reallocated);
	RUN_TEST(a_large_need_is_met_at_once);
	RUN_TEST(overflow_fails_and_leaves_the_array);
	RUN_TEST(a_limit_caps_growth_and_refuses_more);
	TEST_MAIN_END();
}

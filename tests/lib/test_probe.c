/* The open-addressing table: entries found again, at most half full,
 * rehashed whole when it grows, and reachable after a neighbour leaves. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "lib/probe.h"
#include "../testing.h"

struct pair {
	uint32_t key; /* 0: a free slot */
	uint32_t value;
};

/* A poor hash on purpose: keys k and k + 8 share a home, near the end of
 * a table of 16, so probing and deletion meet runs of collisions that
 * wrap around it. */
static uint64_t key_hash(uint32_t key)
{
	return key % 8 + 13;
}

static uint64_t pair_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return key_hash(((const struct pair *)slot)->key);
}

static int pair_used(const void *slot)
{
	return ((const struct pair *)slot)->key != 0;
}

static int pair_is(const void *slot, const void *key)
{
	return ((const struct pair *)slot)->key == *(const uint32_t *)key;
}

static const struct tr_probe_ops pair_ops = {
	.size = sizeof(struct pair),
	.first = 8,
	.used = pair_used,
	.hash = pair_hash,
};

struct pairs {
	struct pair *slots;
	size_t cap, n;
};

static size_t find(const struct pairs *t, uint32_t key)
{
	return tr_probe_find(t->slots, t->cap, &pair_ops, key_hash(key), pair_is, &key);
}

static int put(struct pairs *t, uint32_t key, uint32_t value)
{
	struct pair *grown = tr_probe_grow(t->slots, &t->cap, t->n + 1, &pair_ops, NULL);
	size_t i;

	if (!grown)
		return -1;
	t->slots = grown;
	i = find(t, key);
	if (!t->slots[i].key)
		t->n++;
	t->slots[i] = (struct pair){ .key = key, .value = value };
	return 0;
}

/* The value of `key`, 0 when it is not there. */
static uint32_t get(const struct pairs *t, uint32_t key)
{
	return t->cap ? t->slots[find(t, key)].value : 0;
}

DEF_TEST(entries_are_found_again_across_growth)
{
	struct pairs t = { 0 };
	size_t used = 0;

	for (uint32_t k = 1; k <= 1000; k++)
		if (put(&t, k, k * 3) < 0) {
			TEST_FAIL("out of memory at %u", (unsigned)k);
			break;
		}
	EXPECT_EQ_INT(1000, t.n);
	/* 8, 16, ..., 2048: doubled each time, never past half full. */
	EXPECT_EQ_INT(2048, t.cap);
	for (size_t i = 0; i < t.cap; i++)
		used += t.slots[i].key != 0;
	EXPECT_EQ_INT(1000, used);
	for (uint32_t k = 1; k <= 1000; k++)
		if (get(&t, k) != k * 3) {
			TEST_FAIL("key %u has %u", (unsigned)k, (unsigned)get(&t, k));
			break;
		}
	EXPECT_EQ_INT(0, get(&t, 1001));
	EXPECT_EQ_INT(0, get(&t, 8000));
	free(t.slots);
}

DEF_TEST(a_key_already_there_is_the_same_slot)
{
	struct pairs t = { 0 };

	CHECK_NOT_NULL(t.slots = tr_probe_grow(NULL, &t.cap, 1, &pair_ops, NULL));
	EXPECT_EQ_INT(8, t.cap);
	EXPECT_EQ_INT(0, put(&t, 3, 1));
	EXPECT_EQ_INT(0, put(&t, 11, 2)); /* the same home as 3 */
	EXPECT_EQ_INT(0, put(&t, 3, 4));
	EXPECT_EQ_INT(2, t.n);
	EXPECT_EQ_INT(4, get(&t, 3));
	EXPECT_EQ_INT(2, get(&t, 11));
	free(t.slots);
}

DEF_TEST(room_already_there_keeps_the_table)
{
	struct pairs t = { 0 };
	struct pair *before;

	for (uint32_t k = 1; k <= 4; k++)
		EXPECT_EQ_INT(0, put(&t, k, k));
	before = t.slots;
	EXPECT_TRUE(tr_probe_grow(t.slots, &t.cap, 4, &pair_ops, NULL) == before);
	EXPECT_EQ_INT(8, t.cap);
	/* The fifth would make it more than half full. */
	EXPECT_EQ_INT(0, put(&t, 5, 5));
	EXPECT_EQ_INT(16, t.cap);
	free(t.slots);
}

DEF_TEST(three_quarters_full_when_asked)
{
	static const struct tr_probe_ops ops = {
		.size = sizeof(struct pair),
		.first = 8,
		.quarters = 3,
		.used = pair_used,
		.hash = pair_hash,
	};
	size_t cap = 0;
	struct pair *t = tr_probe_grow(NULL, &cap, 1, &ops, NULL), *g;

	CHECK_NOT_NULL(t);
	EXPECT_EQ_INT(8, cap);
	EXPECT_TRUE(tr_probe_grow(t, &cap, 6, &ops, NULL) == t);
	g = tr_probe_grow(t, &cap, 7, &ops, NULL);
	CHECK_NOT_NULL(g);
	EXPECT_EQ_INT(16, cap);
	free(g);
}

DEF_TEST(a_large_need_is_met_at_once)
{
	size_t cap = 0;
	struct pair *t = tr_probe_grow(NULL, &cap, 100, &pair_ops, NULL);

	CHECK_NOT_NULL(t);
	EXPECT_EQ_INT(256, cap);
	free(t);
}

DEF_TEST(overflow_fails_and_leaves_the_table)
{
	struct pairs t = { 0 };

	EXPECT_EQ_INT(0, put(&t, 9, 9));
	EXPECT_TRUE(tr_probe_grow(t.slots, &t.cap, SIZE_MAX / 2 + 1, &pair_ops, NULL) == NULL);
	EXPECT_EQ_INT(8, t.cap);
	EXPECT_EQ_INT(9, get(&t, 9));
	free(t.slots);
}

/* Deleting every key in turn, from a table whose runs of collisions wrap
 * around its end: each left is still found, each gone is not. */
DEF_TEST(deletion_leaves_no_hole_in_a_run)
{
	uint32_t keys[] = { 1, 9, 17, 2, 10, 3, 25, 33 }, n = sizeof(keys) / sizeof(keys[0]);

	for (uint32_t gone = 0; gone < n; gone++) {
		struct pairs t = { 0 };

		for (uint32_t k = 0; k < n; k++)
			EXPECT_EQ_INT(0, put(&t, keys[k], keys[k] + 100));
		EXPECT_EQ_INT(16, t.cap);
		for (uint32_t g = 0; g <= gone; g++) {
			tr_probe_delete(t.slots, t.cap, find(&t, keys[g]), &pair_ops, NULL);
			t.n--;
		}
		for (uint32_t k = 0; k < n; k++)
			if (get(&t, keys[k]) != (k <= gone ? 0 : keys[k] + 100))
				TEST_FAIL("after deleting %u keys, key %u has %u",
					  (unsigned)gone + 1, (unsigned)keys[k],
					  (unsigned)get(&t, keys[k]));
		free(t.slots);
	}
}

/* Slots that hold an index into the caller's array, hashed through it. */
static uint64_t index_hash(const void *slot, const void *ctx)
{
	return ((const uint64_t *)ctx)[*(const size_t *)slot - 1];
}

static int index_used(const void *slot)
{
	return *(const size_t *)slot != 0;
}

DEF_TEST(slots_may_index_the_callers_array)
{
	static const struct tr_probe_ops ops = {
		.size = sizeof(size_t),
		.first = 4,
		.used = index_used,
		.hash = index_hash,
	};
	uint64_t hashes[40];
	size_t *slots = NULL, cap = 0;

	for (size_t k = 0; k < 40; k++) {
		size_t *grown;

		hashes[k] = k * 0x9E3779B97F4A7C15ull;
		grown = tr_probe_grow(slots, &cap, k + 1, &ops, hashes);
		CHECK_NOT_NULL(grown);
		slots = grown;
		slots[tr_probe_find(slots, cap, &ops, hashes[k], NULL, NULL)] = k + 1;
	}
	EXPECT_EQ_INT(128, cap);
	for (size_t k = 0; k < 40; k++) {
		size_t i = (size_t)hashes[k] & (cap - 1);

		while (slots[i] && slots[i] != k + 1)
			i = (i + 1) & (cap - 1);
		EXPECT_EQ_INT(k + 1, slots[i]);
	}
	free(slots);
}

int main(void)
{
	RUN_TEST(entries_are_found_again_across_growth);
	RUN_TEST(a_key_already_there_is_the_same_slot);
	RUN_TEST(room_already_there_keeps_the_table);
	RUN_TEST(three_quarters_full_when_asked);
	RUN_TEST(a_large_need_is_met_at_once);
	RUN_TEST(overflow_fails_and_leaves_the_table);
	RUN_TEST(deletion_leaves_no_hole_in_a_run);
	RUN_TEST(slots_may_index_the_callers_array);
	TEST_MAIN_END();
}

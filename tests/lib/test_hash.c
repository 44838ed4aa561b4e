/* The tables' hash functions and the string map. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/strmap.h"
#include "../testing.h"

DEF_TEST(fnv1a_matches_the_published_vectors)
{
	/* From the FNV reference test suite (64-bit FNV-1a). */
	EXPECT_TRUE(tr_fnv1a("", 0) == 0xcbf29ce484222325ull);
	EXPECT_TRUE(tr_fnv1a("a", 1) == 0xaf63dc4c8601ec8cull);
	EXPECT_TRUE(tr_fnv1a("foobar", 6) == 0x85944171f73967e8ull);
	EXPECT_TRUE(tr_fnv1a_str("foobar") == 0x85944171f73967e8ull);
	/* Hashing in pieces is hashing the whole. */
	EXPECT_TRUE(tr_fnv1a_more(tr_fnv1a("foo", 3), "bar", 3) == tr_fnv1a("foobar", 6));
}

DEF_TEST(pid_hash_spreads_neighbours)
{
	size_t mask = 1023;

	EXPECT_TRUE((tr_pid_hash(100) & mask) != (tr_pid_hash(101) & mask));
	EXPECT_TRUE((tr_pid_hash(1) & mask) != (tr_pid_hash(2) & mask));
}

DEF_TEST(strmap_sums_values_per_key)
{
	struct tr_strmap m = { 0 };
	struct tr_strmap_entry *e;

	CHECK_NOT_NULL(e = tr_strmap_get(&m, "a;b;c", 5));
	EXPECT_EQ_INT(0, e->value);
	e->value += 3;
	/* Only `len` bytes are the key: the rest of the buffer is not. */
	CHECK_NOT_NULL(e = tr_strmap_get(&m, "a;b;c 17", 5));
	e->value += 4;
	EXPECT_EQ_INT(1, m.n);
	EXPECT_EQ_INT(7, tr_strmap_find(&m, "a;b;c", 5)->value);
	EXPECT_EQ_STR("a;b;c", tr_strmap_find(&m, "a;b;c", 5)->key);
	/* A prefix or an extension of a key is another key. */
	EXPECT_TRUE(tr_strmap_find(&m, "a;b", 3) == NULL);
	EXPECT_TRUE(tr_strmap_find(&m, "a;b;c;d", 7) == NULL);
	tr_strmap_free(&m);
	EXPECT_EQ_INT(0, m.n);
	EXPECT_TRUE(tr_strmap_find(&m, "a;b;c", 5) == NULL);
}

DEF_TEST(strmap_keeps_every_key_and_its_address_while_growing)
{
	struct tr_strmap m = { 0 };
	const struct tr_strmap_entry **sorted;
	const char *first;
	char key[32];
	size_t seen = 0;
	int ok = 1;

	first = tr_strmap_get(&m, "k0", 2)->key;
	for (int i = 0; i < 5000; i++) {
		int len = snprintf(key, sizeof(key), "k%d", i);
		struct tr_strmap_entry *e = tr_strmap_get(&m, key, (size_t)len);

		CHECK_NOT_NULL(e);
		e->value += (uint64_t)i + 1;
	}
	EXPECT_EQ_INT(5000, m.n);
	EXPECT_TRUE(m.n * 2 <= m.n_slots);
	EXPECT_TRUE(tr_strmap_find(&m, "k0", 2)->key == first);
	for (int i = 0; i < 5000; i++) {
		int len = snprintf(key, sizeof(key), "k%d", i);
		struct tr_strmap_entry *e = tr_strmap_find(&m, key, (size_t)len);

		if (!e || e->value != (uint64_t)i + 1)
			ok = 0;
	}
	EXPECT_TRUE(ok);
	for (size_t i = 0; tr_strmap_next(&m, &i);)
		seen++;
	EXPECT_EQ_INT(5000, seen);
	CHECK_NOT_NULL(sorted = tr_strmap_sorted(&m));
	for (size_t i = 1; i < m.n; i++)
		if (strcmp(sorted[i - 1]->key, sorted[i]->key) >= 0)
			ok = 0;
	EXPECT_TRUE(ok);
	EXPECT_EQ_STR("k0", sorted[0]->key);
	EXPECT_EQ_STR("k999", sorted[m.n - 1]->key);
	free(sorted);
	tr_strmap_free(&m);
}

DEF_TEST(strmap_empty_sorts_to_an_empty_array)
{
	struct tr_strmap m = { 0 };
	const struct tr_strmap_entry **sorted = tr_strmap_sorted(&m);
	struct tr_strmap_entry *e;
	size_t i = 0;

	CHECK_NOT_NULL(sorted);
	free(sorted);
	e = tr_strmap_next(&m, &i);
	EXPECT_TRUE(e == NULL);
	tr_strmap_free(&m);
}

int main(void)
{
	RUN_TEST(fnv1a_matches_the_published_vectors);
	RUN_TEST(pid_hash_spreads_neighbours);
	RUN_TEST(strmap_sums_values_per_key);
	RUN_TEST(strmap_keeps_every_key_and_its_address_while_growing);
	RUN_TEST(strmap_empty_sorts_to_an_empty_array);
	TEST_MAIN_END();
}

/* Tiny TAP helpers so unit tests read like specifications (after collectd's
 * testing.h).  Each DEF_TEST is one TAP line; EXPECT_* failures print the
 * location and mark the current test failed. */
#ifndef TR_TESTING_H
#define TR_TESTING_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tr_test_failed_now;
static int tr_test_count;
static int tr_test_failures;

#define DEF_TEST(name) static void test_##name(void)

#define RUN_TEST(name)                                                          \
	do {                                                                    \
		tr_test_failed_now = 0;                                         \
		test_##name();                                                  \
		tr_test_count++;                                                \
		if (tr_test_failed_now)                                         \
			tr_test_failures++;                                     \
		printf("%s %d - %s\n", tr_test_failed_now ? "not ok" : "ok",    \
		       tr_test_count, #name);                                   \
		fflush(stdout);                                                 \
	} while (0)

#define SKIP_TEST(name, why)                                                    \
	do {                                                                    \
		tr_test_count++;                                                \
		printf("ok %d - %s # SKIP %s\n", tr_test_count, #name, why);    \
	} while (0)

#define TEST_FAIL(...)                                                          \
	do {                                                                    \
		printf("# %s:%d: ", __FILE__, __LINE__);                        \
		printf(__VA_ARGS__);                                            \
		printf("\n");                                                   \
		tr_test_failed_now = 1;                                         \
	} while (0)

#define EXPECT_TRUE(cond)                                                       \
	do {                                                                    \
		if (!(cond))                                                    \
			TEST_FAIL("expected %s", #cond);                        \
	} while (0)

#define EXPECT_EQ_INT(expect, actual)                                           \
	do {                                                                    \
		long long e_ = (long long)(expect), a_ = (long long)(actual);   \
		if (e_ != a_)                                                   \
			TEST_FAIL("%s: expected %lld, got %lld", #actual, e_, a_); \
	} while (0)

#define EXPECT_EQ_STR(expect, actual)                                           \
	do {                                                                    \
		const char *e_ = (expect), *a_ = (actual);                      \
		if (!a_ || strcmp(e_, a_) != 0)                                 \
			TEST_FAIL("%s: expected \"%s\", got \"%s\"", #actual,   \
				  e_, a_ ? a_ : "(null)");                      \
	} while (0)

#define EXPECT_CONTAINS(needle, haystack)                                       \
	do {                                                                    \
		const char *n_ = (needle), *h_ = (haystack);                    \
		if (!h_ || !strstr(h_, n_))                                     \
			TEST_FAIL("%s: \"%s\" does not contain \"%s\"",         \
				  #haystack, h_ ? h_ : "(null)", n_);           \
	} while (0)

#define CHECK_NOT_NULL(p)                                                       \
	do {                                                                    \
		if ((p) == NULL) {                                              \
			TEST_FAIL("%s is NULL", #p);                            \
			return;                                                 \
		}                                                               \
	} while (0)

/* The whole of file dir/name ("" when empty), NULL when it cannot be
 * opened; the caller frees it. */
static inline char *tr_test_slurp(const char *dir, const char *name)
{
	char path[4096], *buf = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	if (getdelim(&buf, &cap, '\0', f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

#define TEST_MAIN_END()                                                         \
	do {                                                                    \
		printf("1..%d\n", tr_test_count);                               \
		return tr_test_failures ? 1 : 0;                                \
	} while (0)

#endif

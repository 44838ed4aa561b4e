/* The observed-PID registry tells each subscriber once per new process. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "../../core/session/pids.h"
#include "../testing.h"

static int calls;
static pid_t last;
/* The registry under test, made anew by reset(). */
static struct tr_pids *r;

static void reset(void)
{
	tr_pids_free(r);
	r = tr_pids_new();
}

static void count(void *arg, pid_t pid)
{
	(void)arg;
	calls++;
	last = pid;
}

DEF_TEST(each_pid_is_new_once_and_subscribers_hear_it)
{
	pid_t out[4];

	reset();
	EXPECT_EQ_INT(0, tr_pids_subscribe(r, count, NULL));
	EXPECT_EQ_INT(1, tr_pids_observe(r, 100));
	EXPECT_EQ_INT(0, tr_pids_observe(r, 100));
	EXPECT_EQ_INT(1, tr_pids_observe(r, 7));
	EXPECT_EQ_INT(0, tr_pids_observe(r, 0));
	EXPECT_EQ_INT(2, calls);
	EXPECT_EQ_INT(7, last);
	EXPECT_EQ_INT(2, (int)tr_pids_list(r, out, 4));
	EXPECT_EQ_INT(100, out[0]);
	EXPECT_EQ_INT(7, out[1]);
}

DEF_TEST(the_table_grows_past_its_first_size)
{
	pid_t *all = calloc(5000, sizeof(*all));
	size_t n;

	CHECK_NOT_NULL(all);
	reset();
	for (pid_t p = 1; p <= 5000; p++)
		tr_pids_observe(r, p);
	for (pid_t p = 1; p <= 5000; p++)
		EXPECT_EQ_INT(0, tr_pids_observe(r, p));
	n = tr_pids_list(r, all, 5000);
	EXPECT_EQ_INT(5000, (int)n);
	EXPECT_EQ_INT(4321, all[4320]);
	free(all);
	reset();
}

DEF_TEST(an_unsubscribed_callback_hears_nothing_more)
{
	int other;

	reset();
	calls = 0;
	EXPECT_EQ_INT(0, tr_pids_subscribe(r, count, NULL));
	EXPECT_EQ_INT(0, tr_pids_subscribe(r, count, &other));
	EXPECT_EQ_INT(1, tr_pids_observe(r, 10));
	EXPECT_EQ_INT(2, calls);
	/* The same callback with another argument is another subscription. */
	EXPECT_EQ_INT(0, tr_pids_unsubscribe(r, count, NULL));
	EXPECT_EQ_INT(-ENOENT, tr_pids_unsubscribe(r, count, NULL));
	EXPECT_EQ_INT(1, tr_pids_observe(r, 11));
	EXPECT_EQ_INT(3, calls);
	EXPECT_EQ_INT(0, tr_pids_unsubscribe(r, count, &other));
	EXPECT_EQ_INT(1, tr_pids_observe(r, 12));
	EXPECT_EQ_INT(3, calls);
	reset();
}

/* Each session has its own (a run context, not a global): what one saw
 * the other did not. */
DEF_TEST(two_registries_are_apart)
{
	struct tr_pids *other = tr_pids_new();

	reset();
	CHECK_NOT_NULL(r);
	CHECK_NOT_NULL(other);
	EXPECT_EQ_INT(1, tr_pids_observe(r, 41));
	EXPECT_EQ_INT(0, tr_pids_known(other, 41));
	EXPECT_EQ_INT(1, tr_pids_observe(other, 41));
	EXPECT_EQ_INT(1, (int)tr_pids_count(other));
	tr_pids_free(other);
	EXPECT_EQ_INT(1, tr_pids_known(r, 41));
}

int main(void)
{
	RUN_TEST(each_pid_is_new_once_and_subscribers_hear_it);
	RUN_TEST(the_table_grows_past_its_first_size);
	RUN_TEST(an_unsubscribed_callback_hears_nothing_more);
	RUN_TEST(two_registries_are_apart);
	tr_pids_free(r);
	TEST_MAIN_END();
}

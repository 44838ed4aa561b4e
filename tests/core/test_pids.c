/* The observed-PID registry tells each subscriber once per new process. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "../../core/pids.h"
#include "../testing.h"

static int calls;
static pid_t last;

static void count(void *arg, pid_t pid)
{
	(void)arg;
	calls++;
	last = pid;
}

DEF_TEST(each_pid_is_new_once_and_subscribers_hear_it)
{
	pid_t out[4];

	tr_pids_reset();
	EXPECT_EQ_INT(0, tr_pids_subscribe(count, NULL));
	EXPECT_EQ_INT(1, tr_pids_observe(100));
	EXPECT_EQ_INT(0, tr_pids_observe(100));
	EXPECT_EQ_INT(1, tr_pids_observe(7));
	EXPECT_EQ_INT(0, tr_pids_observe(0));
	EXPECT_EQ_INT(2, calls);
	EXPECT_EQ_INT(7, last);
	EXPECT_EQ_INT(2, (int)tr_pids_list(out, 4));
	EXPECT_EQ_INT(100, out[0]);
	EXPECT_EQ_INT(7, out[1]);
}

DEF_TEST(the_table_grows_past_its_first_size)
{
	pid_t *all = calloc(5000, sizeof(*all));
	size_t n;

	CHECK_NOT_NULL(all);
	tr_pids_reset();
	for (pid_t p = 1; p <= 5000; p++)
		tr_pids_observe(p);
	for (pid_t p = 1; p <= 5000; p++)
		EXPECT_EQ_INT(0, tr_pids_observe(p));
	n = tr_pids_list(all, 5000);
	EXPECT_EQ_INT(5000, (int)n);
	EXPECT_EQ_INT(4321, all[4320]);
	free(all);
	tr_pids_reset();
}

DEF_TEST(an_unsubscribed_callback_hears_nothing_more)
{
	int other;

	tr_pids_reset();
	calls = 0;
	EXPECT_EQ_INT(0, tr_pids_subscribe(count, NULL));
	EXPECT_EQ_INT(0, tr_pids_subscribe(count, &other));
	EXPECT_EQ_INT(1, tr_pids_observe(10));
	EXPECT_EQ_INT(2, calls);
	/* The same callback with another argument is another subscription. */
	EXPECT_EQ_INT(0, tr_pids_unsubscribe(count, NULL));
	EXPECT_EQ_INT(-ENOENT, tr_pids_unsubscribe(count, NULL));
	EXPECT_EQ_INT(1, tr_pids_observe(11));
	EXPECT_EQ_INT(3, calls);
	EXPECT_EQ_INT(0, tr_pids_unsubscribe(count, &other));
	EXPECT_EQ_INT(1, tr_pids_observe(12));
	EXPECT_EQ_INT(3, calls);
	tr_pids_reset();
}

int main(void)
{
	RUN_TEST(each_pid_is_new_once_and_subscribers_hear_it);
	RUN_TEST(the_table_grows_past_its_first_size);
	RUN_TEST(an_unsubscribed_callback_hears_nothing_more);
	TEST_MAIN_END();
}

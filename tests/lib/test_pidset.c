/* The PID set: membership, insertion order, growth. */
#include "config.h"

#include <errno.h>

#include "lib/pidset.h"
#include "../testing.h"

DEF_TEST(adds_each_pid_once_in_order)
{
	struct tr_pid_set s = { 0 };

	EXPECT_EQ_INT(0, tr_pid_set_has(&s, 42));
	EXPECT_EQ_INT(1, tr_pid_set_add(&s, 42));
	EXPECT_EQ_INT(1, tr_pid_set_add(&s, 7));
	EXPECT_EQ_INT(0, tr_pid_set_add(&s, 42));
	EXPECT_EQ_INT(1, tr_pid_set_has(&s, 42));
	EXPECT_EQ_INT(1, tr_pid_set_has(&s, 7));
	EXPECT_EQ_INT(0, tr_pid_set_has(&s, 8));
	EXPECT_EQ_INT(2, s.n);
	EXPECT_EQ_INT(42, s.pids[0]);
	EXPECT_EQ_INT(7, s.pids[1]);
	tr_pid_set_free(&s);
	EXPECT_EQ_INT(0, s.n);
	EXPECT_EQ_INT(0, tr_pid_set_has(&s, 42));
}

DEF_TEST(zero_and_negative_are_not_pids)
{
	struct tr_pid_set s = { 0 };

	EXPECT_EQ_INT(0, tr_pid_set_add(&s, 0));
	EXPECT_EQ_INT(0, tr_pid_set_add(&s, -1));
	EXPECT_EQ_INT(0, s.n);
	EXPECT_EQ_INT(0, tr_pid_set_has(&s, 0));
	tr_pid_set_free(&s);
}

DEF_TEST(keeps_order_and_membership_while_growing)
{
	struct tr_pid_set s = { 0 };
	int ok = 1;

	/* Descending and with a stride, so hashes collide and wrap. */
	for (pid_t pid = 200000; pid > 0; pid -= 7)
		if (tr_pid_set_add(&s, pid) != 1)
			ok = 0;
	EXPECT_TRUE(ok);
	EXPECT_EQ_INT((200000 + 6) / 7, s.n);
	for (size_t i = 0; i < s.n; i++)
		if (s.pids[i] != 200000 - 7 * (pid_t)i || !tr_pid_set_has(&s, s.pids[i]))
			ok = 0;
	EXPECT_TRUE(ok);
	EXPECT_EQ_INT(0, tr_pid_set_has(&s, 199999));
	EXPECT_EQ_INT(0, tr_pid_set_add(&s, 200000));
	tr_pid_set_free(&s);
}

DEF_TEST(find_gives_the_position_in_arrival_order)
{
	struct tr_pid_set s = { 0 };

	EXPECT_EQ_INT(-1, tr_pid_set_find(&s, 5));
	for (pid_t pid = 1000; pid < 3000; pid++)
		tr_pid_set_add(&s, pid);
	EXPECT_EQ_INT(0, tr_pid_set_find(&s, 1000));
	EXPECT_EQ_INT(1234, tr_pid_set_find(&s, 2234));
	EXPECT_EQ_INT(1999, tr_pid_set_find(&s, 2999));
	EXPECT_EQ_INT(-1, tr_pid_set_find(&s, 999));
	EXPECT_EQ_INT(-1, tr_pid_set_find(&s, 0));
	tr_pid_set_free(&s);
}

int main(void)
{
	RUN_TEST(adds_each_pid_once_in_order);
	RUN_TEST(zero_and_negative_are_not_pids);
	RUN_TEST(keeps_order_and_membership_while_growing);
	RUN_TEST(find_gives_the_position_in_arrival_order);
	TEST_MAIN_END();
}

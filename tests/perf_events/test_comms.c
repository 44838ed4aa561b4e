/* Thread names over time (comms.c), as the conversion asks for them: in
 * one go after the whole file, or step by step while perf.data grows. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comms.h"
#include "testing.h"

static const char *name_at(struct comms *c, pid_t tid, uint64_t time)
{
	const char *n = comms_at(c, tid, time);

	return n ? n : "(none)";
}

DEF_TEST(a_thread_has_the_name_of_its_time)
{
	struct comms *c = comms_new();

	CHECK_NOT_NULL(c);
	EXPECT_EQ_INT(0, comms_add_comm(c, 10, 100, "sh", 2));
	EXPECT_EQ_INT(0, comms_add_comm(c, 10, 300, "python3", 7));
	EXPECT_EQ_INT(0, comms_finish(c));
	EXPECT_EQ_STR("sh", name_at(c, 10, 100));
	EXPECT_EQ_STR("sh", name_at(c, 10, 299));
	EXPECT_EQ_STR("python3", name_at(c, 10, 300));
	/* Before its first name: that name, as perf report says it. */
	EXPECT_EQ_STR("sh", name_at(c, 10, 5));
	EXPECT_EQ_STR("(none)", name_at(c, 11, 100));
	comms_free(c);
}

DEF_TEST(a_fork_takes_the_parents_name_of_that_moment)
{
	struct comms *c = comms_new();

	CHECK_NOT_NULL(c);
	EXPECT_EQ_INT(0, comms_add_comm(c, 10, 100, "make", 4));
	EXPECT_EQ_INT(0, comms_add_fork(c, 11, 10, 200));
	EXPECT_EQ_INT(0, comms_add_comm(c, 10, 300, "make-renamed", 12));
	EXPECT_EQ_INT(0, comms_add_fork(c, 12, 10, 400));
	EXPECT_EQ_INT(0, comms_finish(c));
	EXPECT_EQ_STR("make", name_at(c, 11, 250));
	EXPECT_EQ_STR("make-renamed", name_at(c, 12, 450));
	comms_free(c);
}

DEF_TEST(records_out_of_time_order_are_resolved_in_time_order)
{
	struct comms *c = comms_new();

	CHECK_NOT_NULL(c);
	/* Another CPU's batch came first in the file: the fork, then the
	 * parent's names. */
	EXPECT_EQ_INT(0, comms_add_fork(c, 21, 20, 250));
	EXPECT_EQ_INT(0, comms_add_comm(c, 20, 300, "later", 5));
	EXPECT_EQ_INT(0, comms_add_comm(c, 20, 100, "first", 5));
	EXPECT_EQ_INT(0, comms_finish(c));
	EXPECT_EQ_STR("first", name_at(c, 21, 260));
	EXPECT_EQ_STR("later", name_at(c, 20, 301));
	comms_free(c);
}

DEF_TEST(a_fork_whose_parent_is_named_in_a_later_step_gets_that_name)
{
	struct comms *c = comms_new();

	CHECK_NOT_NULL(c);
	EXPECT_EQ_INT(0, comms_add_fork(c, 31, 30, 500));
	EXPECT_EQ_INT(0, comms_finish(c));
	EXPECT_EQ_STR("(none)", name_at(c, 31, 600));
	EXPECT_EQ_INT(0, comms_add_comm(c, 30, 400, "server", 6));
	EXPECT_EQ_INT(0, comms_finish(c));
	EXPECT_EQ_STR("server", name_at(c, 31, 600));
	comms_free(c);
}

DEF_TEST(names_are_sanitized_and_cut_as_the_kernel_cuts_them)
{
	struct comms *c = comms_new();

	CHECK_NOT_NULL(c);
	EXPECT_EQ_INT(0, comms_add_comm(c, 40, 1, "a\nb", 3));
	EXPECT_EQ_INT(0, comms_add_comm(c, 41, 1, "a-very-long-thread-name", 23));
	EXPECT_EQ_INT(0, comms_finish(c));
	EXPECT_TRUE(!strchr(name_at(c, 40, 1), '\n'));
	EXPECT_EQ_INT(15, (long long)strlen(name_at(c, 41, 1)));
	comms_free(c);
}

/* What a conversion while collecting sees (records of each step added,
 * then comms_finish) is what a conversion of the whole file sees. */
DEF_TEST(step_by_step_is_the_same_as_all_at_once)
{
	struct comms *whole = comms_new(), *steps = comms_new();
	enum { N = 20000, TIDS = 300 };
	unsigned seed = 12345;

	CHECK_NOT_NULL(whole);
	CHECK_NOT_NULL(steps);
	for (int i = 0; i < N; i++) {
		pid_t tid = (pid_t)(rand_r(&seed) % TIDS) + 1;
		/* Mostly in time order, sometimes a little back (another CPU). */
		uint64_t time = (uint64_t)i * 10 - (rand_r(&seed) % 4 == 0 ? rand_r(&seed) % 30 : 0);
		char name[16];
		int len = snprintf(name, sizeof(name), "t%d-%d", (int)tid, i % 7);

		if (rand_r(&seed) % 3 == 0) {
			pid_t parent = (pid_t)(rand_r(&seed) % TIDS) + 1;

			EXPECT_EQ_INT(0, comms_add_fork(whole, tid, parent, time));
			EXPECT_EQ_INT(0, comms_add_fork(steps, tid, parent, time));
		} else {
			EXPECT_EQ_INT(0, comms_add_comm(whole, tid, time, name, (size_t)len));
			EXPECT_EQ_INT(0, comms_add_comm(steps, tid, time, name, (size_t)len));
		}
		if (i % 500 == 499)
			EXPECT_EQ_INT(0, comms_finish(steps));
	}
	EXPECT_EQ_INT(0, comms_finish(steps));
	EXPECT_EQ_INT(0, comms_finish(whole));
	for (pid_t tid = 1; tid <= TIDS; tid++) {
		for (uint64_t time = 0; time < (uint64_t)N * 10; time += 997) {
			const char *a = name_at(whole, tid, time), *b = name_at(steps, tid, time);

			if (strcmp(a, b) != 0) {
				TEST_FAIL("tid %d at %llu: %s at once, %s in steps", (int)tid,
					  (unsigned long long)time, a, b);
				tid = TIDS;
				break;
			}
		}
	}
	comms_free(whole);
	comms_free(steps);
}

int main(void)
{
	RUN_TEST(a_thread_has_the_name_of_its_time);
	RUN_TEST(a_fork_takes_the_parents_name_of_that_moment);
	RUN_TEST(records_out_of_time_order_are_resolved_in_time_order);
	RUN_TEST(a_fork_whose_parent_is_named_in_a_later_step_gets_that_name);
	RUN_TEST(names_are_sanitized_and_cut_as_the_kernel_cuts_them);
	RUN_TEST(step_by_step_is_the_same_as_all_at_once);
	TEST_MAIN_END();
}

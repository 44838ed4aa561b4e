/* perf_events' number formatting for perf.data.txt (no root): the sample
 * header's PID and TID as printf's %5d and %-5d would write them, since
 * readers (PerfView's TraceEvent above all) parse that layout exactly. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "textbuf.h"
#include "testing.h"

static void expect_like_printf(int v, int width, int left)
{
	char mine[64], theirs[64], *end;

	end = fmt_int(mine, v, width, left);
	*end = '\0';
	snprintf(theirs, sizeof(theirs), left ? "%-*d" : "%*d", width, v);
	EXPECT_EQ_STR(theirs, mine);
}

DEF_TEST(right_aligned_numbers_are_printf_s)
{
	static const int values[] = { 0, 1, 42, 99999, 123456, -1, -42, -9999, -12345, -2147483647 };

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		expect_like_printf(values[i], 5, 0);
}

DEF_TEST(left_aligned_numbers_are_printf_s)
{
	static const int values[] = { 0, 7, 99999, 123456, -1, -4242, -123456 };

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		expect_like_printf(values[i], 5, 1);
}

/* The header of a sample taken in do_exit, which PerfView failed on when
 * the sign came before the padding. */
DEF_TEST(the_pid_of_an_exiting_task_keeps_its_sign_next_to_its_digits)
{
	char buf[32], *end = fmt_int(buf, -1, 5, 0);

	*end = '\0';
	EXPECT_EQ_STR("   -1", buf);
}

int main(void)
{
	RUN_TEST(right_aligned_numbers_are_printf_s);
	RUN_TEST(left_aligned_numbers_are_printf_s);
	RUN_TEST(the_pid_of_an_exiting_task_keeps_its_sign_next_to_its_digits);
	TEST_MAIN_END();
}

/* Off-CPU folded lines of the ebpf backend, built from frame addresses
 * (summing and writing them is lib/folded.c's, tests/lib/test_folded.c). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "testing.h"

/* A symbolizer stand-in: addresses name themselves. */
static void fake_frame(void *arg, pid_t pid, uint64_t addr, int kernel, char *buf, size_t len)
{
	(void)arg;
	(void)pid;
	if (addr == 0xb0f)
		snprintf(buf, len, "bpf_prog_6896d07dd3e1383c_offcpu_switch");
	else if (addr == 0xb1f)
		snprintf(buf, len, "bpf_trace_run4");
	else if (addr == 0xbad)
		snprintf(buf, len, "operator;weird\nname");
	else if (addr & 0x10000) /* in no known object, as fr_name names it */
		snprintf(buf, len, "[unknown]%s", kernel ? "_[k]" : "");
	else
		snprintf(buf, len, "%s%" PRIx64, kernel ? "k" : "u", addr);
}

DEF_TEST(line_is_process_thread_then_user_outer_to_inner_then_kernel)
{
	uint64_t u[] = { 0x1, 0x2, 0x3 }; /* innermost first, as the stack map gives them */
	uint64_t k[] = { 0xb0f, 0xb1f, 0xa1, 0xa2 };
	uint64_t k_anon[] = { 0xfff, 0xb1f, 0xa1 }; /* the BPF program without a name */
	char line[256];
	int n = fd_build_line(line, sizeof(line), "app", 42, "worker", 43, u, 3, k, 4, 0, 0,
			      fake_frame, NULL, NULL);

	EXPECT_TRUE(n > 0);
	EXPECT_EQ_STR("app-42;worker-43;u3;u2;u1;ka2;ka1", line);
	fd_build_line(line, sizeof(line), "app", 42, "worker", 43, NULL, 0, k_anon, 3, 0, 0,
		      fake_frame, NULL, NULL);
	EXPECT_EQ_STR("app-42;worker-43;ka1", line);
}

DEF_TEST(lost_stacks_are_shown_not_hidden)
{
	uint64_t k[] = { 0xa1 };
	char line[256];

	fd_build_line(line, sizeof(line), "app", 42, "worker", 43, NULL, 0, k, 1, 1, 0, fake_frame,
		      NULL, NULL);
	EXPECT_EQ_STR("app-42;worker-43;[user stack lost];ka1", line);
	fd_build_line(line, sizeof(line), "app", 42, "worker", 43, NULL, 0, NULL, 0, 1, 1, fake_frame,
		      NULL, NULL);
	EXPECT_EQ_STR("app-42;worker-43;[user stack lost];[kernel stack lost]", line);
}

DEF_TEST(names_cannot_break_the_format)
{
	uint64_t u[] = { 0xbad };
	char line[256];

	fd_build_line(line, sizeof(line), "we;ird", 7, "t\n", 8, u, 1, NULL, 0, 0, 0, fake_frame, NULL,
		      NULL);
	/* The one rule of lib/sanitize.h: the newline becomes "?". */
	EXPECT_EQ_STR("we:ird-7;t?-8;operator:weird?name", line);
	fd_build_line(line, sizeof(line), "", 7, "", 8, NULL, 0, NULL, 0, 0, 0, fake_frame, NULL, NULL);
	EXPECT_EQ_STR("[unknown]-7;[unknown]-8", line);
}

DEF_TEST(runs_of_frames_in_no_object_become_one_unknown_frame)
{
	/* Innermost first: u1, a run of three, u2, a single one, u3. */
	uint64_t u[] = { 0x1, 0x10001, 0x10002, 0x10003, 0x2, 0x10004, 0x3 };
	uint64_t k[] = { 0x10005, 0x10006, 0xa1 };
	uint64_t folded_away = 0;
	char line[256];

	EXPECT_TRUE(fd_build_line(line, sizeof(line), "app", 42, "worker", 43, u, 7, k, 3, 0, 0,
				  fake_frame, NULL, &folded_away) > 0);
	EXPECT_EQ_STR("app-42;worker-43;u3;[unknown];u2;[unknown];u1;ka1;[unknown]_[k]", line);
	EXPECT_EQ_INT(3, folded_away);
	/* Without a counter, the same line. */
	EXPECT_TRUE(fd_build_line(line, sizeof(line), "app", 42, "worker", 43, u, 7, k, 3, 0, 0,
				  fake_frame, NULL, NULL) > 0);
	EXPECT_EQ_STR("app-42;worker-43;u3;[unknown];u2;[unknown];u1;ka1;[unknown]_[k]", line);
}

DEF_TEST(too_long_a_line_is_refused)
{
	uint64_t u[] = { 0x1, 0x2, 0x3 };
	char line[8];

	EXPECT_EQ_INT(-ENOSPC, fd_build_line(line, sizeof(line), "app", 1, "t", 2, u, 3, NULL, 0, 0, 0,
					     fake_frame, NULL, NULL));
}

int main(void)
{
	RUN_TEST(line_is_process_thread_then_user_outer_to_inner_then_kernel);
	RUN_TEST(lost_stacks_are_shown_not_hidden);
	RUN_TEST(names_cannot_break_the_format);
	RUN_TEST(runs_of_frames_in_no_object_become_one_unknown_frame);
	RUN_TEST(too_long_a_line_is_refused);
	TEST_MAIN_END();
}

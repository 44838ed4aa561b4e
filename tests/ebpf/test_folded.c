/* Folded stacks of the ebpf backend: line building, summing, writing, and
 * the wall-clock merge of perf_events' on-CPU samples. */
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
		snprintf(buf, len, "0x%" PRIx64 "%s", addr, kernel ? "_[k]" : "");
	else
		snprintf(buf, len, "%s%" PRIx64, kernel ? "k" : "u", addr);
}

static char *written(const struct fd_stacks *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (fd_stacks_write(s, f) < 0) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

DEF_TEST(line_is_process_then_user_outer_to_inner_then_kernel)
{
	uint64_t u[] = { 0x1, 0x2, 0x3 }; /* innermost first, as the stack map gives them */
	uint64_t k[] = { 0xb0f, 0xb1f, 0xa1, 0xa2 };
	uint64_t k_anon[] = { 0xfff, 0xb1f, 0xa1 }; /* the BPF program without a name */
	char line[256];
	int n = fd_build_line(line, sizeof(line), "app", 42, u, 3, k, 4, 0, 0, fake_frame, NULL, NULL);

	EXPECT_TRUE(n > 0);
	EXPECT_EQ_STR("app;u3;u2;u1;ka2;ka1", line);
	fd_build_line(line, sizeof(line), "app", 42, NULL, 0, k_anon, 3, 0, 0, fake_frame, NULL, NULL);
	EXPECT_EQ_STR("app;ka1", line);
}

DEF_TEST(lost_stacks_are_shown_not_hidden)
{
	uint64_t k[] = { 0xa1 };
	char line[256];

	fd_build_line(line, sizeof(line), "app", 42, NULL, 0, k, 1, 1, 0, fake_frame, NULL, NULL);
	EXPECT_EQ_STR("app;[user stack lost];ka1", line);
	fd_build_line(line, sizeof(line), "app", 42, NULL, 0, NULL, 0, 1, 1, fake_frame, NULL, NULL);
	EXPECT_EQ_STR("app;[user stack lost];[kernel stack lost]", line);
}

DEF_TEST(names_cannot_break_the_format)
{
	uint64_t u[] = { 0xbad };
	char line[256];

	fd_build_line(line, sizeof(line), "we;ird", 7, u, 1, NULL, 0, 0, 0, fake_frame, NULL, NULL);
	/* The one rule of lib/sanitize.h: the newline becomes "?". */
	EXPECT_EQ_STR("we:ird;operator:weird?name", line);
	fd_build_line(line, sizeof(line), "", 7, NULL, 0, NULL, 0, 0, 0, fake_frame, NULL, NULL);
	EXPECT_EQ_STR("[pid 7]", line);
}

DEF_TEST(runs_of_frames_in_no_object_become_one_unknown_frame)
{
	/* Innermost first: u1, a run of three, u2, a single one, u3. */
	uint64_t u[] = { 0x1, 0x10001, 0x10002, 0x10003, 0x2, 0x10004, 0x3 };
	uint64_t k[] = { 0x10005, 0x10006, 0xa1 };
	uint64_t folded_away = 0;
	char line[256];

	EXPECT_TRUE(fd_build_line(line, sizeof(line), "app", 42, u, 7, k, 3, 0, 0, fake_frame, NULL,
				  &folded_away) > 0);
	EXPECT_EQ_STR("app;u3;0x10004;u2;[unknown];u1;ka1;[unknown]_[k]", line);
	EXPECT_EQ_INT(3, folded_away);
	/* Without a counter, the same line. */
	EXPECT_TRUE(fd_build_line(line, sizeof(line), "app", 42, u, 7, k, 3, 0, 0, fake_frame, NULL,
				  NULL) > 0);
	EXPECT_EQ_STR("app;u3;0x10004;u2;[unknown];u1;ka1;[unknown]_[k]", line);
}

DEF_TEST(too_long_a_line_is_refused)
{
	uint64_t u[] = { 0x1, 0x2, 0x3 };
	char line[8];

	EXPECT_EQ_INT(-ENOSPC, fd_build_line(line, sizeof(line), "app", 1, u, 3, NULL, 0, 0, 0,
					     fake_frame, NULL, NULL));
}

DEF_TEST(identical_lines_are_summed_and_written_sorted_in_microseconds)
{
	struct fd_stacks *s = fd_stacks_new();
	char *out;

	CHECK_NOT_NULL(s);
	EXPECT_EQ_INT(0, fd_stacks_add(s, "b;x", 1500000));
	EXPECT_EQ_INT(0, fd_stacks_add(s, "a;y", 2000));
	EXPECT_EQ_INT(0, fd_stacks_add(s, "b;x", 500000));
	EXPECT_EQ_INT(0, fd_stacks_add(s, "c;tiny", 400)); /* rounds to 0 us: left out */
	EXPECT_EQ_INT(3, fd_stacks_count(s));
	out = written(s);
	EXPECT_EQ_STR("a;y 2\nb;x 2000\n", out);
	free(out);
	fd_stacks_free(s);
}

DEF_TEST(many_lines_survive_growth)
{
	struct fd_stacks *s = fd_stacks_new();
	char line[32];

	CHECK_NOT_NULL(s);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5000; i++) {
			snprintf(line, sizeof(line), "p;f%d", i);
			EXPECT_EQ_INT(0, fd_stacks_add(s, line, 1000));
		}
	EXPECT_EQ_INT(5000, fd_stacks_count(s));
	fd_stacks_free(s);
}

static int only_42(void *arg, pid_t pid)
{
	(void)arg;
	return pid == 42;
}

DEF_TEST(wall_merge_converts_samples_filters_pids_and_marks)
{
	const char *cpu = "app-42;main;compute 3\n"
			  "other-77;main;spin 10\n"
			  "app;main;nopid 1\n"
			  "# a comment 5\n"
			  "garbage\n"
			  "app-42;main;compute 1\n";
	FILE *in = fmemopen((void *)cpu, strlen(cpu), "r");
	struct fd_stacks *off = fd_stacks_new(), *wall = fd_stacks_new();
	char *out;

	CHECK_NOT_NULL(in);
	CHECK_NOT_NULL(off);
	CHECK_NOT_NULL(wall);
	/* 100 Hz: a sample is 10 ms. */
	EXPECT_EQ_INT(3, fd_merge_oncpu(wall, in, 10000000, only_42, NULL));
	fclose(in);
	fd_stacks_add(off, "app;main;read;pipe_read_[k]", 250000000);
	EXPECT_EQ_INT(0, fd_stacks_add_marked(wall, off, FD_OFFCPU_MARK));
	out = written(wall);
	EXPECT_EQ_STR("app;main;compute;[on-cpu] 40000\n"
		      "app;main;nopid;[on-cpu] 10000\n"
		      "app;main;read;pipe_read_[k];[off-cpu] 250000\n", out);
	free(out);
	fd_stacks_free(off);
	fd_stacks_free(wall);
}

int main(void)
{
	RUN_TEST(line_is_process_then_user_outer_to_inner_then_kernel);
	RUN_TEST(lost_stacks_are_shown_not_hidden);
	RUN_TEST(names_cannot_break_the_format);
	RUN_TEST(runs_of_frames_in_no_object_become_one_unknown_frame);
	RUN_TEST(too_long_a_line_is_refused);
	RUN_TEST(identical_lines_are_summed_and_written_sorted_in_microseconds);
	RUN_TEST(many_lines_survive_growth);
	RUN_TEST(wall_merge_converts_samples_filters_pids_and_marks);
	TEST_MAIN_END();
}

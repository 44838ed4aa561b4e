/* perf script text as tracerig, perf and perfcollect print it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "lib/perfscript.h"
#include "../testing.h"

DEF_TEST(tracerig_header_gives_every_field)
{
	char line[] = "demo-worker  5221/5243  [001] 16146.538102:   10101010 cpu-clock: ";
	struct ps_header h;

	EXPECT_EQ_INT(0, ps_parse_header(line, &h));
	EXPECT_EQ_STR("demo-worker", h.comm);
	EXPECT_EQ_INT(5221, h.pid);
	EXPECT_EQ_INT(5243, h.tid);
	EXPECT_EQ_INT(1, h.cpu);
	EXPECT_TRUE(h.time_ns == 16146538102000ull);
	EXPECT_TRUE(h.period == 10101010);
	EXPECT_EQ_STR("cpu-clock", h.event);
}

DEF_TEST(comm_with_spaces_and_no_period)
{
	/* .NET names its threads like this; perfcollect prints no period. */
	char line[] = "Thread Pool Wor  4242/4250 [000]  5.000001: cpu-clock:  ffff trace";
	struct ps_header h;

	EXPECT_EQ_INT(0, ps_parse_header(line, &h));
	EXPECT_EQ_STR("Thread Pool Wor", h.comm);
	EXPECT_EQ_INT(4242, h.pid);
	EXPECT_EQ_INT(4250, h.tid);
	EXPECT_TRUE(h.period == 0);
	EXPECT_EQ_STR("cpu-clock", h.event);
}

DEF_TEST(pid_only_and_tracepoint_event)
{
	char line[] = "swapper     0 [003] 12.5: sched:sched_switch: prev_comm=x";
	struct ps_header h;

	EXPECT_EQ_INT(0, ps_parse_header(line, &h));
	EXPECT_EQ_STR("swapper", h.comm);
	EXPECT_EQ_INT(0, h.pid);
	EXPECT_EQ_INT(0, h.tid);
	EXPECT_TRUE(h.time_ns == 12500000000ull);
	EXPECT_EQ_STR("sched:sched_switch", h.event);
}

DEF_TEST(not_a_header)
{
	char frame[] = "\t    55f78866bd6c demo_warm (/x)";
	char junk[] = "hello world";
	struct ps_header h;

	EXPECT_EQ_INT(-1, ps_parse_header(frame, &h));
	EXPECT_EQ_INT(-1, ps_parse_header(junk, &h));
}

DEF_TEST(frames_lose_offsets_and_keep_parentheses)
{
	char a[] = "\t    55f78866bd6c demo_hot+0x1c (/work/demo)";
	char b[] = "\t ffffffff8100 std::vector<int>::push_back(int const&) (/usr/lib/libx.so)";
	char c[] = "\t    7f11db1751f5 [unknown] ([unknown])";
	char d[] = "\t    7f11db1751f5 start_thread (/usr/lib/x86_64-linux-gnu/libc.so.6)\n";
	struct ps_frame f;

	EXPECT_EQ_INT(0, ps_parse_frame(a, &f));
	EXPECT_TRUE(f.address == 0x55f78866bd6cull);
	EXPECT_EQ_STR("demo_hot", f.symbol);
	EXPECT_EQ_STR("/work/demo", f.dso);
	EXPECT_EQ_INT(0, ps_parse_frame(b, &f));
	EXPECT_EQ_STR("std::vector<int>::push_back(int const&)", f.symbol);
	EXPECT_EQ_STR("/usr/lib/libx.so", f.dso);
	EXPECT_EQ_INT(0, ps_parse_frame(c, &f));
	EXPECT_EQ_STR("", f.symbol);
	EXPECT_EQ_STR("", f.dso);
	EXPECT_EQ_INT(0, ps_parse_frame(d, &f));
	EXPECT_EQ_STR("/usr/lib/x86_64-linux-gnu/libc.so.6", f.dso);
}

DEF_TEST(not_a_frame)
{
	char a[] = "demo 1/1 [000] 1.0: cpu-clock:";
	char b[] = "\t  zzz demo";
	struct ps_frame f;

	EXPECT_EQ_INT(-1, ps_parse_frame(a, &f));
	EXPECT_EQ_INT(-1, ps_parse_frame(b, &f));
}

int main(void)
{
	RUN_TEST(tracerig_header_gives_every_field);
	RUN_TEST(comm_with_spaces_and_no_period);
	RUN_TEST(pid_only_and_tracepoint_event);
	RUN_TEST(not_a_header);
	RUN_TEST(frames_lose_offsets_and_keep_parentheses);
	RUN_TEST(not_a_frame);
	TEST_MAIN_END();
}

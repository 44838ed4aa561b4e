/* The ebpf backend's kernel stacks start with the tracing machinery's own
 * frames (the BPF program, bpf_trace_run): found by name, left out. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "frames.h"
#include "testing.h"

/* Addresses name themselves, as a symbolizer would name such frames. */
static int frame_name(struct tracerig_ctx *ctx, pid_t pid, uint64_t addr, int kernel,
		      uint64_t time_ns, const char **name, struct tracerig_symbol *sym)
{
	static char buf[64];

	(void)ctx;
	(void)pid;
	(void)kernel;
	(void)time_ns;
	(void)sym;
	if (addr == 0xb0f)
		*name = "bpf_prog_6896d07dd3e1383c_offcpu_switch_[k]";
	else if (addr == 0xb1f)
		*name = "bpf_trace_run4_[k]";
	else if (addr == 0xfff)
		*name = "[unknown]_[k]";
	else {
		snprintf(buf, sizeof(buf), "k%" PRIx64 "_[k]", addr);
		*name = buf;
	}
	return 0;
}

static const struct tracerig_symbol_services symbols = { .frame_name = frame_name };
static const struct tracerig_services svc = { .symbols = &symbols };

DEF_TEST(the_programs_own_frames_are_counted_named_or_not)
{
	uint64_t k[] = { 0xb0f, 0xb1f, 0xa1, 0xa2 };
	uint64_t k_anon[] = { 0xfff, 0xb1f, 0xa1 }; /* the BPF program without a name */
	uint64_t plain[] = { 0xa1, 0xa2 };

	EXPECT_EQ_INT(2, fr_tracing_frames(&svc, NULL, 42, k, 4));
	EXPECT_EQ_INT(2, fr_tracing_frames(&svc, NULL, 42, k_anon, 3));
	EXPECT_EQ_INT(0, fr_tracing_frames(&svc, NULL, 42, plain, 2));
	EXPECT_EQ_INT(0, fr_tracing_frames(&svc, NULL, 42, NULL, 0));
}

DEF_TEST(only_the_machinerys_names_match)
{
	EXPECT_TRUE(fr_is_tracing_frame("bpf_prog_6896d07dd3e1383c_offcpu_switch"));
	EXPECT_TRUE(fr_is_tracing_frame("__traceiter_sched_switch"));
	EXPECT_TRUE(!fr_is_tracing_frame("schedule_[k]"));
	EXPECT_TRUE(!fr_is_tracing_frame("my_bpf_prog_helper"));
}

DEF_TEST(deep_frames_are_the_traced_codes)
{
	/* A name of the machinery past the first few frames is the traced
	 * code's own (a program calling into BPF), and kept. */
	uint64_t k[] = { 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xb1f };

	EXPECT_EQ_INT(0, fr_tracing_frames(&svc, NULL, 42, k, 7));
}

int main(void)
{
	RUN_TEST(the_programs_own_frames_are_counted_named_or_not);
	RUN_TEST(only_the_machinerys_names_match);
	RUN_TEST(deep_frames_are_the_traced_codes);
	TEST_MAIN_END();
}

/* callchain = cfi on a kernel without the walker's helpers
 * (plugins/ebpf/fallback.c): cfi_fallback's refusal says what to do, its
 * fallbacks say what they cost; where the walker runs nothing is said.
 * The probe's result is an argument: on this project's kernels the walker
 * runs, and ebpf/cfi.sh and oncpu.sh record with it. */
#include "config.h"

#include <string.h>

#include "fallback.h"
#include "lib/callchain.h"
#include "testing.h"

#define WHY "callchain = cfi needs a kernel whose BPF programs can call bpf_loop"

DEF_TEST(where_the_walker_runs_cfi_is_kept_and_nothing_said)
{
	char msg[512] = "stale";

	for (int fb = CFI_FALLBACK_REFUSE; fb <= CFI_FALLBACK_DWARF; fb++) {
		EXPECT_EQ_INT(TR_CALLCHAIN_CFI,
			      cfi_fallback_choose(0, "", fb, 0, msg, sizeof(msg)));
		EXPECT_EQ_STR("", msg);
	}
}

DEF_TEST(refuse_says_why_and_which_fallback_to_set)
{
	char msg[512];

	EXPECT_EQ_INT(-1, cfi_fallback_choose(-95, WHY, CFI_FALLBACK_REFUSE, 0, msg, sizeof(msg)));
	EXPECT_CONTAINS(WHY, msg);
	EXPECT_CONTAINS("set cfi_fallback = dwarf (or fp)", msg);
	/* The sampler cannot take dwarf: fp is the one to set. */
	EXPECT_EQ_INT(-1, cfi_fallback_choose(-95, WHY, CFI_FALLBACK_REFUSE, 1, msg, sizeof(msg)));
	EXPECT_CONTAINS("set cfi_fallback = fp to record", msg);
}

DEF_TEST(fallbacks_say_what_they_cost)
{
	char msg[512];

	EXPECT_EQ_INT(TR_CALLCHAIN_FP,
		      cfi_fallback_choose(-95, WHY, CFI_FALLBACK_FP, 1, msg, sizeof(msg)));
	EXPECT_CONTAINS(WHY, msg);
	EXPECT_CONTAINS("falling back to callchain = fp", msg);
	EXPECT_CONTAINS("stop at the first frame built without frame pointers", msg);
	EXPECT_EQ_INT(TR_CALLCHAIN_DWARF,
		      cfi_fallback_choose(-95, WHY, CFI_FALLBACK_DWARF, 0, msg, sizeof(msg)));
	EXPECT_CONTAINS("falling back to callchain = dwarf", msg);
}

DEF_TEST(dwarf_is_never_chosen_for_the_sampler)
{
	char msg[512];

	/* validate refuses the profile; were it to get here, a refusal. */
	EXPECT_EQ_INT(-1, cfi_fallback_choose(-95, WHY, CFI_FALLBACK_DWARF, 1, msg, sizeof(msg)));
	EXPECT_CONTAINS("cfi_fallback = fp", msg);
}

int main(void)
{
	RUN_TEST(where_the_walker_runs_cfi_is_kept_and_nothing_said);
	RUN_TEST(refuse_says_why_and_which_fallback_to_set);
	RUN_TEST(fallbacks_say_what_they_cost);
	RUN_TEST(dwarf_is_never_chosen_for_the_sampler);
	TEST_MAIN_END();
}

/* A sample of this very process, taken as the kernel takes one for
 * PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER, for the unwinder's
 * unit tests (tests/lib/test_unwind_fds.c, tests/perf_events/test_unwind.c):
 * getcontext() in test_level_two (called by test_level_one, called by
 * main), the context's registers and a copy of the stack from its stack
 * pointer up.  The sample itself is only where the build can unwind
 * (UW_AVAILABLE: x86_64); elsewhere the tests are skipped whole. */
#ifndef TR_TESTS_STACK_SAMPLE_H
#define TR_TESTS_STACK_SAMPLE_H

#include <stdio.h>

#include "lib/unwind.h"

/* An unwinder's test in a build that cannot unwind: main's whole say. */
__attribute__((unused)) static int stack_sample_skip_all(void)
{
	printf("1..0 # SKIP a build without libdw (or not x86_64) does not unwind\n");
	return 0;
}

#if UW_AVAILABLE

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>
#include <asm/perf_regs.h>

/* Each register perf samples (by its PERF_REG_X86_* number): where a
 * ucontext has it (REG_*; -1: not there, 0) and its place in the
 * unwinder's DWARF order (lib/unwind.h; -1: not one of them). */
__attribute__((unused)) static const struct {
	int greg, dwarf;
} stack_sample_regs[PERF_REG_X86_64_MAX] = {
	[PERF_REG_X86_AX] = { REG_RAX, 0 },  [PERF_REG_X86_DX] = { REG_RDX, 1 },
	[PERF_REG_X86_CX] = { REG_RCX, 2 },  [PERF_REG_X86_BX] = { REG_RBX, 3 },
	[PERF_REG_X86_SI] = { REG_RSI, 4 },  [PERF_REG_X86_DI] = { REG_RDI, 5 },
	[PERF_REG_X86_BP] = { REG_RBP, 6 },  [PERF_REG_X86_SP] = { REG_RSP, UW_REG_SP },
	[PERF_REG_X86_R8] = { REG_R8, 8 },   [PERF_REG_X86_R9] = { REG_R9, 9 },
	[PERF_REG_X86_R10] = { REG_R10, 10 }, [PERF_REG_X86_R11] = { REG_R11, 11 },
	[PERF_REG_X86_R12] = { REG_R12, 12 }, [PERF_REG_X86_R13] = { REG_R13, 13 },
	[PERF_REG_X86_R14] = { REG_R14, 14 }, [PERF_REG_X86_R15] = { REG_R15, 15 },
	[PERF_REG_X86_IP] = { REG_RIP, UW_REG_IP }, [PERF_REG_X86_FLAGS] = { REG_EFL, -1 },
	[PERF_REG_X86_CS] = { -1, -1 },      [PERF_REG_X86_SS] = { -1, -1 },
	[PERF_REG_X86_DS] = { -1, -1 },      [PERF_REG_X86_ES] = { -1, -1 },
	[PERF_REG_X86_FS] = { -1, -1 },      [PERF_REG_X86_GS] = { -1, -1 },
};

/* The context's register `perf` (PERF_REG_X86_*). */
__attribute__((unused)) static uint64_t stack_sample_reg(const ucontext_t *uc, int perf)
{
	int greg = stack_sample_regs[perf].greg;

	return greg < 0 ? 0 : (uint64_t)uc->uc_mcontext.gregs[greg];
}

/* The context's registers in the unwinder's DWARF order. */
__attribute__((unused)) static void stack_sample_dwarf_regs(const ucontext_t *uc,
							    uint64_t regs[UW_N_REGS])
{
	for (int r = 0; r < PERF_REG_X86_64_MAX; r++)
		if (stack_sample_regs[r].dwarf >= 0)
			regs[stack_sample_regs[r].dwarf] = stack_sample_reg(uc, r);
}

/* Where this thread's stack mapping ends: the copy must not run past it. */
__attribute__((unused)) static uint64_t stack_end(uint64_t sp)
{
	unsigned long long start, end;
	char line[512];
	FILE *maps = fopen("/proc/self/maps", "re");
	uint64_t found = sp;

	while (maps && fgets(line, sizeof(line), maps))
		if (sscanf(line, "%llx-%llx", &start, &end) == 2 && sp >= start && sp < end)
			found = end;
	if (maps)
		fclose(maps);
	return found;
}

/* The copy the kernel makes: the callers' frames, redzones and all (a
 * sanitizer would take reading them for an overflow, so it is not
 * instrumented, nor inlined into a caller that is). */
__attribute__((no_sanitize_address, noinline, unused)) static void
copy_stack(uint64_t *to, uint64_t from, size_t size)
{
	const volatile uint64_t *src = (const volatile uint64_t *)(uintptr_t)from;

	for (size_t i = 0; i < size / 8; i++)
		to[i] = src[i];
}

/* Copies the stack of the context's thread from its stack pointer up to
 * `to`: at most `max` bytes, never past the stack's mapping, a multiple of
 * 8.  Returns how many bytes. */
__attribute__((unused)) static uint64_t stack_sample_copy(const ucontext_t *uc, uint64_t *to,
							  uint64_t max)
{
	uint64_t sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
	uint64_t size = stack_end(sp) - sp;

	if (size > max)
		size = max;
	size &= ~7ull;
	copy_stack(to, sp, (size_t)size);
	return size;
}

/* What the test keeps of the context test_level_two got: each test that
 * includes this defines it. */
static void take_sample(const ucontext_t *uc);

/* The sample's frames under main (not inlined: each is a frame of it). */
__attribute__((noinline, unused)) static void test_level_two(void)
{
	ucontext_t uc;

	if (getcontext(&uc) == 0)
		take_sample(&uc);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, unused)) static void test_level_one(void)
{
	test_level_two();
	__asm__ volatile("" ::: "memory");
}

#endif /* UW_AVAILABLE */

#endif

/* A perf sample's user registers and stack copy, read out of the record
 * for the shared unwinder. */
#include "config.h"

#include <errno.h>

#include "unwind.h"

#if UW_AVAILABLE

#include <asm/perf_regs.h>

/* The sampled register `reg` (PERF_REG_X86_*) out of the values present. */
static uint64_t sampled_reg(const uint64_t *values, uint64_t mask, int reg)
{
	return values[__builtin_popcountll(mask & ((1ull << reg) - 1))];
}

/* perf's register order to DWARF's. */
static int take_registers(uint64_t *dwarf_regs, const uint64_t *values, uint64_t mask)
{
	static const int from[UW_N_REGS] = {
		PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,
		PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
		PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
		PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
		PERF_REG_X86_IP,
	};

	for (int i = 0; i < UW_N_REGS; i++) {
		if (!(mask & (1ull << from[i])))
			return -EINVAL;
		dwarf_regs[i] = sampled_reg(values, mask, from[i]);
	}
	return 0;
}

size_t uw_sample(struct unwinder *u, const struct perf_event_attr *attr, pid_t pid, pid_t tid,
		 const uint64_t *p, const uint64_t *end, const uint64_t **ips)
{
	uint64_t abi, mask = attr->sample_regs_user, size = 0, dyn, stack_size = 0;
	uint64_t regs[UW_N_REGS];
	const uint64_t *values;
	const void *stack = NULL;

	*ips = NULL;
	if (!(attr->sample_type & PERF_SAMPLE_REGS_USER) || p >= end)
		return 0;
	/* u64 abi; u64 regs[weight(mask)] when abi != NONE; then u64 size;
	 * char data[size]; u64 dyn_size when size != 0. */
	abi = *p++;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0; /* a kernel thread: no user registers */
	values = p;
	p += __builtin_popcountll(mask);
	if (p > end || abi != PERF_SAMPLE_REGS_ABI_64 || take_registers(regs, values, mask) < 0)
		return 0;
	if ((attr->sample_type & PERF_SAMPLE_STACK_USER) && p < end) {
		size = *p++;
		if (size > (uint64_t)(end - p) * 8 || (size && size / 8 + 1 > (uint64_t)(end - p)))
			size = 0;
		stack = p;
		if (size) {
			dyn = p[size / 8];
			stack_size = dyn < size ? dyn : size;
		}
	}
	return uw_unwind(u, pid, tid, regs, stack, stack_size, ips);
}

#else /* !UW_AVAILABLE: configure refuses callchain = dwarf, nothing unwinds */

size_t uw_sample(struct unwinder *u, const struct perf_event_attr *attr, pid_t pid, pid_t tid,
		 const uint64_t *regs, const uint64_t *end, const uint64_t **ips)
{
	(void)u;
	(void)attr;
	(void)pid;
	(void)tid;
	(void)regs;
	(void)end;
	*ips = NULL;
	return 0;
}

#endif

/* The callchain and dwarf_stack_bytes keys, defined once for every stack
 * source (perf_events' samples, ebpf's off-CPU intervals): the same words
 * mean the same walk wherever a profile writes them, and the choices a
 * source offers are a prefix of one ordered list, so each binds them to
 * the same enum.  What differs is said by the source: what a stack is
 * taken with, which choices it can honour, the largest copy it can take. */
#ifndef TR_LIB_CALLCHAIN_H
#define TR_LIB_CALLCHAIN_H

#include <stdint.h>
#include "tracerig-private/ext.h"

#define TR_CALLCHAIN_STR_(x) #x
#define TR_CALLCHAIN_STR(x) TR_CALLCHAIN_STR_(x)

/* The indexes TRACERIG_KEY_ENUM binds: the order of TR_CALLCHAIN_CHOICES. */
enum tr_callchain { TR_CALLCHAIN_FP, TR_CALLCHAIN_DWARF, TR_CALLCHAIN_CFI, TR_CALLCHAIN_NONE };

/* Every choice, in enum order; a source offers a prefix of it (off-CPU
 * intervals are worth nothing without a user stack, so ebpf stops before
 * none) and refuses at validation what it offers but cannot take
 * (perf_events' samples are the kernel's: no cfi walk of ours there). */
#define TR_CALLCHAIN_CHOICES "fp,dwarf,cfi,none"
#define TR_CALLCHAIN_CHOICES_WITH_STACK "fp,dwarf,cfi"

#define TR_CALLCHAIN_DWARF_UNAVAILABLE                                                \
	"callchain = dwarf is not available in this build (built without libdw from " \
	"elfutils, or not for x86_64): use callchain = fp, or rebuild with libdw-dev installed"
#define TR_CALLCHAIN_CFI_UNAVAILABLE                                                \
	"callchain = cfi is not available in this build (built without libdw from " \
	"elfutils, or not for x86_64): use callchain = fp, or rebuild with libdw-dev installed"

/* The callchain key.  WHEN says when a stack is taken ("with every
 * sample"); MORE is what the source adds (its own choices, where a stack
 * is unwound otherwise), "" for nothing. */
#define TR_CALLCHAIN_KEY(CHOICES, BINDING, WHEN, MORE)                                                       \
	{                                                                                                    \
		.name = "callchain", .type = TRACERIG_KEY_ENUM, .default_value = "fp",                       \
		.choices = CHOICES, BINDING,                                                                 \
		.description =                                                                               \
			"Stacks " WHEN ": fp walks user stacks by frame pointers in the "                    \
			"kernel; dwarf (perf record --call-graph dwarf) copies the user registers and "      \
			"dwarf_stack_bytes of user stack and unwinds them by the objects' CFI while "        \
			"collecting, so that code built without frame pointers (Debian's libc and "          \
			"libraries) shows its callers, going on by frame pointers through code without CFI " \
			"(JIT).  cfi walks user stacks in the kernel by tables compiled from the same CFI, " \
			"without a stack copy (BPF sources only)." MORE                                      \
			"  dwarf needs a build with elfutils' libdw on x86_64: other builds "                \
			"refuse it with a message saying so."                                                \
	}

/* The dwarf_stack_bytes key: MAX is the largest copy the source can take
 * (a multiple of 8, written as a plain number: the description spells
 * it), PER what a copy is taken for, MORE what a bigger copy costs there. */
#define TR_DWARF_STACK_BYTES_KEY(MAX, BINDING, PER, MORE)                                       \
	{                                                                                       \
		.name = "dwarf_stack_bytes", .type = TRACERIG_KEY_INT, .default_value = "8192", \
		.min = 8, .max = MAX, BINDING,                                                  \
		.description =                                                                  \
			"callchain = dwarf: bytes of user stack copied per " PER " (rounded "   \
			"up to 8, at most " TR_CALLCHAIN_STR(                                   \
				MAX) "); deeper stacks are cut where the copy "                 \
				     "ends" MORE                                                \
	}

/* dwarf_stack_bytes as the kernel is asked for it: a multiple of 8, at most
 * MAX (itself a multiple of 8). */
static inline uint32_t tr_dwarf_stack_bytes(long long value, uint32_t max)
{
	uint64_t bytes = ((uint64_t)value + 7) & ~(uint64_t)7;

	return bytes > max ? max : (uint32_t)bytes;
}

#endif

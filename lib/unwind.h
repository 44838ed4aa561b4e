/* callchain = dwarf: the user frames of a thread from its user registers
 * and a copy of the top of its user stack, unwound by the objects' CFI with
 * elfutils' libdwfl, as perf's unwind-libdw does for perf script.  Shared
 * by perf_events (PERF_SAMPLE_REGS_USER / PERF_SAMPLE_STACK_USER samples,
 * plugins/perf_events/unwind.c reads them out of the record) and ebpf (the
 * copies its BPF program takes at switch-out).  Objects come from the
 * core's process model (symbolizer_object).
 *
 * Builds without libdw (or not for x86_64) compile this too: uw_new and
 * uw_objects_new return NULL there, and the plugins refuse
 * callchain = dwarf before they get that far. */
#ifndef TR_LIB_UNWIND_H
#define TR_LIB_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "tracerig-private/ext.h"

/* Whether this build can unwind (libdw, x86_64). */
#if defined(HAVE_LIBDW) && defined(__x86_64__)
#define UW_AVAILABLE 1
#else
#define UW_AVAILABLE 0
#endif

struct unwinder;
/* Objects as unwinders met them (build id, load bias, address range),
 * numbered: one unwinder's frames are checked against another's model by
 * these numbers.  Unwinders in different threads may share them (an
 * unwinder itself is used by one thread at a time). */
struct uw_objects;

struct uw_stats {
	uint64_t samples;   /* samples with user registers and stack */
	uint64_t frames;    /* user frames unwound */
	uint64_t stack_end; /* unwinds that needed stack beyond the copied bytes */
	uint64_t unmapped;  /* unwinds that ended in code no object the model knew
	                     * holds: mapped after its mappings were read (a
	                     * library dlopen()ed a moment ago), or JIT code */
	uint64_t adopted;   /* samples whose frames came from uw_adopt */
	/* Objects closed to keep within the unwinder's share of the
	 * open-files limit (reported again when needed), and opens that
	 * found no descriptor even so (the stack cut there). */
	uint64_t objects_closed;
	uint64_t objects_unopened;
};

/* What one sample's unwinding depended on besides the sample itself: the
 * object (a number of uw_objects, 0: none) found at each address the
 * unwinder looked up, every frame's (after reporting the object there to
 * libdwfl) and any read outside the stack copy.  Another unwinder whose
 * model has the same objects at these addresses finds the same frames:
 * libdwfl's result is a function of the registers, the stack copy and the
 * CFI (and bytes) of those objects, and every process's unwinding state
 * is set up the same way whatever came before. */
struct uw_lookup {
	uint64_t addr;
	uint32_t object;
	uint32_t reported;
};

#define UW_OBJECT_UNCHECKABLE UINT32_MAX /* no build id: never adopted */

struct uw_frames {
	const uint64_t *ips;
	size_t n_ips;
	const struct uw_lookup *lookups;
	size_t n_lookups;
	int stack_end;
	int unmapped;
	int checkable; /* 0: not to be adopted (too many lookups, ...) */
};

struct uw_objects *uw_objects_new(void);
void uw_objects_free(struct uw_objects *o);

/* NULL when out of memory or when the build cannot unwind.  `objects` is
 * shared with the unwinders whose frames this one adopts (NULL: its own). */
struct unwinder *uw_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			struct uw_objects *objects);
void uw_free(struct unwinder *u);
/* x86_64's DWARF registers, in DWARF order: rax, rdx, rcx, rbx, rsi, rdi,
 * rbp, rsp, r8-r15, and the return address (the IP). */
#define UW_N_REGS 17
#define UW_REG_SP 7
#define UW_REG_IP 16
/* perf's default kernel.perf_event_max_stack: the most frames returned. */
#define UW_MAX_FRAMES 127

/* Unwinds thread `tid` of `pid` from its user registers `regs` (DWARF
 * order) and `stack_size` bytes copied from its stack pointer up.  Sets
 * *ips to the user frames, innermost (the IP) first, return addresses
 * moved back into their call; they stay valid until the next call.
 * Returns how many: at least 1 (the IP alone when libdwfl could not
 * start), at most UW_MAX_FRAMES. */
size_t uw_unwind(struct unwinder *u, pid_t pid, pid_t tid, const uint64_t regs[UW_N_REGS],
		 const void *stack, uint64_t stack_size, const uint64_t **ips);
/* The frames of the last uw_unwind and what they depended on; valid until
 * the next call. */
void uw_last(const struct unwinder *u, struct uw_frames *out);
/* Takes frames another unwinder found for a sample of `pid` (sharing this
 * one's uw_objects) when this unwinder's model has the same objects at
 * every address they depended on: then 1, and they count as unwound
 * here.  0: unwind the sample with uw_unwind. */
int uw_adopt(struct unwinder *u, pid_t pid, const struct uw_frames *f);
/* The replayed side-band: an exec or a new mapping over known code makes
 * what was read of the process's objects stale. */
void uw_exec(struct unwinder *u, pid_t pid);
void uw_mmap(struct unwinder *u, pid_t pid, uint64_t start, uint64_t len);
void uw_get_stats(const struct unwinder *u, struct uw_stats *out);

#endif

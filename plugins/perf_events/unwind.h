/* callchain = dwarf: the user frames of a sample that carries the user
 * registers and a copy of the user stack (PERF_SAMPLE_REGS_USER,
 * PERF_SAMPLE_STACK_USER), unwound by the objects' CFI with elfutils'
 * libdwfl, as perf's unwind-libdw does for perf script. */
#ifndef TR_PERF_UNWIND_H
#define TR_PERF_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include <tracerig/plugin.h>

/* Whether this build can unwind (libdw, x86_64). */
#if defined(HAVE_LIBDW) && defined(__x86_64__)
#define UW_AVAILABLE 1
#else
#define UW_AVAILABLE 0
#endif

struct unwinder;
/* Objects as unwinders met them (build id, load bias, address range),
 * numbered: one unwinder's frames are checked against another's model by
 * these numbers.  Used by one thread at a time. */
struct uw_objects;

struct uw_stats {
	uint64_t samples;   /* samples with user registers and stack */
	uint64_t frames;    /* user frames unwound */
	uint64_t stack_end; /* unwinds that needed stack beyond the copied bytes */
	uint64_t adopted;   /* samples whose frames came from uw_adopt */
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
	int checkable; /* 0: not to be adopted (too many lookups, ...) */
};

struct uw_objects *uw_objects_new(void);
void uw_objects_free(struct uw_objects *o);

/* NULL when out of memory or when the build cannot unwind.  `objects` is
 * shared with the unwinders whose frames this one adopts (NULL: its own). */
struct unwinder *uw_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			struct uw_objects *objects);
void uw_free(struct unwinder *u);
/* `regs` points at the sample's PERF_SAMPLE_REGS_USER part (what follows
 * it, PERF_SAMPLE_STACK_USER, is read too), `end` at the record's end.
 * Sets *ips to the user frames, innermost (the sampled user IP) first;
 * they stay valid until the next call.  Returns how many (0: the sample
 * has no user registers, e.g. a kernel thread). */
size_t uw_sample(struct unwinder *u, const struct perf_event_attr *attr, pid_t pid, pid_t tid,
		 const uint64_t *regs, const uint64_t *end, const uint64_t **ips);
/* The frames of the last uw_sample and what they depended on; valid until
 * the next call. */
void uw_last(const struct unwinder *u, struct uw_frames *out);
/* Takes frames another unwinder found for a sample of `pid` (sharing this
 * one's uw_objects) when this unwinder's model has the same objects at
 * every address they depended on: then 1, and they count as unwound
 * here.  0: unwind the sample with uw_sample. */
int uw_adopt(struct unwinder *u, pid_t pid, const struct uw_frames *f);
/* The replayed side-band: an exec or a new mapping over known code makes
 * what was read of the process's objects stale. */
void uw_exec(struct unwinder *u, pid_t pid);
void uw_mmap(struct unwinder *u, pid_t pid, uint64_t start, uint64_t len);
void uw_get_stats(const struct unwinder *u, struct uw_stats *out);

#endif

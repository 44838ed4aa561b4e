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

struct uw_stats {
	uint64_t samples;   /* samples with user registers and stack */
	uint64_t frames;    /* user frames unwound */
	uint64_t stack_end; /* unwinds that needed stack beyond the copied bytes */
};

/* NULL when out of memory or when the build cannot unwind. */
struct unwinder *uw_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx);
void uw_free(struct unwinder *u);
/* `regs` points at the sample's PERF_SAMPLE_REGS_USER part (what follows
 * it, PERF_SAMPLE_STACK_USER, is read too), `end` at the record's end.
 * Sets *ips to the user frames, innermost (the sampled user IP) first;
 * they stay valid until the next call.  Returns how many (0: the sample
 * has no user registers, e.g. a kernel thread). */
size_t uw_sample(struct unwinder *u, const struct perf_event_attr *attr, pid_t pid, pid_t tid,
		 const uint64_t *regs, const uint64_t *end, const uint64_t **ips);
/* The replayed side-band: an exec or a new mapping over known code makes
 * what was read of the process's objects stale. */
void uw_exec(struct unwinder *u, pid_t pid);
void uw_mmap(struct unwinder *u, pid_t pid, uint64_t start, uint64_t len);
void uw_get_stats(const struct unwinder *u, struct uw_stats *out);

#endif

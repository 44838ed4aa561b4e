/* callchain = dwarf for perf_events: the user registers and stack copy of
 * a sample (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER) handed to the
 * shared unwinder (lib/unwind.h). */
#ifndef TR_PERF_UNWIND_H
#define TR_PERF_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "lib/unwind.h"

/* `regs` points at the sample's PERF_SAMPLE_REGS_USER part (what follows
 * it, PERF_SAMPLE_STACK_USER, is read too), `end` at the record's end.
 * Sets *ips to the user frames, innermost (the sampled user IP) first;
 * they stay valid until the next call.  Returns how many (0: the sample
 * has no user registers, e.g. a kernel thread). */
size_t uw_sample(struct unwinder *u, const struct perf_event_attr *attr, pid_t pid, pid_t tid,
		 const uint64_t *regs, const uint64_t *end, const uint64_t **ips);

#endif

/* callchain = dwarf: the intervals the BPF program sent with a copy of
 * their user stack, unwound as they come (on the notification thread,
 * while the processes and their objects are still there) with the shared
 * unwinder (lib/unwind.h) and aggregated by (thread, kernel stack, unwound
 * user stack), so memory grows with distinct stacks, not with intervals. */
#ifndef TR_EBPF_USTACKS_H
#define TR_EBPF_USTACKS_H

#include <stddef.h>
#include <stdint.h>

#include "tracerig-private/ext.h"

#include "collector.h"

struct us_table;

struct us_stats {
	uint64_t unwound;   /* intervals unwound */
	uint64_t cut_short; /* of which the unwinding needed stack beyond the copy */
	uint64_t unmapped;  /* of which the unwinding ended in code of no known object
	                     * (mapped since its process's mappings were read) */
	uint64_t lost;      /* intervals dropped: out of memory */
};

/* -ENOTSUP when this build cannot unwind (no libdw, not x86_64), -ENOMEM. */
int us_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx, size_t depth,
	   struct us_table **out);
void us_free(struct us_table *t);
/* Has the oc_ustack_fn signature.  Call from one thread at a time. */
void us_add(void *table, const struct offcpu_ustack *u);
/* `tgid` exec'd: what the unwinder read of its objects is stale (it
 * reads them again, from the mappings the notification remembered). */
void us_exec(struct us_table *t, uint32_t tgid);
size_t us_count(const struct us_table *t);
/* Entry `i` (below us_count): key.ustack is meaningless, the user frames
 * (innermost first, at most `depth`) are in *ips. */
const struct oc_entry *us_entry(const struct us_table *t, size_t i, const uint64_t **ips,
				size_t *n_ips);
void us_get_stats(const struct us_table *t, struct us_stats *out);

#endif

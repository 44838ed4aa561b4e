/* Records in time order: a stable sort of (time, file offset) pairs. */
#ifndef TR_PERF_TIMESORT_H
#define TR_PERF_TIMESORT_H

#include <stddef.h>
#include <stdint.h>

struct time_ref {
	uint64_t time;
	uint64_t off;
};

/* Sorts v by time; equal times keep their order in v.  0 or -ENOMEM. */
int timesort(struct time_ref *v, size_t n);

#endif

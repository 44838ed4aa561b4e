/* CPU samples as the report counts them, whichever entry they come from
 * (cpu.folded, perf.data.txt): per function the samples where it was the
 * leaf (self) and those where it was on the stack (total, once per sample
 * however deep the recursion), per process the samples and thread names. */
#ifndef TR_REPORT_PROFILE_H
#define TR_REPORT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "counts.h"

/* Event names kept; perf_events records a handful at most. */
#define RP_MAX_EVENTS 8

/* Zero-initialised is empty and ready. */
struct rp_profile {
	struct rp_counts funcs, procs;
	uint64_t samples;
	/* The open sample: its number (from 1), weight, frames counted. */
	uint64_t current, weight;
	size_t frames;
	int in_sample;
	char *events[RP_MAX_EVENTS];
	uint64_t event_samples[RP_MAX_EVENTS];
	size_t n_events;
};

/* Opens `weight` samples of one stack, of thread name `comm` in process
 * `pid` (-1: unknown), ending the open one.  0 or -ENOMEM. */
int rp_profile_begin(struct rp_profile *p, const char *comm, long pid, uint64_t weight);

/* A frame of the open samples, the leaf (where the CPU was) or not; frames
 * outside a sample are ignored.  0 or -ENOMEM. */
int rp_profile_frame(struct rp_profile *p, const char *name, size_t len, int leaf);

/* Ends the open samples: one without frames counts as "[no stack]". */
int rp_profile_end(struct rp_profile *p);

/* Counts the open sample under event name[0..len).  0 or -ENOMEM. */
int rp_profile_event(struct rp_profile *p, const char *name, size_t len);

void rp_profile_free(struct rp_profile *p);

#endif

/* The core's own side-band recording, for sessions in which no source
 * records one (an ebpf-only profile): a PERF_COUNT_SW_DUMMY event on every
 * CPU reporting executable mappings, execs and forks, so the process model
 * knows the libraries a process loaded late and the processes that exited
 * before the end, as perf_events' recording tells it otherwise. */
#ifndef TR_SIDEBAND_H
#define TR_SIDEBAND_H

#include <stddef.h>
#include <stdint.h>
#include "tracerig-private/ext.h"

struct tr_sideband;
struct tr_symbolizer;

struct tr_sideband_counts {
	uint64_t records;    /* records that change an address space */
	uint64_t lost;       /* records the kernel dropped (rings full) */
	uint64_t dropped;    /* records not kept (no memory, disk full) */
	uint64_t remembered; /* processes whose objects were read while alive */
	uint64_t replayed;   /* records fed to the process model */
};

/* Opens the events (disabled).  `t` narrows which processes are followed
 * (NULL or no PIDs and no command: every process); records are kept in an
 * unlinked file in `spill_dir` (NULL: in memory).  Returns 0 or a negative
 * errno with `why` saying what to do. */
int tr_sideband_open(struct tr_sideband **out, struct tr_symbolizer *sym,
		     const struct tracerig_targets *t, const char *spill_dir, char *why,
		     size_t why_len);
/* Enables the events and starts the threads that drain them and read the
 * objects of processes while they are alive. */
int tr_sideband_start(struct tr_sideband *sb);
/* Disables the events and drains what is left.  Idempotent. */
void tr_sideband_stop(struct tr_sideband *sb);
/* Feeds the process model with what was recorded, in time order. */
void tr_sideband_replay(struct tr_sideband *sb);
void tr_sideband_counts(const struct tr_sideband *sb, struct tr_sideband_counts *out);
/* Stops if needed and frees; NULL is allowed. */
void tr_sideband_free(struct tr_sideband *sb);

#endif

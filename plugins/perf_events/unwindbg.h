/* callchain = dwarf: unwinding while collecting.  The thread that drains
 * the rings hands every record it writes to perf.data to a bounded queue
 * (never waiting: when the queue is full the sample is left to the
 * conversion); a thread of its own unwinds the samples as they come and
 * keeps their frames, keyed by where the sample sits in perf.data.  The
 * conversion adopts them (uw_adopt) when its own model has the same
 * objects where they were found, and unwinds the rest itself. */
#ifndef TR_PERF_UNWINDBG_H
#define TR_PERF_UNWINDBG_H

#include <stdint.h>
#include <linux/perf_event.h>
#include "tracerig-private/ext.h"

#include "collector.h"
#include "unwind.h"

/* Frames kept for at most this many bytes (those the conversion while
 * collecting has passed are released); samples beyond are unwound by the
 * conversion. */
#define UW_BG_RESULT_BYTES (256u << 20)

struct uw_bg;

struct uw_bg_stats {
	uint64_t queued;       /* samples handed to the thread */
	uint64_t queue_full;   /* samples left to the conversion: the queue was full */
	uint64_t kept;         /* samples unwound and their frames kept */
	uint64_t uncheckable;  /* unwound, but not adoptable (uw_frames.checkable) */
	uint64_t results_full; /* unwound, not kept: UW_BG_RESULT_BYTES reached */
	uint64_t cpu_ns;       /* the thread's CPU time, once it ended */
	int idle;              /* it ran at SCHED_IDLE until stopped */
};

/* The queue of at most `queue_bytes` (rounded down to 8, at least 4096) of records,
 * ready for them (dropped until uw_bg_start). */
int uw_bg_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
	      struct uw_objects *objects, size_t queue_bytes, struct uw_bg **out);
/* Starts the thread, once the collector's events (which must outlive it)
 * are open and before records come: at SCHED_IDLE when it is allowed to
 * come back to SCHED_OTHER at uw_bg_stop, so that unwinding while
 * collecting only takes CPU time nobody else wants. */
int uw_bg_start(struct uw_bg *bg, const struct pc_opened *ev, size_t n_ev);
/* The pc_observer callbacks (arg: the uw_bg), from one thread at a time. */
void uw_bg_record(void *arg, uint64_t offset, const struct perf_event_header *h);
void uw_bg_pass(void *arg);
/* No record comes any more: the thread, back at SCHED_OTHER, unwinds what
 * is queued and ends. */
void uw_bg_stop(struct uw_bg *bg);
/* Waits for the thread to end (after uw_bg_stop). */
void uw_bg_join(struct uw_bg *bg);
/* The data-section offset below which every sample this thread keeps
 * frames for has them already (UINT64_MAX when it never started): a
 * conversion while collecting goes no further.  Any thread. */
uint64_t uw_bg_done(struct uw_bg *bg);
/* The frames found for the sample at `offset` in perf.data's data
 * section, valid until uw_bg_free; any thread, at any time (complete
 * below uw_bg_done, and once joined).  1, or 0 when there are none. */
int uw_bg_frames(struct uw_bg *bg, uint64_t offset, struct uw_frames *out);
/* The conversion while collecting has replayed every sample below
 * `below`: their frames go, and frames for them are no longer kept, so
 * that what is kept is what the conversion has yet to reach.  Any thread;
 * frames uw_bg_frames gave for samples below `below` are invalid after. */
void uw_bg_release(struct uw_bg *bg, uint64_t below);
void uw_bg_get_stats(const struct uw_bg *bg, struct uw_bg_stats *out);
void uw_bg_free(struct uw_bg *bg);

#endif

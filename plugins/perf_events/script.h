/* perf.data as `perf script` text (perf.data.txt, the file PerfView and
 * TraceEvent read from a .trace.zip) and as stacks for the core's sink, symbolized on
 * the collecting machine.  Reads perf.data back, whole once finished or
 * while it grows: what the text says is exactly what the file holds. */
#ifndef TR_PERF_SCRIPT_H
#define TR_PERF_SCRIPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracerig-private/ext.h"

#include "collector.h"
#include "unwind.h"
#include "unwindbg.h"

struct sc_stats {
	uint64_t samples, frames;
	uint64_t unresolved; /* frames no symbol names */
	uint64_t mappings; /* MMAP2 records replayed into the process model */
	/* Samples whose kernel callchain stopped at the limit (the event's
	 * sample_max_stack, else kernel.perf_event_max_stack): their
	 * outermost frames are missing.  max_stack: that limit, of the first
	 * event. */
	uint64_t stacks_cut;
	unsigned max_stack;
};

/* Writes one text block per sample to `txt` (NULL: none) and adds each
 * sample of the first event to the core's stack sink `sink` (NULL: none;
 * the flame graph is of one event): one sample worth its period, its
 * frames named as in the text.  Samples with user registers and stack
 * get their user frames from `uw` (NULL: only the kernel's callchain),
 * adopting those `bg` found while collecting (NULL: none) where they
 * hold.  The recording's side-band records are replayed into the core's
 * process model (svc's symbolizer_mmap/exec/fork) and frames named by
 * svc's frame_name.  0 or -errno with `why` filled. */
int sc_convert(const char *perf_data, const struct pc_opened *ev, size_t n_ev, FILE *txt,
	       struct tracerig_stacks *sink, const struct tracerig_services *svc,
	       struct tracerig_ctx *ctx, struct unwinder *uw, struct uw_bg *bg, struct sc_stats *st,
	       char *why, size_t why_len);

/* The same in steps, while perf.data grows (livescript.h): sc_open, then
 * sc_feed as records are written, then sc_close.  Same arguments and
 * ownership as sc_convert; `st` is filled as it goes. */
struct sc_conv;
int sc_open(const struct pc_opened *ev, size_t n_ev, FILE *txt, struct tracerig_stacks *sink,
	    const struct tracerig_services *svc, struct tracerig_ctx *ctx, struct unwinder *uw,
	    struct uw_bg *bg, struct sc_stats *st, struct sc_conv **out, char *why, size_t why_len);
/* `data` is perf.data's data section, `len` bytes of whole records so far
 * (the same bytes as before, and more; it may be mapped elsewhere each
 * time).  Reads the records not read yet and converts, in time order,
 * every record read that was taken before `until_ns`; the others wait for
 * a later call (UINT64_MAX: convert everything).  Every record taken
 * before `until_ns` must be within `len`: one that comes later is
 * converted at the next call, out of order.  0 or -errno with `why`. */
int sc_feed(struct sc_conv *cv, const void *data, uint64_t len, uint64_t until_ns, char *why,
	    size_t why_len);
/* The data-section offset below which every record fed has been replayed
 * (the held ones wait at or above it): nothing below is looked at again. */
uint64_t sc_replayed_below(const struct sc_conv *cv);
/* Writes perf.data.txt's text so far to its file, which then ends with
 * a whole sample (its blank line).  0 or -EIO with `why`. */
int sc_sync(struct sc_conv *cv, char *why, size_t why_len);
/* sc_feed of a finished perf.data file, whole. */
int sc_feed_file(struct sc_conv *cv, const char *perf_data, char *why, size_t why_len);
/* Ends the conversion: hands what is buffered to the text's FILE (given
 * to sc_open) and frees `cv`.  `ret` is how the conversion went: an error
 * is returned as it is (`why` already says it); after 0, the error of
 * writing the text, -EIO with `why`, or 0.  Call after a last sc_feed
 * with UINT64_MAX, or on the way out of a failure. */
int sc_close(struct sc_conv *cv, int ret, char *why, size_t why_len);

#endif

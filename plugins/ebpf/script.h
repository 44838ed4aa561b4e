/* The on-CPU sampler's perf.data.txt: every sample as `perf script` prints
 * it (comm, pid/tid, CPU, time, period, event, then the frames innermost
 * first), so that PerfView, stackcollapse-perf.pl and `tracerig convert`
 * read a BPF-sampled run as they read perf_events' one.
 *
 * The kernel aggregates the samples (oncpu_agg) and sends each one's time,
 * thread and stack ids only (struct offcpu_sample, 64 bytes); they wait in
 * an unnamed file beside the staging directory's entries until flush,
 * which names the frames (the core's frame_name, at the sample's time) and
 * writes the text.  No stack copy leaves the kernel. */
#ifndef TR_EBPF_SCRIPT_H
#define TR_EBPF_SCRIPT_H

#include <stdint.h>
#include <stdio.h>

#include "tracerig-private/ext.h"

#include "collector.h"

struct sc_script;

struct sc_stats {
	uint64_t samples;     /* written to perf.data.txt */
	uint64_t not_kept;    /* received but not kept: the unnamed file's write failed */
	uint64_t stacks_gone; /* stack ids no longer in the stacks map (frames left out) */
	int keep_errno;       /* why samples were not kept (0: all were) */
};

/* An unnamed file in `dir` (O_TMPFILE: nothing to clean up, whatever ends
 * the process); 0 or a negative errno. */
int sc_new(const char *dir, struct sc_script **out);
void sc_free(struct sc_script *s);

/* Keeps one sample; has the oc_sample_fn signature.  Runs on the
 * notification thread only. */
void sc_add(void *script, const struct offcpu_sample *sample);

/* The kept samples as perf script text into `out`, their stacks from `oc`
 * (still loaded), their frames named by the core.  0 or a negative errno
 * (the file's read or `out`'s write failed). */
int sc_write(struct sc_script *s, struct oc_collector *oc, const struct tracerig_services *svc,
	     struct tracerig_ctx *ctx, FILE *out, struct sc_stats *st);

#endif

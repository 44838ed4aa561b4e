/* Reading PERF_RECORD_SAMPLE records as the collector asked for them: which
 * event a sample is of (its identifier), and the fields before the user
 * registers.  Shared by the conversion and the unwinding that runs while
 * collecting. */
#ifndef TR_PERF_SAMPLE_H
#define TR_PERF_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "collector.h"

/* Sample identifiers -> the index of their event. */
struct sample_ids {
	struct sample_id *ids;
	size_t n;
};

int sample_ids_build(struct sample_ids *m, const struct pc_opened *ev, size_t n_ev);
void sample_ids_free(struct sample_ids *m);
/* The event of a sample (its first u64, PERF_SAMPLE_IDENTIFIER), or NULL. */
const struct pc_opened *sample_event(const struct sample_ids *m, const struct pc_opened *ev,
				     uint64_t id);

struct sample {
	uint64_t ip, time, period;
	pid_t pid, tid;
	int cpu;
	uint64_t nr; /* callchain entries, at chain */
	const uint64_t *chain;
	const void *raw; /* PERF_SAMPLE_RAW payload, NULL when absent or cut */
	uint32_t raw_size;
	const uint64_t *regs; /* where PERF_SAMPLE_REGS_USER would start */
	const uint64_t *end;  /* the record's end */
};

/* The fields of `h`, whose identifier says `sample_type`.  0, or -EINVAL
 * when the record is cut short. */
int sample_parse(const struct perf_event_header *h, uint64_t sample_type, struct sample *s);

/* Non-sample records carry the sample_id trailer of the tracking event:
 * its time is that many bytes before the record's end. */
unsigned sample_time_from_end(uint64_t sample_type);

#endif

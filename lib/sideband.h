/* What perf's side-band records say about address spaces: the records
 * that feed the process model (an executable mapping, an exec, a new
 * process), decoded once for every reader of perf ring data. */
#ifndef TR_LIB_SIDEBAND_H
#define TR_LIB_SIDEBAND_H

#include <stddef.h>
#include <linux/perf_event.h>

#include "tracerig-private/ext.h"

enum tr_sideband_kind {
	TR_SIDEBAND_OTHER, /* changes no address space, or malformed */
	TR_SIDEBAND_MMAP,  /* an executable mapping: `map` */
	TR_SIDEBAND_EXEC,  /* `pid` exec'd: a new image */
	TR_SIDEBAND_FORK,  /* `pid` is a new process, a copy of `parent` */
};

struct tr_sideband_event {
	enum tr_sideband_kind kind;
	pid_t pid, parent;
	struct tracerig_mapping map; /* its pointers point into the record */
};

/* Decodes `h`, whose last `trailer_len` bytes are the sample_id trailer
 * (attr.sample_id_all), so a filename never runs into it.  Returns the
 * kind, also stored in `ev`. */
enum tr_sideband_kind tr_sideband_decode(const struct perf_event_header *h, size_t trailer_len,
					 struct tr_sideband_event *ev);

#endif

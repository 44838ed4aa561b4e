/* Flight mode: one perf.data cut out of the rotating chunks (collector.c),
 * holding the last window and nothing older: the first chunk's side-band
 * (what was alive when it began, as a recording's start has it), every
 * side-band record after it, and only the samples whose time is in the
 * window.  Stock perf script reads it as it reads a whole recording. */
#ifndef TR_PERF_WINDOW_H
#define TR_PERF_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "perfdata.h"

/* Writes the records of `win` to a new perf.data at `path` described by
 * the events `ev` (and the tracepoints' formats `td`, NULL when none),
 * keeping the samples with from_ns <= time <= to_ns.  On success *out is
 * the writer, left open for pc_window_finish, and *samples the samples
 * kept.  0 or -errno with `why` filled. */
int pw_cut(const struct pc_window *win, const struct pc_opened *ev, size_t n_ev, const void *td,
	   size_t td_len, uint64_t from_ns, uint64_t to_ns, const char *path,
	   struct pd_writer **out, uint64_t *samples, char *why, size_t why_len);

#endif

/* Converting while collecting (record mode): a thread follows perf.data
 * as the collector writes it and hands sc_feed the records every pass
 * over the rings has made complete (pc_counts: data_bytes,
 * data_complete_ns), so that perf.data.txt, the folded counts and
 * cpu.pb.gz's samples are made as the session goes and the flush has
 * only its last moments left, however long the session. */
#ifndef TR_PERF_LIVESCRIPT_H
#define TR_PERF_LIVESCRIPT_H

#include <stdint.h>

#include "collector.h"
#include "script.h"
#include "unwindbg.h"

struct ls_conv;

/* The conversion will not read perf.data below file offset `offset` again. */
typedef void (*ls_release_fn)(void *arg, uint64_t offset);

struct ls_stats {
	uint64_t steps;      /* sc_feed calls while collecting */
	uint64_t bytes;      /* of perf.data's data read while collecting */
	uint64_t cpu_ns;     /* the thread's CPU time, once it ended */
	int final_nice;      /* its nice value when it ended: the session's,
	                      * once collection ended (19 while collecting) */
};

/* Starts the thread on `cv` (it owns the conversion until ls_finish) for
 * the perf.data at `data_path` that `pc` writes; both must outlive it.
 * With `bg` (callchain = dwarf, unwinding while collecting; NULL: none)
 * it converts no further than bg has unwound (uw_bg_done), so that the
 * conversion adopts its frames instead of unwinding the samples again.
 * The thread runs at nice 19: converting takes CPU time the traced
 * workload does not want first.  After each step it calls `release`
 * (NULL: none) with the offset below which it reads nothing again.  0 or
 * -errno. */
int ls_start(struct pc_collector *pc, const char *data_path, struct sc_conv *cv,
	     struct uw_bg *bg, ls_release_fn release, void *release_arg, struct ls_conv **out);
/* After pc_stop (and pc_finish, and uw_bg_join): stops the thread and converts what it
 * had not, up to the end of the data perf.data's header now holds.  0 or
 * -errno with `why`; an error the thread met is returned here, and the
 * conversion is then left unfinished (sc_close it with a NULL txt). */
int ls_finish(struct ls_conv *lc, char *why, size_t why_len);
void ls_get_stats(const struct ls_conv *lc, struct ls_stats *out);
/* Stops the thread if it runs and frees lc (not the conversion). */
void ls_free(struct ls_conv *lc);

#endif

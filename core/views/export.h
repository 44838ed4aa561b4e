/* Stack sets written in the formats other tools read: pprof (profile.proto,
 * gzipped), folded stacks (flamegraph.pl, speedscope, inferno) and
 * speedscope's own JSON. */
#ifndef TR_EXPORT_H
#define TR_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "stackset.h"

/* The root frame folded stacks and speedscope show for a stack's process:
 * "comm-PID", or the comm alone when the PID is unknown. */
void tr_export_root(const struct ss_stack *st, char *buf, size_t len);

/* 0 or a negative errno.  pprof: samples/count (when the set has counts)
 * and the set's value type; labels pid, tid, comm; dated time_nanos (ns
 * since the epoch) for duration_nanos (0: unknown). */
int tr_export_pprof(const struct tr_stackset *s, int64_t time_nanos, int64_t duration_nanos,
		    FILE *f);
/* One line per stack: root;outermost;...;leaf value (the value, or the
 * count for sets whose values are unknown). */
int tr_export_folded(const struct tr_stackset *s, FILE *f);
/* Every set as one profile of one speedscope file named `name`. */
int tr_export_speedscope(const struct tr_stackset *const *sets, size_t n, const char *name,
			 FILE *f);

#endif

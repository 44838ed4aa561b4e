/* Folded stacks to a self-contained, interactive SVG flame graph. */
#ifndef TR_FLAMEGRAPH_H
#define TR_FLAMEGRAPH_H

#include <stdint.h>
#include <stdio.h>

struct tr_folded;
/* Writes the SVG of a set of folded lines (lib/folded.h) to `svg`, each
 * weight divided by `divisor` and rounded as tr_folded_write writes it:
 * the picture of the file it writes, without reading that file back.
 * The lines come sorted, so they are folded with the graph's scale known
 * and a node too narrow to draw loses its subtree as soon as it is final:
 * memory holds what is drawn, not every path of a session that saw
 * hundreds of thousands of processes.  0 or a negative errno; no lines
 * give a valid SVG that says there were no stacks. */
int tr_flamegraph_write_set(const struct tr_folded *set, uint64_t divisor, FILE *svg,
			    const char *title, const char *unit);
/* The same, keeping every node when `prune` is 0 (for tests: the picture
 * must not change). */
int tr_flamegraph_write_set_pruned(const struct tr_folded *set, uint64_t divisor, FILE *svg,
				   const char *title, const char *unit, int prune);

/* Reads "frame;frame;frame weight" lines from `folded` (malformed ones
 * skipped, the same stack summed) and writes their SVG.  0 or a negative
 * errno. */
int tr_flamegraph_write(FILE *folded, FILE *svg, const char *title, const char *unit);

struct tracerig_archive;
/* tr_flamegraph_write_set into staged entry `svg_name` (for the stack
 * sink and the wall view).  0 or a negative errno. */
int tr_flamegraph_stage(struct tracerig_archive *ar, const struct tr_folded *set, uint64_t divisor,
			const char *svg_name, const char *title, const char *unit);

#endif

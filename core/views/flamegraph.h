/* Folded stacks to a self-contained, interactive SVG flame graph. */
#ifndef TR_FLAMEGRAPH_H
#define TR_FLAMEGRAPH_H

#include <stdint.h>
#include <stdio.h>

/* Reads "frame;frame;frame weight" lines from `folded` and writes the SVG to
 * `svg`.  Returns 0 or a negative errno; an empty input gives a valid SVG
 * that says there were no stacks. */
int tr_flamegraph_write(FILE *folded, FILE *svg, const char *title, const char *unit);
/* The same, pruning the tree (read in two passes) when `folded` is a
 * regular file of at least `prune_min_bytes` with its stacks sorted, as
 * tr_folded_write writes them (tr_flamegraph_write: from 64 MiB on); the
 * SVG is the same either way. */
int tr_flamegraph_write_pruned(FILE *folded, FILE *svg, const char *title, const char *unit,
			       long long prune_min_bytes);

struct tr_folded;
/* The same from a set of lines in memory (lib/folded.h), each weight
 * divided by `divisor` and rounded as tr_folded_write writes it: the
 * picture of the file it writes, without reading that file back. */
int tr_flamegraph_write_set(const struct tr_folded *set, uint64_t divisor, FILE *svg,
			    const char *title, const char *unit);

struct tracerig_archive;
/* tr_flamegraph_write_set into staged entry `svg_name` (for the stack
 * sink and the wall view).  0 or a negative errno. */
int tr_flamegraph_stage(struct tracerig_archive *ar, const struct tr_folded *set, uint64_t divisor,
			const char *svg_name, const char *title, const char *unit);

#endif

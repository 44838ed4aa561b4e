/* Folded stacks to a self-contained, interactive SVG flame graph. */
#ifndef TR_FLAMEGRAPH_H
#define TR_FLAMEGRAPH_H

#include <stdio.h>

/* Reads "frame;frame;frame weight" lines from `folded` and writes the SVG to
 * `svg`.  Returns 0 or a negative errno; an empty input gives a valid SVG
 * that says there were no stacks. */
int tr_flamegraph_write(FILE *folded, FILE *svg, const char *title, const char *unit);

#endif

/* Folded stacks ("frame;frame;...;leaf WEIGHT" a line), the entries
 * tracerig writes itself: cpu.folded, offcpu.folded, wall.folded. */
#ifndef TR_REPORT_FOLDED_H
#define TR_REPORT_FOLDED_H

#include <stdint.h>

#include "archive.h"

/* The largest weight a line may have: 2^53, some 104 days in nanoseconds,
 * so that any weight times 1000 (microseconds to nanoseconds) still fits
 * a signed 64-bit sum. */
#define RP_FOLDED_MAX_WEIGHT (1ull << 53)

/* Calls each(arg, stack, weight) for every well-formed line of `entry`:
 * `stack` is the line without its weight, writable up to its NUL; lines
 * whose weight is negative or over RP_FOLDED_MAX_WEIGHT are skipped, and
 * said so on stderr.  Returns 0, the first negative value `each`
 * returned, or what rp_lines_each does. */
int rp_folded_read(struct rp_archive *ar, const char *entry,
		   int (*each)(void *arg, char *stack, uint64_t weight), void *arg);

#endif

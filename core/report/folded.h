/* Folded stacks ("frame;frame;...;leaf WEIGHT" a line), the entries
 * tracerig writes itself: cpu.folded, offcpu.folded, wall.folded. */
#ifndef TR_REPORT_FOLDED_H
#define TR_REPORT_FOLDED_H

#include <stdint.h>

#include "archive.h"

/* Calls each(arg, stack, weight) for every well-formed line of `entry`:
 * `stack` is the line without its weight, writable up to its NUL.  Returns
 * 0, the first negative value `each` returned, -ENOENT, -EIO or -ENOMEM. */
int rp_folded_read(struct rp_archive *ar, const char *entry,
		   int (*each)(void *arg, char *stack, uint64_t weight), void *arg);

#endif

/* The off-CPU section of the report: where threads were blocked, from
 * offcpu.folded (stacks weighted by blocked microseconds). */
#ifndef TR_REPORT_OFFCPU_H
#define TR_REPORT_OFFCPU_H

#include "archive.h"

/* Prints the section: 1 when the archive has off-CPU stacks, 0 when not,
 * a negative errno (said on stderr) when they cannot be read. */
int rp_report_offcpu(struct rp_archive *ar, int top);

#endif

/* The CPU section of the report: the top functions by self and total
 * samples and the split between processes, from tracerig's cpu.folded when
 * the archive has it, else from the `perf script` text in perf.data.txt. */
#ifndef TR_REPORT_CPU_H
#define TR_REPORT_CPU_H

#include "archive.h"

/* Prints the section: 1 when the archive has CPU samples, 0 when not, a
 * negative errno (said on stderr) when they cannot be read. */
int rp_report_cpu(struct rp_archive *ar, int top);

#endif

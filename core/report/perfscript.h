/* perf.data.txt: `perf script` text ("comm  pid/tid [cpu] time: period
 * event:" headers, then one frame a line, a blank line after each sample),
 * as tracerig writes it and as `perf script` does for perfcollect. */
#ifndef TR_REPORT_PERFSCRIPT_H
#define TR_REPORT_PERFSCRIPT_H

#include "archive.h"
#include "profile.h"

/* Counts the samples of `entry` into p.  0, -ENOENT, -EIO or -ENOMEM. */
int rp_perfscript_read(struct rp_archive *ar, const char *entry, struct rp_profile *p);

#endif

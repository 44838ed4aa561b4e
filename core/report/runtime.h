/* The .NET runtime section of the report: for each COMM.PID.nettrace the
 * eventpipe backend wrote, its garbage collections and their pauses, its
 * exceptions by type, the methods it compiled and its lock contention,
 * from the runtime's own events (lib/nettrace.h). */
#ifndef TR_REPORT_RUNTIME_H
#define TR_REPORT_RUNTIME_H

#include "archive.h"

/* Prints the section: 1 when the archive has .nettrace entries, 0 when
 * not.  An entry that cannot be read (damaged, malformed) is named on
 * stderr with what is wrong, the others are still summarized, and the
 * result is then a negative errno. */
int rp_report_runtime(struct rp_archive *ar, int top);

#endif

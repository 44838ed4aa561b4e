/* The head of the report, from manifest.json: the session's name, host,
 * kernel, duration, targets and each backend's status and counters. */
#ifndef TR_REPORT_OVERVIEW_H
#define TR_REPORT_OVERVIEW_H

#include "archive.h"

/* Prints it; an archive without a readable manifest gets a warning on
 * stderr and a one-line head. */
void rp_report_overview(struct rp_archive *ar);

#endif

/* `tracerig report ARCHIVE [--top N]`: a short text summary of an archive
 * (manifest basics, top functions, processes, off-CPU time). */
#ifndef TR_REPORT_H
#define TR_REPORT_H

/* argv[0] is "report".  Returns an exit status (TR_EXIT_*). */
int tr_report_main(int argc, char **argv);

#endif

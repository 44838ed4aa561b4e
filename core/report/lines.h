/* An archive entry read line by line, streaming (perf.data.txt can be
 * large).  Lines longer than RP_LINE_MAX are skipped, counted and warned
 * about: a small archive can hold a huge compressed line, and no real frame
 * list comes near this. */
#ifndef TR_REPORT_LINES_H
#define TR_REPORT_LINES_H

#include "archive.h"

#define RP_LINE_MAX (16u << 20)

/* Calls each(arg, line) for every line of `entry`: `line` has no newline
 * or CR, and is writable up to its NUL until the next call.  Returns 0, the
 * first negative value `each` returned, -ENOENT, -EIO, -EFBIG (the entry
 * inflates past ar->max_size) or -ENOMEM, with ar->why set for -EIO and
 * -EFBIG; lines skipped are warned about on stderr. */
int rp_lines_each(struct rp_archive *ar, const char *entry,
		  int (*each)(void *arg, char *line), void *arg);

#endif

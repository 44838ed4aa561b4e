/* Printing what an archive holds.  Every string in it comes from an
 * archive, most of it from traced programs (frame and thread names, command
 * lines): no escape sequence of theirs may reach the terminal. */
#ifndef TR_REPORT_TEXT_H
#define TR_REPORT_TEXT_H

#include <stdint.h>

/* s under the sanitize rule (lib/sanitize.h), "?" for NULL.  From a few
 * rotating buffers, so that one printf can hold several; the report is
 * single-threaded. */
const char *rp_tty(const char *s);

static inline double rp_percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

#endif

/* Run log: stderr by verbosity, and every line to tracerig.log once the
 * staging area exists. */
#ifndef TR_LOG_H
#define TR_LOG_H

#include <stdarg.h>
#include "tracerig-private/ext.h"

/* Verbosity on stderr: TRACERIG_LOG_WARN by default, -v raises, -q lowers. */
void tr_log_set_verbosity(int level);
int tr_log_verbosity(void);
/* Starts copying every line (all levels) to `path`; earlier lines are replayed. */
int tr_log_open_file(const char *path);
void tr_log_close_file(void);
/* Called before a line reaches the terminal, so a live status line can be cleared. */
void tr_log_set_tty_hook(void (*before_line)(void));

void tr_logv(enum tracerig_log_level level, const char *who, const char *fmt, va_list ap);
void tr_log(enum tracerig_log_level level, const char *who, const char *fmt, ...)
	TRACERIG_PRINTF(3, 4);

#define tr_err(...) tr_log(TRACERIG_LOG_ERROR, NULL, __VA_ARGS__)
#define tr_warn(...) tr_log(TRACERIG_LOG_WARN, NULL, __VA_ARGS__)
#define tr_info(...) tr_log(TRACERIG_LOG_INFO, NULL, __VA_ARGS__)
#define tr_debug(...) tr_log(TRACERIG_LOG_DEBUG, NULL, __VA_ARGS__)

#endif

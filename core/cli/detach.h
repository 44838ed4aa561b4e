/* Detached sessions: `tracerig start`, `tracerig stop [NAME]`,
 * `tracerig snapshot [NAME]`, `tracerig status`. */
#ifndef TR_DETACH_H
#define TR_DETACH_H

#include <stddef.h>

#include "core/session/options.h"

/* Before the profile is loaded: root, the session's name (the profile's
 * base name unless --name; kept in name_buf), nobody running under it.
 * TR_EXIT_OK or the exit status to return. */
int tr_detach_check(struct tr_options *opts, char *name_buf, size_t len);
/* Forks the session off.  In the child *in_session is 1 and the caller
 * runs the session as usual; the parent returns once collection runs (or
 * failed to start, after showing the session's log) with the exit status. */
int tr_detach_start(struct tr_options *opts, int *in_session);
int tr_detach_stop(int argc, char **argv);
/* `tracerig snapshot [NAME]`: a flight session writes an archive of its
 * last window; prints its path. */
int tr_detach_snapshot(int argc, char **argv);
int tr_detach_status(int argc, char **argv);

#endif

/* What the core's watchdog (watchdog_cleanup in include/tracerig/plugin.h)
 * ends for lttng when tracerig cannot: killed with SIGKILL, aborted by a
 * second Ctrl-C, crashed, or this backend hung.  The session, destroyed
 * through liblttng-ctl, and the session daemon tracerig started (with its
 * consumer daemons), stopped.
 *
 * Why the watchdog, a process, and not PR_SET_PDEATHSIG on the daemon: the
 * death signal fires when the *thread* that forked exits, and the core
 * calls plugin functions from driver threads. */
#ifndef TR_LTTNG_CLEANUP_H
#define TR_LTTNG_CLEANUP_H

#include <sys/types.h>
#include "tracerig-private/ext.h"

/* Registers the session `name` to destroy if tracerig dies (NULL: none any
 * more).  A flight session's `salvage_dir` (absolute, or NULL) gets a last
 * snapshot of its rings first, in a recording's layout, for the watchdog
 * to package.  0 or a negative errno. */
int lt_cleanup_session(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		       const char *name, const char *salvage_dir);
/* Registers the daemon `pid`, which tracerig started, to stop if tracerig
 * dies (0: none any more).  0 or a negative errno. */
int lt_cleanup_daemon(const struct tracerig_services *svc, struct tracerig_ctx *ctx, pid_t pid);
/* The descriptor's `cleanup`: what the watchdog runs for the keys above. */
void lt_cleanup(const char *key, const char *arg, char *said, size_t said_len);

#endif

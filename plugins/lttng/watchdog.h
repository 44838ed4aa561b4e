/* A process that cleans up after tracerig when tracerig cannot: killed
 * with SIGKILL, aborted by a second Ctrl-C (_exit during packaging), or
 * crashed.  It holds the read end of a pipe whose only write end is
 * tracerig's; when that end closes without a "done" message, tracerig is
 * gone, and the watchdog destroys the LTTng session through liblttng-ctl
 * and stops the session daemon (and its consumer daemons) tracerig
 * started.
 *
 * Why a process and not PR_SET_PDEATHSIG on the daemon: the death signal
 * fires when the *thread* that forked exits, and the core may call plugin
 * functions from worker threads that end after the call.  A pipe closes
 * only when the last holder, the process, is gone. */
#ifndef TR_LTTNG_WATCHDOG_H
#define TR_LTTNG_WATCHDOG_H

#include <sys/types.h>

struct lt_watchdog {
	pid_t pid;   /* the watchdog process, 0 when none */
	int fd;      /* write end (O_CLOEXEC: no launched command inherits it) */
};

/* Forks the watchdog.  0 or a negative errno. */
int lt_watchdog_start(struct lt_watchdog *w);
/* Tells it which session to destroy if tracerig dies (NULL: none any more). */
int lt_watchdog_session(struct lt_watchdog *w, const char *name);
/* Tells it which daemon to stop if tracerig dies (0: none any more). */
int lt_watchdog_daemon(struct lt_watchdog *w, pid_t pid);
/* tracerig cleaned up itself: the watchdog exits without doing anything,
 * and is reaped. */
void lt_watchdog_disarm(struct lt_watchdog *w);

#endif

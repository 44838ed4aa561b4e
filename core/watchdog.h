/* The watchdog: a small child forked before any plugin runs, that outlives
 * the collecting process if that one dies without finishing (SIGKILL, the
 * OOM killer, a fault in the core).  It then stops the launched command
 * and packages the staging directory, so what was collected is not lost.
 *
 * The collecting process talks to it over a pipe, one line per record;
 * "done" or "abort" tell it to leave without doing anything. */
#ifndef TR_WATCHDOG_H
#define TR_WATCHDOG_H

#include <stdint.h>
#include <sys/types.h>

struct tr_session;

/* Forks the watchdog.  Returns 0 in the collecting process, or -errno
 * (the session then runs unwatched). */
int tr_watchdog_start(struct tr_session *s);
/* Records, sent as they happen. */
void tr_watchdog_command(pid_t pid);
void tr_watchdog_collecting(uint64_t start_mono_ns, uint64_t start_real_ns);
void tr_watchdog_plugin(const char *name, const char *phase);
/* From the fault handler: async-signal-safe. */
void tr_watchdog_fault(const char *who, int sig);
/* The session finished (packaged or not): the watchdog leaves. */
void tr_watchdog_done(void);
/* The session is being aborted: the watchdog leaves without packaging. */
void tr_watchdog_abort(void);

#endif

/* The watchdog: a small child forked before any plugin runs, that outlives
 * the collecting process if that one dies without finishing (SIGKILL, the
 * OOM killer, a fault in the core).  It then stops the launched command
 * and packages the staging directory, so what was collected is not lost.
 *
 * It also runs the cleanups plugins register (watchdog_cleanup in
 * include/tracerig/plugin.h) for what would outlive tracerig: when the
 * collecting process dies, is aborted, or finishes with a plugin that never
 * removed its cleanup (it crashed or hung).
 *
 * The collecting process talks to it over a pipe, one line per record;
 * "packaged" tells it nothing is left to salvage, "done" (after every
 * plugin's fini) and "abort" to run the cleanups still registered and
 * leave.  Before dying of a signal it can see (any but SIGKILL) the
 * collector names it in a record, for the salvaged manifest.  The other
 * way round, a thread of the collector waits on the watchdog's pidfd and
 * warns if it dies first: the session goes on, unwatched. */
#ifndef TR_WATCHDOG_H
#define TR_WATCHDOG_H

#include <stdint.h>
#include <sys/types.h>
#include "tracerig-private/ext.h"

/* What the watchdog does for the session it watches (core/session/session.c
 * hands it these, so that the watchdog knows nothing of the session). */
struct tr_watchdog_ops {
	void *arg;
	int close_fd; /* a descriptor the watchdog must not hold open, or -1 */
	/* What the collector said of a plugin's phase ("started", ...). */
	void (*note_phase)(void *arg, const char *plugin, const char *phase);
	/* The collector died while collecting: package what was staged.
	 * 0 or a negative errno. */
	int (*salvage)(void *arg, pid_t collector, const char *why, uint64_t start_mono_ns,
		       uint64_t start_real_ns);
	/* The collector died before collection began: nothing to keep.
	 * salvage and discard are NULL when nothing is staged (--check). */
	void (*discard)(void *arg);
};

/* Forks the watchdog, with a copy of `ops`, and in the collecting process
 * installs the handlers that name a deadly signal (for signals still at
 * their default action) and starts the thread that minds the watchdog.
 * Returns 0 in the collecting process, or -errno (the session then runs
 * unwatched). */
int tr_watchdog_start(const struct tr_watchdog_ops *ops);
/* Records, sent as they happen. */
void tr_watchdog_command(pid_t pid);
void tr_watchdog_collecting(uint64_t start_mono_ns, uint64_t start_real_ns);
void tr_watchdog_plugin(const char *name, const char *phase);
/* From the fault handler: async-signal-safe. */
void tr_watchdog_fault(const char *who, int sig);
/* A plugin descriptor's `cleanup`. */
typedef void (*tracerig_cleanup_fn)(const char *key, const char *arg, char *said, size_t said_len);

/* Registers (arg non-NULL) or removes plugin's cleanup `key`, from any
 * thread: 0, -EINVAL for a key or arg that does not fit one record line,
 * -ENOTCONN when no watchdog runs. */
int tr_watchdog_cleanup(const char *plugin, const char *key, tracerig_cleanup_fn fn,
			const char *arg);
/* The session is packaged (or failed for good): nothing to salvage. */
void tr_watchdog_packaged(void);
/* Every plugin is finished: the watchdog runs the cleanups still
 * registered and leaves. */
void tr_watchdog_done(void);
/* The session is being aborted: the watchdog runs the cleanups and leaves
 * without packaging. */
void tr_watchdog_abort(void);

#endif

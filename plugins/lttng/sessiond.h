/* Finding, starting and stopping the LTTng session daemon. */
#ifndef TR_LTTNG_SESSIOND_H
#define TR_LTTNG_SESSIOND_H

#include <stddef.h>
#include <sys/types.h>

#define SESSIOND_MAX_KIDS 8

struct sessiond {
	int started;    /* we started it, so we stop it */
	pid_t pid;      /* the daemon (ours or not), 0 when unknown */
	int pidfd;      /* pins that exact process; -1 when none */
	/* Its consumer daemons, pinned while it ran (only for one we started). */
	int kids[SESSIOND_MAX_KIDS];
	pid_t kid_pids[SESSIOND_MAX_KIDS];
	size_t n_kids;
};

/* Nonzero when a session daemon answers for this user. */
int sessiond_alive(void);

/* Makes sure a session daemon runs.  When none does and `autostart` is set,
 * runs `<binary> --daemonize` (adding --no-kernel unless `kernel`) and
 * remembers the daemon so sessiond_stop() ends exactly that one.  Returns
 * 0, or a negative errno with the reason in `err`. */
int sessiond_ensure(struct sessiond *d, const char *binary, int autostart, int kernel,
		    char *err, size_t err_len);

/* Stops the daemon if we started it (SIGTERM, then SIGKILL after
 * `timeout_ms`) and its consumer daemons, and waits for them to exit;
 * releases the pidfds either way.  Returns 0 or a negative errno. */
int sessiond_stop(struct sessiond *d, int timeout_ms);

/* Number of recording sessions the daemon has (0 when it has none or does
 * not answer). */
int sessiond_other_sessions(void);

/* Pins the children (consumer daemons) of a daemon we started, so that
 * sessiond_stop() ends them too if the daemon died without doing it. */
void sessiond_note_children(struct sessiond *d);

/* Nonzero when the daemon found or started by sessiond_ensure() has exited
 * (or no daemon answers any more). */
int sessiond_gone(const struct sessiond *d);

/* Leaves the daemon running: sessiond_stop() will not touch it. */
void sessiond_forget(struct sessiond *d);

/* Where the daemon of this user keeps its sockets and pid file. */
const char *sessiond_rundir(char *buf, size_t len);

#endif

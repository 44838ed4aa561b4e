/* The observed-PID registry: processes some source saw, for others to use
 * (map harvesting, symbol snapshots). */
#ifndef TR_PIDS_H
#define TR_PIDS_H

#include <stddef.h>
#include <sys/types.h>
#include <tracerig/plugin.h>

void tr_pids_reset(void);
/* Returns 1 when `pid` is new (subscribers were told), 0 when known. */
int tr_pids_observe(pid_t pid);
size_t tr_pids_list(pid_t *out, size_t max);
size_t tr_pids_count(void);
/* 1 when some source observed `pid`. */
int tr_pids_known(pid_t pid);
/* The cgroup path of `pid` (see the service process_cgroup), NULL when
 * unknown; it lives until tr_pids_reset. */
const char *tr_pids_cgroup(pid_t pid);
int tr_pids_subscribe(tracerig_pid_cb cb, void *arg);
/* Returns once cb is neither subscribed nor running: 0, or -ENOENT. */
int tr_pids_unsubscribe(tracerig_pid_cb cb, void *arg);

#endif

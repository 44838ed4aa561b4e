/* The observed-PID registry: processes some source saw, for others to use
 * (map harvesting, symbol snapshots). */
#ifndef TR_PIDS_H
#define TR_PIDS_H

#include <stddef.h>
#include <sys/types.h>
#include "tracerig-private/ext.h"

/* One session's registry (its run context's), thread-safe. */
struct tr_pids;

/* NULL when out of memory. */
struct tr_pids *tr_pids_new(void);
void tr_pids_free(struct tr_pids *r);
/* Returns 1 when `pid` is new (subscribers were told), 0 when known. */
int tr_pids_observe(struct tr_pids *r, pid_t pid);
size_t tr_pids_list(struct tr_pids *r, pid_t *out, size_t max);
size_t tr_pids_count(struct tr_pids *r);
/* The PIDs observed so far, malloc'd (the caller frees it; never NULL but
 * out of memory), their number in *n. */
pid_t *tr_pids_all(struct tr_pids *r, size_t *n);
/* 1 when some source observed `pid`. */
int tr_pids_known(struct tr_pids *r, pid_t pid);
/* The cgroup path of `pid` (see the service process_cgroup), NULL when
 * unknown; it lives until tr_pids_free. */
const char *tr_pids_cgroup(struct tr_pids *r, pid_t pid);
int tr_pids_subscribe(struct tr_pids *r, tracerig_pid_cb cb, void *arg);
/* Returns once cb is neither subscribed nor running: 0, or -ENOENT. */
int tr_pids_unsubscribe(struct tr_pids *r, tracerig_pid_cb cb, void *arg);

#endif

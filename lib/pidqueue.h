/* Processes to look at while they are alive, handed from a thread that
 * must not block (the one draining perf rings) to a worker thread that
 * reads /proc and object files.  A PID already waiting is not queued
 * twice, so a burst of mappings (a new program's libraries) asks once. */
#ifndef TR_LIB_PIDQUEUE_H
#define TR_LIB_PIDQUEUE_H

#include <sys/types.h>

struct tr_pid_queue;

/* Called on the worker thread for each queued PID, newest first. */
typedef void (*tr_pid_work_fn)(void *arg, pid_t pid);
/* Called on the worker thread every `tick_ms` while nothing is queued
 * (a live status line); may be NULL. */
typedef void (*tr_pid_tick_fn)(void *arg);

/* Starts the worker.  Returns 0 or a negative errno. */
int tr_pid_queue_start(struct tr_pid_queue **out, tr_pid_work_fn work, tr_pid_tick_fn tick,
		       unsigned tick_ms, void *arg);
/* Queues `pid` (ignored when <= 0).  Returns 0, or -ENOMEM (the PID is
 * then dropped: it resolves from what is known already). */
int tr_pid_queue_push(struct tr_pid_queue *q, pid_t pid);
/* Works off what is queued, then stops the worker and frees the queue.
 * NULL is allowed. */
void tr_pid_queue_stop(struct tr_pid_queue *q);

#endif

/* Functions that block the calling thread in themselves for a known time,
 * shared by the workload and the collector test.  Each makes its system
 * call directly (no libc wrapper), so the innermost user frame of the
 * blocked thread is the function itself: libc is built without frame
 * pointers, and a frame-pointer walk from inside it skips its caller. */
#ifndef TR_TESTS_EBPF_BLOCKERS_H
#define TR_TESTS_EBPF_BLOCKERS_H

#include <stddef.h>
#include <sys/types.h>

struct tw_mutex {
	int word; /* 0 free, 1 locked, 2 locked with waiters */
};

void blocked_in_sleep(long ms);
void blocked_in_short_sleep(long ms);
void holding_mutex_sleep(long ms);
ssize_t blocked_in_pipe_read(int fd, void *buf, size_t len);
void blocked_on_mutex(struct tw_mutex *m);
void tw_mutex_lock(struct tw_mutex *m);
void tw_mutex_unlock(struct tw_mutex *m);

/* The scenario: threads blocking in the functions above for known totals.
 * Returns 0 when every thread did what it should. */
struct tw_plan {
	long sleeps, sleep_ms;          /* blocked_in_sleep: sleeps x sleep_ms */
	long pipe_ms;                   /* blocked_in_pipe_read: written after pipe_ms */
	long mutex_ms;                  /* blocked_on_mutex: held for mutex_ms */
	long short_sleeps, short_ms;    /* blocked_in_short_sleep: short_sleeps x short_ms */
};
#define TW_PLAN_DEFAULT { 3, 200, 400, 300, 100, 2 }
int tw_run(const struct tw_plan *plan);

#endif

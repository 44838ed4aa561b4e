/* Functions that block the calling thread in themselves for a known time,
 * shared by the workload and the collector test.  Each makes its system
 * call directly (no libc wrapper), so the innermost user frame of the
 * blocked thread is the function itself: libc is built without frame
 * pointers, and a frame-pointer walk from inside it skips its caller. */
#ifndef TR_TESTS_EBPF_BLOCKERS_H
#define TR_TESTS_EBPF_BLOCKERS_H

#include <stddef.h>
#include <stdint.h>
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

/* Blocks once at the end of each of the 2^bits call paths through
 * path_bit_zero / path_bit_one (outermost call = highest bit): 2^bits
 * distinct user stacks. */
void blocked_at_path_end(void);
void path_bit_zero(unsigned pattern, int level);
void path_bit_one(unsigned pattern, int level);
void tw_block_on_every_path(int bits);

/* The scenario: threads blocking in the functions above for known totals.
 * Returns 0 when every thread did what it should. */
struct tw_plan {
	long sleeps, sleep_ms;          /* blocked_in_sleep: sleeps x sleep_ms */
	long pipe_ms;                   /* blocked_in_pipe_read: written after pipe_ms */
	long mutex_ms;                  /* blocked_on_mutex: held for mutex_ms */
	long short_sleeps, short_ms;    /* blocked_in_short_sleep: short_sleeps x short_ms */
};
#define TW_PLAN_DEFAULT { 3, 200, 400, 300, 100, 2 }

/* What each blocking thread measured itself (CLOCK_MONOTONIC, the clock of
 * bpf_ktime_get_ns): the time spent inside the function, summed over its
 * calls.  Whatever the load, an off-CPU interval attributed to a function
 * lies inside a call of it, so the traced total can only be lower; and the
 * scenario makes it at least the plan (a thread waits only once the one it
 * waits for is asleep), so the traced total is in [plan, measured]. */
struct tw_times {
	uint64_t sleep_ns, short_ns, hold_ns, pipe_ns, mutex_ns;
	pid_t sleep_tid, pipe_tid; /* the threads of blocked_in_sleep and _pipe_read */
};
/* Runs the scenario; `times` (may be NULL) gets what the threads measured. */
int tw_run(const struct tw_plan *plan, struct tw_times *times);

#endif

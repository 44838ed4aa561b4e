/* Functions that block the calling thread in themselves for a known time,
 * shared by the workload and the collector test (and wait_asleep_in by
 * callchain = cfi's workload).  Each makes its system call directly (no
 * libc wrapper), so the innermost user frame of the blocked thread is the
 * function itself: libc is built without frame pointers, and a
 * frame-pointer walk from inside it skips its caller. */
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

/* Returns once thread `tid` of this process sleeps in system call `nr` or
 * `nr2` (two for a libc wrapper that may make either, as epoll_wait; the
 * same one twice otherwise), or at once when /proc cannot tell.  A wake
 * given only then makes the thread's wait independent of when the
 * scheduler first ran it: on a loaded machine, a waiter woken before it
 * sleeps could get the CPU only after the whole wait, and block 0 ms. */
void wait_asleep_in(pid_t tid, long nr, long nr2);

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
/* The most short sleeps a plan may have: each one's time is kept. */
#define TW_SHORT_CALLS_MAX 1024

/* What each blocking thread measured itself (CLOCK_MONOTONIC, the clock of
 * bpf_ktime_get_ns): the time spent inside the function, summed over its
 * calls.  Whatever the load, an off-CPU interval attributed to a function
 * lies inside a call of it, so the traced total can only be lower; and the
 * scenario makes it at least the plan (a thread waits only once the one it
 * waits for is asleep), so the traced total is in [plan, measured]. */
struct tw_times {
	uint64_t sleep_ns, short_ns, hold_ns, pipe_ns, mutex_ns;
	/* Each blocked_in_short_sleep call, in order: on a loaded machine some
	 * 2 ms sleeps last far longer (the thread waits for a CPU after its
	 * wake-up), and a min_block_ns / max_block_ns cut keeps or drops the
	 * interval by its real length, so a check of a cut needs each call's. */
	uint64_t short_call_ns[TW_SHORT_CALLS_MAX];
	pid_t sleep_tid, pipe_tid; /* the threads of blocked_in_sleep and _pipe_read */
};
/* Runs the scenario; `times` (may be NULL) gets what the threads measured.
 * -EINVAL when the plan has more than TW_SHORT_CALLS_MAX short sleeps. */
int tw_run(const struct tw_plan *plan, struct tw_times *times);

/* The short sleeps (of `times`) that the thread measured at `ns` or longer:
 * their number, and their total in *sum_ns.  An interval cut at `ns`
 * (min_block) can only come from these calls, since an interval lies
 * inside the call; an interval cut above `ns` (max_block) only from these. */
long tw_short_calls_over(const struct tw_times *times, long n_calls, uint64_t ns,
			 uint64_t *sum_ns);

#endif

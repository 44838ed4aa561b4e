/* Threads blocking in known functions for known times. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "blockers.h"

/* noipa: GCC would otherwise fold the identical sleepers into one symbol. */
#if defined(__GNUC__) && !defined(__clang__)
#define NOINLINE __attribute__((noinline, noipa))
#else
#define NOINLINE __attribute__((noinline))
#endif
#define INLINE static inline __attribute__((always_inline))

#if defined(__x86_64__)
INLINE long raw4(long n, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}
#else
INLINE long raw4(long n, long a, long b, long c, long d)
{
	long ret = syscall(n, a, b, c, d);

	return ret < 0 ? -errno : ret;
}
#endif

INLINE void sleep_here(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	/* Absolute deadline: an interrupted sleep resumes to the same end. */
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ts.tv_sec += now.tv_sec;
	ts.tv_nsec += now.tv_nsec;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	while (raw4(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, (long)&ts, 0) == -EINTR)
		;
}

NOINLINE void blocked_in_sleep(long ms)
{
	sleep_here(ms);
	__asm__ volatile("" ::: "memory"); /* keep the call a call, not a tail jump */
}

NOINLINE void blocked_in_short_sleep(long ms)
{
	sleep_here(ms);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void holding_mutex_sleep(long ms)
{
	sleep_here(ms);
	__asm__ volatile("" ::: "memory");
}

NOINLINE ssize_t blocked_in_pipe_read(int fd, void *buf, size_t len)
{
	long ret;

	while ((ret = raw4(SYS_read, fd, (long)buf, (long)len, 0)) == -EINTR)
		;
	__asm__ volatile("" ::: "memory");
	return ret;
}

INLINE void futex_wait_here(int *word, int val)
{
	raw4(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, val, 0);
}

/* Drepper's three-state mutex ("Futexes are tricky"), waiting here. */
NOINLINE void blocked_on_mutex(struct tw_mutex *m)
{
	int c = 0;

	if (__atomic_compare_exchange_n(&m->word, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(&m->word, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		futex_wait_here(&m->word, 2);
		c = __atomic_exchange_n(&m->word, 2, __ATOMIC_ACQUIRE);
	}
	__asm__ volatile("" ::: "memory");
}

/* ---- many distinct stacks ---- */

NOINLINE void blocked_at_path_end(void)
{
	struct timespec ts = { 0, 20000 };
	struct rusage before, after;

	/* A timer that fires before the sleeper reaches schedule() (a slow,
	 * sanitized or preempted thread) ends the sleep without a context
	 * switch: sleep again until this thread really was switched out. */
	getrusage(RUSAGE_THREAD, &before);
	do {
		raw4(SYS_nanosleep, (long)&ts, 0, 0, 0);
		getrusage(RUSAGE_THREAD, &after);
	} while (after.ru_nvcsw == before.ru_nvcsw);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void path_bit_zero(unsigned pattern, int level);
NOINLINE void path_bit_one(unsigned pattern, int level);

/* Inlined: a frame of its own would be named after its neighbour by
 * dladdr (only exported functions have names there). */
INLINE void path_next(unsigned pattern, int level)
{
	if (level == 0)
		blocked_at_path_end();
	else if (pattern & (1u << (level - 1)))
		path_bit_one(pattern, level - 1);
	else
		path_bit_zero(pattern, level - 1);
}

NOINLINE void path_bit_zero(unsigned pattern, int level)
{
	path_next(pattern, level);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void path_bit_one(unsigned pattern, int level)
{
	path_next(pattern, level);
	__asm__ volatile("" ::: "memory");
}

void tw_block_on_every_path(int bits)
{
	for (unsigned p = 0; p < (1u << bits); p++)
		path_next(p, bits);
}

void tw_mutex_lock(struct tw_mutex *m)
{
	blocked_on_mutex(m);
}

void tw_mutex_unlock(struct tw_mutex *m)
{
	if (__atomic_fetch_sub(&m->word, 1, __ATOMIC_RELEASE) != 1) {
		__atomic_store_n(&m->word, 0, __ATOMIC_RELEASE);
		raw4(SYS_futex, (long)&m->word, FUTEX_WAKE_PRIVATE, 1, 0);
	}
}

/* ---- the scenario ---- */

struct scenario {
	const struct tw_plan *plan;
	pthread_barrier_t start;
	int pipefd[2];
	struct tw_mutex mutex;
	pid_t reader_tid, waiter_tid; /* set before the barrier */
	struct tw_times times;
	int failed;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* /proc/self/task/TID/FILE as a string in buf; -1 when it cannot be read. */
static int read_proc_text(pid_t tid, const char *file, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, file) >=
	    (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* Whether thread `tid` of this process sleeps (state S) in system call
 * `nr` or `nr2`; -1 when /proc cannot tell. */
static int asleep_in(pid_t tid, long nr, long nr2)
{
	char buf[512], *p;
	long got;

	if (read_proc_text(tid, "stat", buf, sizeof(buf)) < 0)
		return -1;
	p = strrchr(buf, ')'); /* the comm may hold anything */
	if (!p || p[1] != ' ' || p[2] != 'S')
		return 0;
	if (read_proc_text(tid, "syscall", buf, sizeof(buf)) < 0)
		return -1;
	if (buf[0] == 'r') /* "running" */
		return 0;
	got = strtol(buf, NULL, 10);
	return got == nr || got == nr2;
}

void wait_asleep_in(pid_t tid, long nr, long nr2)
{
	const struct timespec ms = { 0, 1000000L };

	while (asleep_in(tid, nr, nr2) == 0)
		nanosleep(&ms, NULL);
}

static void *sleeper(void *arg)
{
	struct scenario *s = arg;

	s->times.sleep_tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&s->start);
	for (long i = 0; i < s->plan->sleeps; i++) {
		uint64_t t0 = now_ns();

		blocked_in_sleep(s->plan->sleep_ms);
		s->times.sleep_ns += now_ns() - t0;
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct scenario *s = arg;
	uint64_t t0;
	char c;

	s->reader_tid = (pid_t)syscall(SYS_gettid);
	s->times.pipe_tid = s->reader_tid;
	pthread_barrier_wait(&s->start);
	t0 = now_ns();
	if (blocked_in_pipe_read(s->pipefd[0], &c, 1) != 1)
		s->failed = 1;
	s->times.pipe_ns = now_ns() - t0;
	return NULL;
}

static void *holder(void *arg)
{
	struct scenario *s = arg;
	uint64_t t0;

	/* Locked before the barrier: the waiter cannot get it first. */
	tw_mutex_lock(&s->mutex);
	pthread_barrier_wait(&s->start);
	/* The hold counts from the moment the waiter waits. */
	wait_asleep_in(s->waiter_tid, SYS_futex, SYS_futex);
	t0 = now_ns();
	holding_mutex_sleep(s->plan->mutex_ms);
	s->times.hold_ns = now_ns() - t0;
	tw_mutex_unlock(&s->mutex);
	return NULL;
}

static void *waiter(void *arg)
{
	struct scenario *s = arg;
	uint64_t t0;

	s->waiter_tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&s->start);
	t0 = now_ns();
	blocked_on_mutex(&s->mutex);
	s->times.mutex_ns = now_ns() - t0;
	tw_mutex_unlock(&s->mutex);
	return NULL;
}

static void *shorts(void *arg)
{
	struct scenario *s = arg;

	pthread_barrier_wait(&s->start);
	for (long i = 0; i < s->plan->short_sleeps; i++) {
		uint64_t t0 = now_ns();

		blocked_in_short_sleep(s->plan->short_ms);
		s->times.short_call_ns[i] = now_ns() - t0;
		s->times.short_ns += s->times.short_call_ns[i];
	}
	return NULL;
}

long tw_short_calls_over(const struct tw_times *times, long n_calls, uint64_t ns,
			 uint64_t *sum_ns)
{
	long n = 0;

	*sum_ns = 0;
	for (long i = 0; i < n_calls && i < TW_SHORT_CALLS_MAX; i++) {
		if (times->short_call_ns[i] >= ns) {
			n++;
			*sum_ns += times->short_call_ns[i];
		}
	}
	return n;
}

int tw_run(const struct tw_plan *plan, struct tw_times *times)
{
	void *(*fns[])(void *) = { sleeper, reader, holder, waiter, shorts };
	enum { N = sizeof(fns) / sizeof(fns[0]) };
	struct scenario s;
	pthread_t th[N];
	size_t started = 0;
	struct timespec ts = { plan->pipe_ms / 1000, (plan->pipe_ms % 1000) * 1000000L };

	if (plan->short_sleeps < 0 || plan->short_sleeps > TW_SHORT_CALLS_MAX)
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.plan = plan;
	if (pipe(s.pipefd) < 0)
		return -errno;
	pthread_barrier_init(&s.start, NULL, N + 1);
	for (; started < N; started++)
		if (pthread_create(&th[started], NULL, fns[started], &s) != 0)
			break;
	if (started < N) {
		/* Cannot reach the barrier: release the ones waiting. */
		s.failed = 1;
		_exit(99);
	}
	pthread_barrier_wait(&s.start);
	/* The answer comes pipe_ms after the reader waits for it. */
	wait_asleep_in(s.reader_tid, SYS_read, SYS_read);
	nanosleep(&ts, NULL);
	if (write(s.pipefd[1], "x", 1) != 1)
		s.failed = 1;
	for (size_t i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&s.start);
	close(s.pipefd[0]);
	close(s.pipefd[1]);
	if (times)
		*times = s.times;
	return s.failed ? -EIO : 0;
}

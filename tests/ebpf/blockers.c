/* Threads blocking in known functions for known times. */
#include "config.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
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
	int failed;
};

static void *sleeper(void *arg)
{
	struct scenario *s = arg;

	pthread_barrier_wait(&s->start);
	for (long i = 0; i < s->plan->sleeps; i++)
		blocked_in_sleep(s->plan->sleep_ms);
	return NULL;
}

static void *reader(void *arg)
{
	struct scenario *s = arg;
	char c;

	pthread_barrier_wait(&s->start);
	if (blocked_in_pipe_read(s->pipefd[0], &c, 1) != 1)
		s->failed = 1;
	return NULL;
}

static void *holder(void *arg)
{
	struct scenario *s = arg;

	/* Locked before the barrier: the waiter cannot get it first. */
	tw_mutex_lock(&s->mutex);
	pthread_barrier_wait(&s->start);
	holding_mutex_sleep(s->plan->mutex_ms);
	tw_mutex_unlock(&s->mutex);
	return NULL;
}

static void *waiter(void *arg)
{
	struct scenario *s = arg;

	pthread_barrier_wait(&s->start);
	blocked_on_mutex(&s->mutex);
	tw_mutex_unlock(&s->mutex);
	return NULL;
}

static void *shorts(void *arg)
{
	struct scenario *s = arg;

	pthread_barrier_wait(&s->start);
	for (long i = 0; i < s->plan->short_sleeps; i++)
		blocked_in_short_sleep(s->plan->short_ms);
	return NULL;
}

int tw_run(const struct tw_plan *plan)
{
	void *(*fns[])(void *) = { sleeper, reader, holder, waiter, shorts };
	enum { N = sizeof(fns) / sizeof(fns[0]) };
	struct scenario s;
	pthread_t th[N];
	size_t started = 0;
	struct timespec ts = { plan->pipe_ms / 1000, (plan->pipe_ms % 1000) * 1000000L };

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
	nanosleep(&ts, NULL);
	if (write(s.pipefd[1], "x", 1) != 1)
		s.failed = 1;
	for (size_t i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&s.start);
	close(s.pipefd[0]);
	close(s.pipefd[1]);
	return s.failed ? -EIO : 0;
}

/* callchain = cfi's workload (tests/ebpf/cfi.sh): built -O2
 * -fomit-frame-pointer, like Debian's libc it blocks through, so that only
 * the CFI knows the callers.  Each thread blocks from a known caller in a
 * known blocker, so that a whole stack reads thread;caller;blocker;<libc>:
 *
 *   condwait_thread;condwait_caller;condwait_blocker;pthread_cond_wait
 *   epollwait_thread;epollwait_caller;epollwait_blocker;epoll_wait
 *   piperead_thread;piperead_caller;piperead_blocker;read
 *   sort_thread;sort_caller;my_sorter;qsort_r;msort...;my_compare;nanosleep
 *   late_thread;late_caller;late_lib_entry;late_lib_blocker;nanosleep
 *
 * and main;tick_caller;ticker;nanosleep wakes the first three.  The last
 * one's library is dlopen()ed a second after the start, so that its tables
 * reach the walker while the process runs.
 *
 * Counts do not depend on the machine: ROUNDS wakes of each waiter, each
 * given only once the waiter sleeps in its system call and STEP_MS after
 * that (so each blocks ROUNDS x STEP_MS at least), ROUNDS comparator sleeps
 * over sorts of the same data, ROUNDS sleeps in the late library.
 *
 *   nofp2 [-n ROUNDS] -l LIBRARY   (200 rounds of 5 ms; LIBRARY is
 *   tests/ebpf/cfi/libcfilate.c built, as cfi.sh does) */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "blockers.h"

/* noipa: GCC would otherwise fold look-alike functions into one symbol or
 * clone them under another name. */
#if defined(__GNUC__) && !defined(__clang__)
#define NOINLINE __attribute__((noinline, noipa))
#else
#define NOINLINE __attribute__((noinline))
#endif
/* After a call: keeps the call a call, not a tail jump that would take its
 * caller off the stack whatever the unwinder. */
#define KEEP_CALLER() __asm__ volatile("" ::: "memory")

#define STEP_NS 5000000L
#define SORT_LEN 64
#define SLEEP_EVERY 8 /* comparisons */
#define LATE_DELAY_S 1

long condwait_blocker(void);
long condwait_caller(int n);
long epollwait_blocker(void);
long epollwait_caller(int n);
long piperead_blocker(void);
long piperead_caller(int n);
int my_compare(const void *a, const void *b);
long my_sorter(int *v, size_t len);
long sort_caller(int n);
long late_caller(long (*fn)(int), int n);
void warm_up(int ms);
long ticker(void);
long tick_caller(int n);

static int rounds = 200;
static const char *late_path;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int pending; /* wakes given, not yet taken: none is lost */
static int epoll_pipe[2], read_pipe[2], epfd;
static pid_t cond_tid, epoll_tid, read_tid;
static pthread_barrier_t started;

/* ---- the blockers and their callers ---- */

NOINLINE long condwait_blocker(void)
{
	long waits = 0;

	pthread_mutex_lock(&lock);
	while (pending == 0) {
		pthread_cond_wait(&cond, &lock);
		KEEP_CALLER();
		waits++;
	}
	pending--;
	pthread_mutex_unlock(&lock);
	return waits;
}

NOINLINE long condwait_caller(int n)
{
	long got = 0;

	for (int i = 0; i < n; i++)
		got += condwait_blocker() > 0;
	return got;
}

NOINLINE long epollwait_blocker(void)
{
	struct epoll_event ev;
	char c;
	int r;

	r = epoll_wait(epfd, &ev, 1, -1);
	KEEP_CALLER();
	/* Readable: this read does not block. */
	if (r == 1 && read(epoll_pipe[0], &c, 1) == 1)
		return 1;
	return 0;
}

NOINLINE long epollwait_caller(int n)
{
	long got = 0;

	for (int i = 0; i < n; i++)
		got += epollwait_blocker();
	return got;
}

NOINLINE long piperead_blocker(void)
{
	char c;
	long r = read(read_pipe[0], &c, 1);

	KEEP_CALLER();
	return r == 1;
}

NOINLINE long piperead_caller(int n)
{
	long got = 0;

	for (int i = 0; i < n; i++)
		got += piperead_blocker();
	return got;
}

static long compares, sort_sleeps, sort_limit;

/* Sleeps inside libc's qsort, so that the walk has to go through its
 * internal merge sort (no frame pointers, no exported names). */
NOINLINE int my_compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (++compares % SLEEP_EVERY == 0 && sort_sleeps < sort_limit) {
		struct timespec ts = { 0, STEP_NS };

		sort_sleeps += nanosleep(&ts, NULL) == 0;
		KEEP_CALLER();
	}
	return (x > y) - (x < y);
}

NOINLINE long my_sorter(int *v, size_t len)
{
	qsort(v, len, sizeof(*v), my_compare);
	KEEP_CALLER();
	return v[0];
}

/* The same data every pass, and so the same comparisons and stacks every
 * run: the comparison with perf is on identical workloads. */
NOINLINE long sort_caller(int n)
{
	int v[SORT_LEN];
	long sum = 0;

	sort_limit = n;
	while (sort_sleeps < sort_limit) {
		unsigned int x = 12345;

		for (int i = 0; i < SORT_LEN; i++) {
			x = x * 1103515245u + 12345u;
			v[i] = (int)(x >> 16);
		}
		sum += my_sorter(v, SORT_LEN);
	}
	return sum;
}

NOINLINE long late_caller(long (*fn)(int), int n)
{
	long r = fn(n);

	KEEP_CALLER();
	return r;
}

/* ---- the ticker ---- */

NOINLINE long ticker(void)
{
	struct timespec ts = { 0, STEP_NS };
	long put = 0;

	wait_asleep_in(cond_tid, SYS_futex, SYS_futex);
	wait_asleep_in(epoll_tid, SYS_epoll_wait, SYS_epoll_pwait);
	wait_asleep_in(read_tid, SYS_read, SYS_read);
	nanosleep(&ts, NULL);
	KEEP_CALLER();
	pthread_mutex_lock(&lock);
	pending++;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	put += write(epoll_pipe[1], "e", 1) == 1;
	put += write(read_pipe[1], "r", 1) == 1;
	return put;
}

NOINLINE long tick_caller(int n)
{
	long put = 0;

	for (int i = 0; i < n; i++)
		put += ticker() == 2;
	return put;
}

/* ---- the threads ---- */

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The results are stored after the call: returned, the call would be a
 * tail call and the thread function would not be on the stack. */
static void *condwait_thread(void *arg)
{
	cond_tid = gettid_();
	pthread_barrier_wait(&started);
	*(long *)arg = condwait_caller(rounds);
	return NULL;
}

static void *epollwait_thread(void *arg)
{
	epoll_tid = gettid_();
	pthread_barrier_wait(&started);
	*(long *)arg = epollwait_caller(rounds);
	return NULL;
}

static void *piperead_thread(void *arg)
{
	read_tid = gettid_();
	pthread_barrier_wait(&started);
	*(long *)arg = piperead_caller(rounds);
	return NULL;
}

static void *sort_thread(void *arg)
{
	sort_caller(rounds);
	*(long *)arg = sort_sleeps;
	return NULL;
}

/* Waits LATE_DELAY_S before the dlopen: the library's tables are not there
 * when the process starts. */
static void *late_thread(void *arg)
{
	struct timespec ts = { LATE_DELAY_S, 0 };
	long (*fn)(int);
	void *lib;

	while (nanosleep(&ts, &ts) != 0)
		;
	lib = dlopen(late_path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "nofp2: %s\n", dlerror());
		return NULL;
	}
	fn = (long (*)(int))dlsym(lib, "late_lib_entry");
	if (!fn) {
		fprintf(stderr, "nofp2: %s\n", dlerror());
		return NULL;
	}
	*(long *)arg = late_caller(fn, rounds);
	return NULL;
}

/* A service's start: the tables of a process come after its first
 * blocks (callchain = cfi loads them when it first sees the process, and
 * again for libraries it maps after that), so the threads measured start
 * once the process has run a while. */
/* Two sleeps: an off-CPU interval is walked when it ends, and the tables
 * loaded at the exec have none of the libraries ld.so maps after it; the
 * first, short sleep's walk meets libc and has them loaded, the rest lets
 * that happen however loaded the machine. */
NOINLINE void warm_up(int ms)
{
	int first_ms = ms < 10 ? ms : 10, rest_ms = ms - first_ms;
	const struct timespec first = { 0, first_ms * 1000000L },
			      rest = { rest_ms / 1000, (rest_ms % 1000) * 1000000L };

	if (ms <= 0)
		return;
	nanosleep(&first, NULL);
	nanosleep(&rest, NULL);
}

int main(int argc, char **argv)
{
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_t t[5];
	long got[5] = { 0 }, put;
	int opt, warm_ms = 0;

	while ((opt = getopt(argc, argv, "n:l:w:")) != -1) {
		switch (opt) {
		case 'n': rounds = atoi(optarg); break;
		case 'l': late_path = optarg; break;
		case 'w': warm_ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: nofp2 [-n ROUNDS] [-w WARM_UP_MS] -l LIBRARY\n");
			return 2;
		}
	}
	if (rounds <= 0 || !late_path || access(late_path, R_OK) != 0) {
		fprintf(stderr, "usage: nofp2 [-n ROUNDS] -l LIBRARY\n");
		return 2;
	}
	if (pipe(epoll_pipe) < 0 || pipe(read_pipe) < 0 ||
	    (epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, epoll_pipe[0], &ev) < 0) {
		perror("nofp2");
		return 1;
	}
	warm_up(warm_ms);
	/* The ticker reads the waiters' IDs only after the barrier. */
	pthread_barrier_init(&started, NULL, 4);
	if (pthread_create(&t[0], NULL, condwait_thread, &got[0]) ||
	    pthread_create(&t[1], NULL, epollwait_thread, &got[1]) ||
	    pthread_create(&t[2], NULL, piperead_thread, &got[2]) ||
	    pthread_create(&t[3], NULL, sort_thread, &got[3]) ||
	    pthread_create(&t[4], NULL, late_thread, &got[4])) {
		fprintf(stderr, "nofp2: cannot start the threads\n");
		return 1;
	}
	pthread_barrier_wait(&started);
	put = tick_caller(rounds);
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 5; i++) {
		if (got[i] != rounds || put != rounds) {
			fprintf(stderr, "nofp2: thread %d did %ld of %d rounds, %ld ticks\n", i,
				got[i], rounds, put);
			return 1;
		}
	}
	return 0;
}

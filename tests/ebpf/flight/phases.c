/* A process whose one thread blocks in one known function, then another:
 * phase A, then B, then C, each a loop of 10 ms sleeps in its own
 * function (tests/ebpf/flight.sh).  Files in DIR say where it is, so the
 * test waits on them rather than on the clock:
 *
 *   phases DIR      waits for DIR/go (tracerig collecting), then
 *                   A for 3 s, then B (DIR/b-started); after 6 s of B,
 *                   DIR/b-ready; B until DIR/go-c exists, then C; after
 *                   4 s of C, DIR/c-ready; C until DIR/end exists.
 *
 * Each wait is bounded (120 s): a test that fails does not leave it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__GNUC__) && !defined(__clang__)
#define NOINLINE __attribute__((noinline, noipa))
#else
#define NOINLINE __attribute__((noinline))
#endif

#define SLEEP_MS 10
#define MAX_MS 120000

static const char *dir;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The sleep's system call made here, not in libc (built without frame
 * pointers): the blocking function is the innermost user frame. */
static inline __attribute__((always_inline)) void sleep_here(void)
{
	struct timespec ts = { 0, SLEEP_MS * 1000000L };

#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = 0;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_clock_nanosleep), "D"((long)CLOCK_MONOTONIC), "S"(0L),
			   "d"((long)&ts), "r"(r10)
			 : "rcx", "r11", "memory");
	(void)ret;
#else
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
#endif
}

/* Not static: the test looks for these names in offcpu.folded. */
void blocked_in_phase_a(void);
void blocked_in_phase_b(void);
void blocked_in_phase_c(void);

NOINLINE void blocked_in_phase_a(void)
{
	sleep_here();
}

NOINLINE void blocked_in_phase_b(void)
{
	sleep_here();
}

NOINLINE void blocked_in_phase_c(void)
{
	sleep_here();
}

static int exists(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void mark(const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

/* Blocks in `fn` for at least `ms`, marks `ready`, then goes on until the
 * file `until` exists (NULL: returns at once). */
static void phase(void (*fn)(void), long ms, const char *ready, const char *until)
{
	long start = now_ms();

	while (now_ms() - start < ms)
		fn();
	mark(ready);
	while (until && !exists(until) && now_ms() - start < MAX_MS)
		fn();
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: phases DIR\n");
		return 2;
	}
	dir = argv[1];
	for (long start = now_ms(); !exists("go") && now_ms() - start < MAX_MS;)
		usleep(20000);
	phase(blocked_in_phase_a, 3000, "b-started", NULL);
	phase(blocked_in_phase_b, 6000, "b-ready", "go-c");
	phase(blocked_in_phase_c, 4000, "c-ready", "end");
	return 0;
}

/* A fixed amount of CPU work through distro code built without frame
 * pointers: main -> run -> sort_batch -> qsort (libc) -> ... -> by_key,
 * this program built -O2 -fomit-frame-pointer too.  Timed by itself, as
 * bench/perf_events/spin.c: prints the elapsed milliseconds, the
 * CLOCK_MONOTONIC time it ended at and the CPU time it used; `work now`
 * prints only the time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define BATCH 4096

__attribute__((noinline)) static int by_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) static uint64_t sort_batch(uint64_t *v, uint64_t seed)
{
	for (int i = 0; i < BATCH; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		v[i] = seed >> 7;
	}
	qsort(v, BATCH, sizeof(*v), by_key);
	return seed ^ v[BATCH / 2];
}

__attribute__((noinline)) static uint64_t run(long batches)
{
	static uint64_t v[BATCH];
	uint64_t seed = 1;

	for (long i = 0; i < batches; i++)
		seed = sort_batch(v, seed);
	return seed;
}

static double ms(const struct timespec *t)
{
	return t->tv_sec * 1e3 + t->tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	uint64_t r;

	if (argc > 1 && argv[1][0] == 'n') {
		clock_gettime(CLOCK_MONOTONIC, &a);
		printf("%.1f\n", ms(&a));
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	r = run(argc > 1 ? atol(argv[1]) : 2000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &ru);
	printf("%.1f %.1f %.1f\n", ms(&b) - ms(&a), ms(&b),
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	return r == 42;
}

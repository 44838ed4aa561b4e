/* A fixed amount of CPU work in N threads, timed by itself: the tracer's
 * start-up and packaging are not in the figure, only what sampling costs
 * the workload while it runs.  Prints the elapsed milliseconds and the
 * CLOCK_MONOTONIC time it ended at, and the CPU time it used (so that
 * what a tracer running it used on top is known); `spin now` prints only
 * the time, to measure how long a tracer takes after the workload is gone. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static uint64_t iterations;

__attribute__((noinline)) static uint64_t bench_leaf(uint64_t x)
{
	return x * 2862933555777941757ull + 3037000493ull;
}

__attribute__((noinline)) static void *bench_worker(void *arg)
{
	volatile uint64_t sink;
	uint64_t x = (uintptr_t)arg;

	for (uint64_t i = 0; i < iterations; i++)
		x = bench_leaf(x);
	sink = x;
	(void)sink;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	struct timespec a, b;
	pthread_t t[64];

	if (argc > 1 && argv[1][0] == 'n') {
		clock_gettime(CLOCK_MONOTONIC, &a);
		printf("%.1f\n", a.tv_sec * 1e3 + a.tv_nsec / 1e6);
		return 0;
	}
	iterations = argc > 2 ? strtoull(argv[2], NULL, 10) : 400000000ull;
	if (threads < 1 || threads > 64)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, bench_worker, (void *)(uintptr_t)(i + 1)))
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	{
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		printf("%.1f %.1f %.1f\n", (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6,
		       b.tv_sec * 1e3 + b.tv_nsec / 1e6,
		       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	}
	return 0;
}

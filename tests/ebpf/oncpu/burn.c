/* ebpf oncpu's workload (tests/ebpf/oncpu.sh): built -O2
 * -fomit-frame-pointer, like Debian's libc it runs through, so that only
 * the CFI knows the callers.  It burns CPU in known functions:
 *
 *   sort_thread;sort_caller;my_sorter;qsort_r;msort...;my_compare
 *   main;sort_caller;my_sorter;qsort_r;msort...;my_compare
 *   spin_thread;spin_caller;spin_leaf
 *
 * the comparator spinning at every comparison.  The work is fixed (ROUNDS
 * sorts of the same data, the same spins), not its time: the samples a
 * clock takes of it do not depend on the machine's load.
 *
 *   burn [-n ROUNDS] [-w WARMUP_MS] [-t]   (40 rounds; warm-up: a sleep
 *   before the work, for the tracer to load the process's tables; -t: the
 *   work's wall-clock time on stdout, "work_ns N", for bench/ebpf_oncpu) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* noipa: GCC would otherwise fold look-alike functions into one symbol or
 * clone them under another name. */
#if defined(__GNUC__) && !defined(__clang__)
#define NOINLINE __attribute__((noinline, noipa))
#else
#define NOINLINE __attribute__((noinline))
#endif

#define N 1024
#define COMPARE_SPIN 1500
#define LEAF_SPIN ((unsigned long)N * 10 * COMPARE_SPIN)

static int rounds = 40;

static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		__asm__ volatile("" ::: "memory");
}

NOINLINE static int my_compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	spin(COMPARE_SPIN);
	return (x > y) - (x < y);
}

NOINLINE static void my_sorter(int *v, size_t n)
{
	qsort(v, n, sizeof(*v), my_compare);
	/* Not a tail call: my_sorter's frame stays under qsort's. */
	__asm__ volatile("" ::: "memory");
}

/* The same data every round: the same comparisons, the same depths. */
NOINLINE static void sort_caller(int *v)
{
	for (int r = 0; r < rounds; r++) {
		unsigned int x = 12345;

		for (int i = 0; i < N; i++) {
			x = x * 1103515245u + 12345u;
			v[i] = (int)(x >> 8);
		}
		my_sorter(v, N);
	}
}

NOINLINE static void *sort_thread(void *arg)
{
	static int v[N];

	(void)arg;
	sort_caller(v);
	return NULL;
}

NOINLINE static void spin_leaf(void)
{
	spin(LEAF_SPIN);
}

NOINLINE static void spin_caller(void)
{
	for (int r = 0; r < rounds; r++)
		spin_leaf();
}

NOINLINE static void *spin_thread(void *arg)
{
	(void)arg;
	spin_caller();
	return NULL;
}

int main(int argc, char **argv)
{
	static int v[N];
	pthread_t sorter, spinner;
	struct timespec t0, t1;
	long warmup_ms = 0;
	int opt, timed = 0;

	while ((opt = getopt(argc, argv, "n:w:t")) != -1) {
		if (opt == 'n')
			rounds = atoi(optarg);
		else if (opt == 'w')
			warmup_ms = atol(optarg);
		else if (opt == 't')
			timed = 1;
		else
			return 2;
	}
	if (warmup_ms) {
		struct timespec ts = { warmup_ms / 1000, (warmup_ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pthread_create(&sorter, NULL, sort_thread, NULL) ||
	    pthread_create(&spinner, NULL, spin_thread, NULL)) {
		fprintf(stderr, "burn: cannot start the threads\n");
		return 1;
	}
	sort_caller(v);
	pthread_join(sorter, NULL);
	pthread_join(spinner, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (timed)
		printf("work_ns %lld\n",
		       (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	return 0;
}

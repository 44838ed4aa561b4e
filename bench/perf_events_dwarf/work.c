/* A fixed amount of CPU work through distro code built without frame
 * pointers: main -> run -> sort_batch -> qsort (libc) -> ... -> by_key,
 * this program built -O2 -fomit-frame-pointer too.  Timed by itself, as
 * bench/perf_events/spin.c: prints the elapsed milliseconds, the
 * CLOCK_MONOTONIC time it ended at, the CPU time it used, and the CPU time
 * its parent (the tracer that launched it) used meanwhile, all of it and
 * that of its threads at SCHED_IDLE; `work now` prints only the time. */
#define _GNU_SOURCE /* SCHED_IDLE */
#include <dirent.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

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

/* The parent's threads: CPU time (ns, schedstat's first field) and
 * whether at SCHED_IDLE (stat's 41st field). */
#define MAX_THREADS 256
struct threads {
	int n;
	long tid[MAX_THREADS];
	uint64_t ns[MAX_THREADS];
	char comm[MAX_THREADS][17];
	int idle[MAX_THREADS];
};

static void read_threads(struct threads *t)
{
	char path[300], buf[1024], *p;
	struct dirent *de;
	DIR *d;

	t->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)getppid());
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) && t->n < MAX_THREADS) {
		unsigned long long ns = 0;
		FILE *f;
		size_t len;
		int field = 2;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)getppid(), de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)getppid(), de->d_name);
		f = fopen(path, "r");
		len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[len] = '\0';
		p = strchr(buf, '(');
		snprintf(t->comm[t->n], sizeof(t->comm[t->n]), "%.*s",
			 p && strrchr(buf, ')') > p ? (int)(strrchr(buf, ')') - p - 1) : 0, p ? p + 1 : "");
		p = strrchr(buf, ')');
		while (p && field < 41) {
			p = strchr(p + 1, ' ');
			field++;
		}
		t->tid[t->n] = atol(de->d_name);
		t->ns[t->n] = ns;
		t->idle[t->n++] = p && atoi(p + 1) == SCHED_IDLE;
	}
	closedir(d);
}

/* The parent's CPU time (ms) from `a` to `b`, all of it or only its
 * threads at SCHED_IDLE by the end; a thread new in `b` counts whole.
 * With WORK_THREADS set, each thread's share goes to stderr (which of
 * the tracer's threads competes with the workload). */
static double parent_ms(const struct threads *a, const struct threads *b, int only_idle)
{
	uint64_t sum = 0;
	int show = !only_idle && getenv("WORK_THREADS");

	for (int i = 0; i < b->n; i++) {
		uint64_t before = 0;

		if (only_idle && !b->idle[i])
			continue;
		for (int j = 0; j < a->n; j++)
			if (a->tid[j] == b->tid[i])
				before = a->ns[j];
		sum += b->ns[i] > before ? b->ns[i] - before : 0;
		if (show && b->ns[i] > before)
			fprintf(stderr, "thread %ld %s%s: %.1f ms\n", b->tid[i], b->comm[i],
				b->idle[i] ? " (SCHED_IDLE)" : "", (b->ns[i] - before) / 1e6);
	}
	return sum / 1e6;
}

int main(int argc, char **argv)
{
	static struct threads ta, tb;
	struct timespec a, b;
	struct rusage ru;
	uint64_t r;

	if (argc > 1 && argv[1][0] == 'n') {
		clock_gettime(CLOCK_MONOTONIC, &a);
		printf("%.1f\n", ms(&a));
		return 0;
	}
	read_threads(&ta);
	clock_gettime(CLOCK_MONOTONIC, &a);
	r = run(argc > 1 ? atol(argv[1]) : 2000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	read_threads(&tb);
	getrusage(RUSAGE_SELF, &ru);
	printf("%.1f %.1f %.1f %.1f %.1f\n", ms(&b) - ms(&a), ms(&b),
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3,
	       parent_ms(&ta, &tb, 0), parent_ms(&ta, &tb, 1));
	return r == 42;
}

/* tracerig-demo: a CPU workload with known functions and a known CPU split.
 *
 * Every worker thread ("demo-worker") runs slices of 10 ms of CPU time,
 * split by the thread's CPU time, not by wall-clock time or iterations,
 * between three exported functions:
 *
 *	demo_hot   6 ms  (60%)
 *	demo_warm  3 ms  (30%)
 *	demo_cool  1 ms  (10%)
 *
 * CPU time, because that is what a CPU profile measures: split by wall-clock
 * time, a function preempted in the middle of its share loses the rest of it
 * while the next one starts afresh, so on a loaded machine the longest
 * function lost the most and the split drifted towards equal thirds.
 *
 * Each spins in its own body (the frame samples land in), reached through
 * demo_worker -> demo_run_slice -> demo_hot/demo_warm/demo_cool.  With --fork,
 * halfway through the run, a short-lived child process ("demo-child") spins
 * ~200 ms of CPU in demo_child_spin and exits, to test catching short-lived
 * children of a process that is already being traced.  Built with frame
 * pointers, without inlining and with -rdynamic so the names are in .symtab
 * and .dynsym.
 *
 * It is the built-in workload of the quick start and of the perf_events
 * backend's tests: a profile of it should show about 60/30/10, however
 * loaded the machine.  At exit it prints the CPU time it got, which is what
 * the number of samples follows (on a loaded machine, much less than
 * threads x seconds).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEMO_EXIT_USAGE 3
#define DEMO_SLICE_NS 10000000ull /* one slice: 10 ms of CPU time */
#define DEMO_CHILD_NS 200000000ull /* the --fork child: 200 ms of CPU time */
/* A spin stops when less than this is left: a clock read costs about as
 * much (see demo_spin_next). */
#define DEMO_SPIN_SLACK_NS 5000ull

/* Exported (not static) so they are visible to every symbolizer. */
void demo_hot(uint64_t ns);
void demo_warm(uint64_t ns);
void demo_cool(uint64_t ns);
void demo_child_spin(uint64_t ns);
void demo_run_slice(const unsigned int split[3]);
void *demo_worker(void *arg);

struct demo_options {
	uint64_t duration_ns;
	unsigned int threads;
	unsigned int split[3]; /* percent of each slice: hot, warm, cool */
	int fork_child;
};

static struct demo_options opts = {
	.duration_ns = 3000000000ull,
	.threads = 2,
	.split = { 60, 30, 10 },
};

/* Keeps the arithmetic from being optimized away. */
volatile uint64_t demo_sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's CPU time: what it ran, not how long it waited for a
 * CPU.  Unlike CLOCK_MONOTONIC it is a system call (no vDSO), a few
 * microseconds on some machines, and a sample taken in it lands in the
 * kernel, not in the spinning function: hence the few reads per spin. */
static uint64_t cpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spin iterations per nanosecond of CPU, learnt by each thread as it runs;
 * the first guess is low (about 20 ns an iteration), so the first chunk
 * never overshoots. */
static __thread double demo_iters_per_ns = 0.05;

struct demo_spin {
	uint64_t end, last, chunk; /* thread CPU ns; iterations of the last chunk */
};

static void demo_spin_start(struct demo_spin *s, uint64_t ns)
{
	s->last = cpu_now_ns();
	s->end = s->last + ns;
	s->chunk = 0;
}

/* How many iterations to spin next, 0 when the CPU time is spent.  Each
 * chunk is 7/8 of what is left at the learnt rate, so a spin reads the
 * clock about log8(ns / DEMO_SPIN_SLACK_NS) + 2 times (6 for 6 ms) and
 * ends within DEMO_SPIN_SLACK_NS of its CPU time whatever the preemption. */
static uint64_t demo_spin_next(struct demo_spin *s)
{
	uint64_t now = cpu_now_ns(), left;

	/* Chunks of 50 us or more teach the rate (shorter ones are mostly
	 * the clock read itself). */
	if (s->chunk && now - s->last >= 50000)
		demo_iters_per_ns = (3 * demo_iters_per_ns + (double)s->chunk / (double)(now - s->last)) / 4;
	s->last = now;
	if (now + DEMO_SPIN_SLACK_NS >= s->end)
		return 0;
	left = s->end - now;
	s->chunk = (uint64_t)((double)left * 7 / 8 * demo_iters_per_ns) + 1;
	return s->chunk;
}

/* The spin is written out in each function (only the clock reads are
 * shared) so the samples land in the named function itself, not in a
 * common leaf. */
#define DEMO_SPIN(ns, seed)                                                     \
	do {                                                                    \
		struct demo_spin s_;                                            \
		uint64_t x_ = (seed), n_;                                       \
		demo_spin_start(&s_, (ns));                                     \
		while ((n_ = demo_spin_next(&s_)))                              \
			for (uint64_t i_ = 0; i_ < n_; i_++) {                  \
				x_ = x_ * 6364136223846793005ull + 1442695040888963407ull; \
				__asm__ volatile("" : "+r"(x_));                \
			}                                                       \
		demo_sink = x_;                                                 \
	} while (0)

__attribute__((noinline)) void demo_hot(uint64_t ns)
{
	DEMO_SPIN(ns, 1);
}

__attribute__((noinline)) void demo_warm(uint64_t ns)
{
	DEMO_SPIN(ns, 2);
}

__attribute__((noinline)) void demo_cool(uint64_t ns)
{
	DEMO_SPIN(ns, 3);
}

__attribute__((noinline)) void demo_child_spin(uint64_t ns)
{
	DEMO_SPIN(ns, 4);
}

__attribute__((noinline)) void demo_run_slice(const unsigned int split[3])
{
	if (split[0])
		demo_hot(DEMO_SLICE_NS * split[0] / 100);
	if (split[1])
		demo_warm(DEMO_SLICE_NS * split[1] / 100);
	if (split[2])
		demo_cool(DEMO_SLICE_NS * split[2] / 100);
}

__attribute__((noinline)) void *demo_worker(void *arg)
{
	uint64_t end = *(const uint64_t *)arg;

	while (now_ns() < end)
		demo_run_slice(opts.split);
	return NULL;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: tracerig-demo [--seconds N] [--threads N] [--fork] [--split A,B,C]\n"
		"\n"
		"A CPU workload with a known profile: each worker thread (demo-worker)\n"
		"spends 60%% of its CPU time in demo_hot, 30%% in demo_warm, 10%% in\n"
		"demo_cool, however loaded the machine.  At exit it prints the CPU time\n"
		"it got (\"tracerig-demo: done: X s of CPU\" on stderr).\n"
		"\n"
		"  --seconds N    run for N seconds (default 3, may be fractional)\n"
		"  --threads N    worker threads (default 2, 1-1024)\n"
		"  --fork         also run a child process that spins ~200 ms of CPU\n"
		"                 time in demo_child_spin and exits\n"
		"  --split A,B,C  percent of CPU time in demo_hot,demo_warm,demo_cool\n"
		"                 (default 60,30,10; must add up to 100)\n"
		"  -h, --help     this help\n"
		"\n"
		"Exit status: 0 done, 1 could not start a thread or process, 3 bad arguments.\n");
}

__attribute__((format(printf, 1, 2))) static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "tracerig-demo: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	usage(stderr);
	return DEMO_EXIT_USAGE;
}

static int parse_seconds(const char *arg, uint64_t *ns)
{
	char *end;
	double s;

	errno = 0;
	s = strtod(arg, &end);
	if (end == arg || *end || errno || !(s >= 0) || s > 86400.0 * 365)
		return -EINVAL;
	*ns = (uint64_t)(s * 1e9);
	return 0;
}

static int parse_uint(const char *arg, unsigned long max, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (*arg < '0' || *arg > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (end == arg || *end || errno || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

static int parse_split(const char *arg, unsigned int split[3])
{
	char buf[64], *save = NULL, *tok;
	unsigned int n = 0, sum = 0;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == 3 || parse_uint(tok, 100, &split[n]) < 0)
			return -EINVAL;
		sum += split[n++];
	}
	return n == 3 && sum == 100 ? 0 : -EINVAL;
}

static int parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		char name[16];

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 1;
		}
		if (strcmp(a, "--fork") == 0) {
			opts.fork_child = 1;
			continue;
		}
		if (strncmp(a, "--", 2) == 0 && strchr(a, '=')) {
			/* --seconds=N */
			size_t len = (size_t)(strchr(a, '=') - a);

			if (len >= sizeof(name))
				return bad_usage("unknown argument '%s'", a);
			memcpy(name, a, len);
			name[len] = '\0';
			val = a + len + 1;
			a = name;
		}
		if (strcmp(a, "--seconds") && strcmp(a, "--threads") && strcmp(a, "--split"))
			return bad_usage("unknown argument '%s'", argv[i]);
		if (!val) {
			if (i + 1 >= argc)
				return bad_usage("%s needs a value", a);
			val = argv[++i];
		}
		if (strcmp(a, "--seconds") == 0) {
			if (parse_seconds(val, &opts.duration_ns) < 0)
				return bad_usage("--seconds %s: not a number of seconds (use 3 or 0.5)",
						 val);
		} else if (strcmp(a, "--threads") == 0) {
			if (parse_uint(val, 1024, &opts.threads) < 0 || opts.threads == 0)
				return bad_usage("--threads %s: not a thread count from 1 to 1024",
						 val);
		} else {
			if (parse_split(val, opts.split) < 0)
				return bad_usage("--split %s: want three percentages adding up to 100 "
						 "(like 60,30,10)", val);
		}
	}
	return 0;
}

static void sleep_until(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ull),
		.tv_nsec = (long)(ns % 1000000000ull),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static pid_t start_child(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, "demo-child", 0, 0, 0);
		demo_child_spin(DEMO_CHILD_NS);
		_exit(0);
	}
	return pid;
}

int main(int argc, char **argv)
{
	pthread_t *threads = NULL;
	unsigned int started = 0;
	pid_t child = -1;
	uint64_t start, end;
	int ret, status = 0;

	ret = parse_args(argc, argv);
	if (ret)
		return ret == 1 ? 0 : ret;

	fprintf(stderr, "tracerig-demo: pid %d, %u threads, %g s\n", (int)getpid(),
		opts.threads, (double)opts.duration_ns / 1e9);
	threads = calloc(opts.threads, sizeof(*threads));
	if (!threads) {
		fprintf(stderr, "tracerig-demo: out of memory\n");
		return 1;
	}
	start = now_ns();
	end = start + opts.duration_ns;
	for (; started < opts.threads; started++) {
		ret = pthread_create(&threads[started], NULL, demo_worker, &end);
		if (ret) {
			fprintf(stderr, "tracerig-demo: cannot start worker thread %u: %s\n",
				started + 1, strerror(ret));
			status = 1;
			break;
		}
		pthread_setname_np(threads[started], "demo-worker");
	}
	if (opts.fork_child && status == 0) {
		/* Halfway, so a tracer attached with -p after our start sees it. */
		sleep_until(start + opts.duration_ns / 2);
		child = start_child();
		if (child < 0) {
			fprintf(stderr, "tracerig-demo: cannot fork the child: %s\n",
				strerror(errno));
			status = 1;
		}
	}
	for (unsigned int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	if (child > 0) {
		int wstatus;

		while (waitpid(child, &wstatus, 0) < 0 && errno == EINTR)
			;
	}
	free(threads);
	if (status == 0) {
		struct rusage ru;

		/* What the samples follow: a loaded machine gives the workers
		 * less CPU than threads x seconds.  (The --fork child's is not
		 * in it: RUSAGE_SELF counts no children.) */
		if (getrusage(RUSAGE_SELF, &ru) == 0)
			fprintf(stderr, "tracerig-demo: done: %.3f s of CPU\n",
				(double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
					(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	}
	return status;
}

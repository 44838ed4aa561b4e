/* A traced test application with known events.
 *
 *   lttng-app [-n COUNT] [-i INTERVAL_US] [-t SECONDS] [-T THREADS] [-m hello|tick]
 *             [-r RATE] [-w WORK] [-M FILE]
 *
 * hello mode (default): every thread emits COUNT `tracerig_test:hello`
 * events (INFO level), each followed by a `tracerig_test:tick` (DEBUG level)
 * with the same seq, INTERVAL_US apart (or keeps going for SECONDS when -t
 * is given).
 * tick mode (the benchmark): emits COUNT `tracerig_test:tick` events, paced
 * at RATE events/s (0 = as fast as it can), with WORK rounds of busy
 * arithmetic before each event (the application's own work), and prints
 * "events=N elapsed_ns=T" on stdout.
 * -M FILE (hello mode): on each SIGUSR2 the main thread's next event says
 * "tracerig-mark" instead of "tracerig-hello", and once it is emitted its
 * seq is written to FILE (replaced whole): a marker tests can look for in
 * a trace, known to have been emitted before they go on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tp.h"

struct opts {
	unsigned long long count;
	unsigned long interval_us;
	double seconds;
	unsigned threads;
	int tick;
	unsigned long long rate;
	unsigned long work;
	const char *mark_file;
};

static struct opts opt = { .count = 10, .interval_us = 1000, .threads = 1 };

static volatile sig_atomic_t marks_asked;

static void on_sigusr2(int sig)
{
	(void)sig;
	marks_asked++;
}

/* FILE gets "SEQ\n", through a rename so a reader never sees half. */
static void write_mark(uint32_t seq)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", opt.mark_file);
	f = fopen(tmp, "w");
	if (!f) {
		perror(tmp);
		return;
	}
	fprintf(f, "%u\n", (unsigned)seq);
	if (fclose(f) != 0 || rename(tmp, opt.mark_file) != 0)
		perror(opt.mark_file);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *hello_thread(void *arg)
{
	uint64_t end = opt.seconds > 0 ? now_ns() + (uint64_t)(opt.seconds * 1e9) : 0;
	int pid = getpid(), tid = gettid(), main_thread = arg == NULL;
	sig_atomic_t marks_done = 0;

	for (uint32_t seq = 0; end ? now_ns() < end : seq < opt.count; seq++) {
		int mark = main_thread && opt.mark_file && marks_done != marks_asked;

		if (mark)
			marks_done = marks_asked;
		lttng_ust_tracepoint(tracerig_test, hello, seq, pid, tid,
				     mark ? "tracerig-mark" : "tracerig-hello");
		if (mark)
			write_mark(seq);
		/* A DEBUG-level twin, for the log-level filter test. */
		lttng_ust_tracepoint(tracerig_test, tick, seq);
		if (opt.interval_us)
			usleep(opt.interval_us);
	}
	return NULL;
}

/* Stands for the work an application does between two events. */
static volatile uint64_t work_sink;

static void do_work(unsigned long rounds)
{
	uint64_t x = work_sink | 1;

	for (unsigned long i = 0; i < rounds; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	work_sink = x;
}

static int run_tick(void)
{
	uint64_t start = now_ns(), period = opt.rate ? 1000000000ull / opt.rate : 0;

	for (uint64_t seq = 0; seq < opt.count; seq++) {
		if (period)
			while (now_ns() - start < seq * period)
				;
		if (opt.work)
			do_work(opt.work);
		lttng_ust_tracepoint(tracerig_test, tick, seq);
	}
	printf("events=%llu elapsed_ns=%llu\n", opt.count, (unsigned long long)(now_ns() - start));
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t threads[64];
	int c;

	while ((c = getopt(argc, argv, "n:i:t:T:m:r:w:M:")) != -1) {
		switch (c) {
		case 'n': opt.count = strtoull(optarg, NULL, 0); break;
		case 'i': opt.interval_us = strtoul(optarg, NULL, 0); break;
		case 't': opt.seconds = strtod(optarg, NULL); break;
		case 'T': opt.threads = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'm': opt.tick = strcmp(optarg, "tick") == 0; break;
		case 'r': opt.rate = strtoull(optarg, NULL, 0); break;
		case 'w': opt.work = strtoul(optarg, NULL, 0); break;
		case 'M': opt.mark_file = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-n COUNT] [-i INTERVAL_US] [-t SECONDS] "
				"[-T THREADS] [-m hello|tick] [-r RATE] [-w WORK] [-M FILE]\n", argv[0]);
			return 2;
		}
	}
	if (opt.tick)
		return run_tick();
	if (opt.threads < 1 || opt.threads > 64) {
		fprintf(stderr, "lttng-app: -T must be 1..64\n");
		return 2;
	}
	if (opt.mark_file) {
		struct sigaction sa = { .sa_handler = on_sigusr2 };

		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGUSR2, &sa, NULL) < 0) {
			perror("sigaction");
			return 1;
		}
	}
	for (unsigned i = 1; i < opt.threads; i++) {
		/* Not NULL: only the main thread (NULL) emits the marks. */
		int ret = pthread_create(&threads[i], NULL, hello_thread, &opt);

		if (ret) {
			fprintf(stderr, "lttng-app: pthread_create: %s\n", strerror(ret));
			return 1;
		}
	}
	hello_thread(NULL);
	for (unsigned i = 1; i < opt.threads; i++)
		pthread_join(threads[i], NULL);
	return 0;
}

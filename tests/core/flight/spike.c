/* The flight recorder's triggers' workload: idle (asleep) for IDLE
 * seconds, then hot in spike_hot for HOT seconds of its own
 * CLOCK_MONOTONIC, then idle until killed — or, with "crash", dead on a
 * SIGSEGV right after the hot part.  It says when each part began
 * (CLOCK_MONOTONIC ns, the clock of the samples) on a line of STATUS_FILE,
 * so a test ties what it sees to what the workload did.
 *
 *   spike STATUS_FILE IDLE_SECONDS HOT_SECONDS [crash]
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int say(const char *path, const char *part, uint64_t t)
{
	FILE *f = fopen(path, "a");

	if (!f)
		return -1;
	fprintf(f, "%s %llu\n", part, (unsigned long long)t);
	return fclose(f);
}

static void idle_for(double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };

	while (nanosleep(&ts, &ts) != 0)
		;
}

__attribute__((noinline, noclone)) void spike_hot(uint64_t until)
{
	do
		for (unsigned i = 0; i < 100000; i++)
			sink += i * 2654435761u;
	while (now_ns() < until);
}

int main(int argc, char **argv)
{
	/* A crash must not leave a core file wherever the test runs. */
	struct rlimit no_core = { 0, 0 };
	double idle, hot;

	if (argc < 4) {
		fprintf(stderr, "usage: spike STATUS_FILE IDLE_SECONDS HOT_SECONDS [crash]\n");
		return 2;
	}
	idle = atof(argv[2]);
	hot = atof(argv[3]);
	setrlimit(RLIMIT_CORE, &no_core);
	if (say(argv[1], "idle", now_ns()) < 0)
		return 1;
	idle_for(idle);
	if (say(argv[1], "spike", now_ns()) < 0)
		return 1;
	spike_hot(now_ns() + (uint64_t)(hot * 1e9));
	if (argc > 4 && strcmp(argv[4], "crash") == 0) {
		if (say(argv[1], "crash", now_ns()) < 0)
			return 1;
		raise(SIGSEGV);
	}
	if (say(argv[1], "calm", now_ns()) < 0)
		return 1;
	for (;;)
		pause();
}

/* The flight recorder's workload: phase_a is hot for its first A seconds
 * of its own CLOCK_MONOTONIC, then phase_b until it is killed.  It says
 * when each phase began (CLOCK_MONOTONIC ns, the clock of the samples) on
 * a line of the file named by argv[1], so a test ties the phases to what
 * the workload did rather than to when it guesses the workload ran.
 *
 *   phases STATUS_FILE [A_SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int say(const char *path, const char *phase, uint64_t t)
{
	FILE *f = fopen(path, "a");

	if (!f)
		return -1;
	fprintf(f, "%s %llu\n", phase, (unsigned long long)t);
	return fclose(f);
}

/* Each phase is hot in its own frame: a sample's innermost function names
 * the phase (the clock is read once per 100000 rounds). */
__attribute__((noinline, noclone)) void phase_a(uint64_t until)
{
	do
		for (unsigned i = 0; i < 100000; i++)
			sink += i * 2654435761u;
	while (now_ns() < until);
}

__attribute__((noinline, noclone)) void phase_b(void)
{
	for (;;)
		for (unsigned i = 0; i < 100000; i++)
			sink += i * 2654435761u;
}

int main(int argc, char **argv)
{
	double a_seconds = argc > 2 ? atof(argv[2]) : 6.0;
	uint64_t start;

	if (argc < 2) {
		fprintf(stderr, "usage: phases STATUS_FILE [A_SECONDS]\n");
		return 2;
	}
	start = now_ns();
	if (say(argv[1], "phase_a", start) < 0)
		return 1;
	phase_a(start + (uint64_t)(a_seconds * 1e9));
	if (say(argv[1], "phase_b", now_ns()) < 0)
		return 1;
	phase_b();
	return 0;
}

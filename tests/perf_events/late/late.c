/* A program whose hottest code is loaded late and gone by the end: it
 * spins in its own early_spin, dlopen()s a library and spins in it, then
 * exec()s another program (which spins in its own function) and exits
 * before tracerig converts anything.  Usage: late LIB [PROG ARGS...] */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void early_spin(double seconds)
{
	volatile unsigned long x = 0;
	double end = now() + seconds;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
}

int main(int argc, char **argv)
{
	void (*hot)(double);
	void *lib;

	if (argc < 2) {
		fprintf(stderr, "usage: late LIB [PROG ARGS...]\n");
		return 2;
	}
	early_spin(0.3);
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib || !(hot = (void (*)(double))dlsym(lib, "late_hot"))) {
		fprintf(stderr, "late: %s\n", dlerror());
		return 1;
	}
	hot(0.6);
	if (argc > 2) {
		execv(argv[2], argv + 2);
		perror(argv[2]);
		return 1;
	}
	return 0;
}

/* A program whose waits happen in code loaded late and gone by the end: it
 * blocks in its own early_wait, dlopen()s a library and blocks in its
 * late_wait, then exec()s another program (which blocks in its own
 * function) and exits before tracerig names any stack.
 * Usage: lateblock LIB [PROG ARGS...] */
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

/* The libc wrapper keeps no frame: the frame-pointer walk goes from it to
 * the caller of the function that called it, so each wait is two deep. */
__attribute__((noinline)) static void early_sleep(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void early_wait(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		early_sleep();
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	void (*late)(double);
	void *lib;

	if (argc < 2) {
		fprintf(stderr, "usage: lateblock LIB [PROG ARGS...]\n");
		return 2;
	}
	early_wait(0.3);
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib || !(late = (void (*)(double))dlsym(lib, "late_wait"))) {
		fprintf(stderr, "lateblock: %s\n", dlerror());
		return 1;
	}
	late(0.5);
	if (argc > 2) {
		execv(argv[2], argv + 2);
		perror(argv[2]);
		return 1;
	}
	return 0;
}

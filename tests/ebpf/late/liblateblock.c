/* The library lateblock.c loads with dlopen(): its code exists only
 * between the dlopen and the exit (or exec) of the process. */
#include <time.h>

__attribute__((noinline)) static void late_sleep(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void late_wait(double seconds)
{
	struct timespec ts;
	double end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + seconds;
	do {
		late_sleep();
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < end);
	__asm__ volatile("" ::: "memory");
}

/* The library late.c loads with dlopen(): its code exists only between the
 * dlopen and the exit of the process. */
#include <time.h>

__attribute__((noinline)) void late_hot(double seconds)
{
	volatile unsigned long x = 0;
	struct timespec ts;
	double end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + seconds;
	for (;;) {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec + ts.tv_nsec / 1e9 >= end)
			break;
	}
}

/* What late.c exec()s into: another image at other addresses, in the same
 * process.  It reads the clock often, so that some samples land in the
 * vDSO. */
#include <time.h>

__attribute__((noinline)) static void after_exec_spin(double seconds)
{
	volatile unsigned long x = 0;
	struct timespec ts;
	double end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + seconds;
	for (;;) {
		for (int i = 0; i < 200; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec + ts.tv_nsec / 1e9 >= end)
			break;
	}
}

int main(void)
{
	after_exec_spin(0.4);
	return 0;
}

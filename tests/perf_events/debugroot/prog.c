#include <stdlib.h>
#include <time.h>
void lib_inner(volatile unsigned long *n);
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	volatile unsigned long n = 0;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		lib_inner(&n);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return 0;
}

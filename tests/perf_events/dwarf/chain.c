/* The dwarf test's workload, built -O2 -fomit-frame-pointer: main ->
 * chain_outer -> chain_middle -> (libchain.so) lib_inner -> lib_leaf, each
 * a separate frame (noinline, and a call that is not a tail call), none
 * with a frame pointer.  Runs for argv[1] seconds. */
#include <stdlib.h>
#include <time.h>

#include "chain.h"

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long chain_middle(unsigned long x)
{
	unsigned long r = lib_inner(x);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

__attribute__((noinline)) static unsigned long chain_outer(unsigned long x)
{
	unsigned long r = chain_middle(x);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

int main(int argc, char **argv)
{
	double until = seconds() + (argc > 1 ? atof(argv[1]) : 2.0);
	unsigned long sum = 0;

	while (seconds() < until)
		sum += chain_outer(sum);
	return sum == 42; /* keeps the work */
}

/* A program whose stacks end in a different address every sample, in
 * nothing mapped: the frame-pointer chain of code built without frame
 * pointers, as a long system-wide session meets in every process
 * (tests/perf_events/unmapped.sh).  Spins with rbp pointing at a fake
 * frame whose return address steps through 4096 values under 0x11000.
 *
 *   fakechain [SECONDS]   (x86_64) */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
static void spin_under(uint64_t ret)
{
	volatile uint64_t frame[2] = { 0, ret };
	__asm__ volatile("mov %%rbp, %%r8\n\t"
			 "mov %0, %%rbp\n\t"
			 "mov $20000, %%ecx\n"
			 "1: dec %%ecx\n\t"
			 "jnz 1b\n\t"
			 "mov %%r8, %%rbp\n\t"
			 : : "r"(frame) : "rcx", "r8", "memory");
}
int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = 0;; i++) {
		spin_under(0x1000 + (i % 4096) * 16);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
			return 0;
	}
}

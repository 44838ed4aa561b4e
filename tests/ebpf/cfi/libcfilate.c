/* The library tests/ebpf/cfi/nofp2 dlopen()s late (tests/ebpf/cfi.sh):
 * built -O2 -fomit-frame-pointer, so that its two frames are found only
 * by CFI the walker did not have when the process started. */
#include <time.h>

#define STEP_NS 5000000L

long late_lib_blocker(int n);
long late_lib_entry(int n);

__attribute__((noinline)) long late_lib_blocker(int n)
{
	struct timespec ts = { 0, STEP_NS };
	long slept = 0;

	for (int i = 0; i < n; i++)
		slept += nanosleep(&ts, NULL) == 0;
	return slept;
}

/* The result is used after the call: returned, the call would be a tail
 * call and this frame would not be on the stack. */
__attribute__((noinline)) long late_lib_entry(int n)
{
	long slept = late_lib_blocker(n);

	__asm__ volatile("" ::: "memory");
	return slept;
}

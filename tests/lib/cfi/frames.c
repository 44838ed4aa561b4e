/* Code for tests/lib/test_cfi's tables, built (tests/local.mk) as
 * libraries that hold the same code with its CFI in .debug_frame alone
 * (-g -fno-asynchronous-unwind-tables -fno-unwind-tables), in .eh_frame
 * with .eh_frame_hdr, in .eh_frame without it, and as an executable with
 * .debug_frame beside the C library's .eh_frame.  A caller's callback
 * runs three frames down, each frame of another shape: one on RSP, one
 * on RBP (a variable-length array), one on RSP again.  Each function
 * notes where it returns to, for the walk to be checked against. */
#include <stddef.h>

#define FRAMES_RETURNS 3

int frames_top(int (*cb)(int), int x);
int frames_middle(int (*cb)(int), int x);
int frames_bottom(int (*cb)(int), int x);

void *frames_returns[FRAMES_RETURNS]; /* bottom's, middle's, top's */
static volatile int sink;

/* Aligned: the padding after each function is a gap no FDE covers. */
__attribute__((noinline, aligned(64))) int frames_bottom(int (*cb)(int), int x)
{
	volatile int buf[12];
	int r;

	frames_returns[0] = __builtin_return_address(0);
	for (int i = 0; i < 12; i++)
		buf[i] = x + i;
	r = cb(buf[x & 7]) * 3;
	sink += r;
	return r + 1;
}

__attribute__((noinline, aligned(64))) int frames_middle(int (*cb)(int), int x)
{
	volatile char vla[(x & 15) + 16];
	int r;

	frames_returns[1] = __builtin_return_address(0);
	vla[x & 15] = (char)x;
	r = frames_bottom(cb, vla[x & 15] + 1);
	sink ^= r;
	return r - 2;
}

__attribute__((noinline, aligned(64))) int frames_top(int (*cb)(int), int x)
{
	int r;

	frames_returns[2] = __builtin_return_address(0);
	r = frames_middle(cb, x + 1);
	sink -= r;
	return r * 5;
}

#ifdef FRAMES_MAIN
static int identity(int x)
{
	return x;
}

int main(void)
{
	return frames_top(identity, 1) == 0;
}
#endif

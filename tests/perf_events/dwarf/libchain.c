/* The library half of the chain: lib_inner -> lib_leaf, where the time goes. */
#include "chain.h"

__attribute__((noinline)) static unsigned long lib_leaf(unsigned long x)
{
	for (int i = 0; i < 200000; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) unsigned long lib_inner(unsigned long x)
{
	unsigned long r = lib_leaf(x ^ 0x9e3779b97f4a7c15ul);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

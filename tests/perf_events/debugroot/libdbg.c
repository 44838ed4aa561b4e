__attribute__((noinline)) void lib_leaf(volatile unsigned long *n)
{
	for (unsigned long i = 0; i < 200000; i++)
		*n += i * 7;
}

__attribute__((noinline)) void lib_inner(volatile unsigned long *n)
{
	lib_leaf(n);
	*n ^= 1;
}

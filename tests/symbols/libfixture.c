/* The shared-library fixture: a global and a file-local function. */
#include <stdint.h>

int tr_fixture_lib_func(int x);
void *tr_fixture_lib_local_addr(void);

__attribute__((noinline, used)) static int fixture_lib_local(int x)
{
	return x * 5;
}

__attribute__((noinline)) int tr_fixture_lib_func(int x)
{
	return fixture_lib_local(x) + 2;
}

void *tr_fixture_lib_local_addr(void)
{
	return (void *)(uintptr_t)fixture_lib_local;
}

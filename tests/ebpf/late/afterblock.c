/* What lateblock exec()s: a new image that blocks in its own function. */
#include <time.h>

__attribute__((noinline)) static void after_sleep(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void after_wait(int times)
{
	for (int i = 0; i < times; i++)
		after_sleep();
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	after_wait(30);
	return 0;
}

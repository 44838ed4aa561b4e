/* The program tests/core/flight_sideband.sh's workload execs: a thread
 * named sbspin dlopen()s LIB and runs its sb_hot_fn under spin_thread;
 * "hot" goes to STATUS once it runs.
 *
 *   sbexeced LIB STATUS
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

static const char *lib_path, *status_path;

__attribute__((noinline, noclone)) static void spin_thread(void (*hot)(void))
{
	hot();
	__asm__ volatile("" ::: "memory");
}

static void *run(void *arg)
{
	void *lib;
	void (*hot)(void);
	FILE *f;

	(void)arg;
	prctl(PR_SET_NAME, "sbspin", 0, 0, 0);
	lib = dlopen(lib_path, RTLD_NOW);
	hot = lib ? (void (*)(void))dlsym(lib, "sb_hot_fn") : NULL;
	if (!hot)
		return NULL;
	f = fopen(status_path, "a");
	if (f) {
		fprintf(f, "hot %d\n", (int)getpid());
		fclose(f);
	}
	spin_thread(hot);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 3)
		return 2;
	lib_path = argv[1];
	status_path = argv[2];
	if (pthread_create(&t, NULL, run, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	return 1; /* the thread never ends but by failing */
}

/* The workload of tests/core/flight_sideband.sh, started before the flight
 * session: it idles until the file GO exists, then starts
 *   - a process of its own (fork, no exec), named as it is (sblaunch),
 *     that dlopen()s LIB and runs its sb_hot_fn under spin_forked, a
 *     function of this program (mapped only by what the fork copied);
 *   - a new program (fork, exec EXECED LIB STATUS), which does the same
 *     from a thread it names sbspin;
 * and writes "forked PID" and "execed PID" lines to STATUS, and
 * "forkhot PID" once the first process runs the library's function.
 *
 *   sblaunch STATUS GO LIB EXECED
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

__attribute__((noinline, noclone)) static void spin_forked(void (*hot)(void))
{
	hot();
	__asm__ volatile("" ::: "memory"); /* keeps the frame a caller */
}

static int say(const char *path, const char *what, pid_t pid)
{
	FILE *f = fopen(path, "a");

	if (!f)
		return -1;
	fprintf(f, "%s %d\n", what, (int)pid);
	return fclose(f);
}

int main(int argc, char **argv)
{
	pid_t forked, execed;

	if (argc < 5) {
		fprintf(stderr, "usage: sblaunch STATUS GO LIB EXECED\n");
		return 2;
	}
	while (access(argv[2], F_OK) != 0)
		usleep(20000);
	forked = fork();
	if (forked == 0) {
		void *lib = dlopen(argv[3], RTLD_NOW);
		void (*hot)(void) = lib ? (void (*)(void))dlsym(lib, "sb_hot_fn") : NULL;

		if (!hot || say(argv[1], "forkhot", getpid()) < 0)
			_exit(3);
		spin_forked(hot);
		_exit(0);
	}
	execed = fork();
	if (execed == 0) {
		execl(argv[4], argv[4], argv[3], argv[1], (char *)NULL);
		_exit(127);
	}
	if (forked < 0 || execed < 0 || say(argv[1], "forked", forked) < 0 ||
	    say(argv[1], "execed", execed) < 0)
		return 1;
	for (;;)
		pause();
}

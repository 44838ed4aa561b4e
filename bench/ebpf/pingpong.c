/* Context-switch-heavy workload for the ebpf benchmark: two processes
 * pinned to one CPU hand a byte back and forth over two pipes, so that
 * every hand-off is one context switch from one to the other.
 *   pingpong ROUNDS [CPU]  -> prints nanoseconds per context switch */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100000;
	int cpu = argc > 2 ? atoi(argv[2]) : 0;
	int ab[2], ba[2];
	struct timespec t0, t1;
	pid_t child;
	char c = 0;
	int status;

	if (rounds <= 0 || pipe(ab) < 0 || pipe(ba) < 0) {
		fprintf(stderr, "pingpong: usage: pingpong ROUNDS [CPU]\n");
		return 2;
	}
	if (pin(cpu) < 0) {
		perror("pingpong: sched_setaffinity");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("pingpong: fork");
		return 1;
	}
	if (child == 0) {
		for (long i = 0; i < rounds; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) {
			perror("pingpong: pipe");
			return 1;
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "pingpong: the other side failed\n");
		return 1;
	}
	/* Two switches per round: to the child and back. */
	printf("%.1f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (2.0 * rounds));
	return 0;
}

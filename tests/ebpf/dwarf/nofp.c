/* callchain = dwarf's workload (tests/ebpf/dwarf.sh): built -O2
 * -fomit-frame-pointer, like Debian's libc it calls, so that only the CFI
 * knows the callers.  One thread sleeps in nanosleep from my_sleeper, one
 * reads a pipe from my_reader while a third writes it every few
 * milliseconds from my_writer.  The calls are in loops that use their
 * results, so that none of them becomes a tail call (which would take its
 * caller off the stack whatever the unwinder), and noinline/noclone keep
 * each function under its own name.
 *
 *   nofp [-n ROUNDS]   ROUNDS sleeps of 5 ms and as many reads (200) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define STEP_NS 5000000L

long my_sleeper(int n);
long my_reader(int n);
long my_writer(int n);

static int rounds = 200;
static int pipefd[2];

__attribute__((noinline, noclone)) long my_sleeper(int n)
{
	struct timespec ts = { 0, STEP_NS };
	long slept = 0;

	for (int i = 0; i < n; i++)
		slept += nanosleep(&ts, NULL) == 0;
	return slept;
}

__attribute__((noinline, noclone)) long my_reader(int n)
{
	long got = 0;
	char c;

	for (int i = 0; i < n; i++)
		got += read(pipefd[0], &c, 1) == 1;
	return got;
}

__attribute__((noinline, noclone)) long my_writer(int n)
{
	struct timespec ts = { 0, STEP_NS };
	long put = 0;

	for (int i = 0; i < n; i++) {
		nanosleep(&ts, NULL);
		put += write(pipefd[1], "x", 1) == 1;
	}
	return put;
}

/* The results are stored after the call: returned, the call would be a
 * tail call and the thread function would not be on the stack. */
static void *sleeper_thread(void *arg)
{
	*(long *)arg = my_sleeper(rounds);
	return NULL;
}

static void *reader_thread(void *arg)
{
	*(long *)arg = my_reader(rounds);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t sleeper, reader;
	long slept = 0, got = 0, put;

	if (argc == 3 && argv[1][0] == '-' && argv[1][1] == 'n')
		rounds = atoi(argv[2]);
	if (pipe(pipefd) < 0) {
		perror("pipe");
		return 1;
	}
	if (pthread_create(&sleeper, NULL, sleeper_thread, &slept) ||
	    pthread_create(&reader, NULL, reader_thread, &got)) {
		fprintf(stderr, "nofp: cannot start the threads\n");
		return 1;
	}
	put = my_writer(rounds);
	pthread_join(sleeper, NULL);
	pthread_join(reader, NULL);
	if (slept != rounds || got != rounds || put != rounds) {
		fprintf(stderr, "nofp: %ld sleeps, %ld reads, %ld writes of %d\n", slept, got, put,
			rounds);
		return 1;
	}
	return 0;
}

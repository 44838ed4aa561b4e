/* The workload the ebpf tests trace: threads blocking in known functions
 * for known times (tests/ebpf/blockers.h), once or in a loop.
 *   workload [-n NAME] [-l] [-s MS] [-t FILE]
 * -n sets the process name (so two instances can be told apart), -l
 * repeats the scenario until killed, -s first spins MS milliseconds on the
 * CPU in spin_on_cpu (for the on-CPU side of the wall-clock view), -t
 * writes what each function took, as its thread measured it, to FILE:
 * "function microseconds" lines (of the last run), then "pid PID" and
 * "tid:function TID" of the threads blocking in the first two,
 * "cpu:spin_on_cpu US", the CPU time the spin got, and
 * "calls:blocked_in_short_sleep US US ...", each short sleep's time. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "blockers.h"

void spin_on_cpu(long ms);

__attribute__((noinline)) void spin_on_cpu(long ms)
{
	struct timespec now, end;
	volatile unsigned long sink = 0;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	do {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int write_times(const char *path, const struct tw_plan *plan, const struct tw_times *t,
		       uint64_t spin_cpu_ns)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -1;
	fprintf(f, "blocked_in_sleep %llu\nblocked_in_short_sleep %llu\n"
		"holding_mutex_sleep %llu\nblocked_in_pipe_read %llu\nblocked_on_mutex %llu\n",
		(unsigned long long)t->sleep_ns / 1000, (unsigned long long)t->short_ns / 1000,
		(unsigned long long)t->hold_ns / 1000, (unsigned long long)t->pipe_ns / 1000,
		(unsigned long long)t->mutex_ns / 1000);
	/* Who blocked: the roots of the folded stacks must name these. */
	fprintf(f, "pid %d\ntid:blocked_in_sleep %d\ntid:blocked_in_pipe_read %d\n", (int)getpid(),
		(int)t->sleep_tid, (int)t->pipe_tid);
	/* On a loaded machine the spin gets only part of its wall-clock time
	 * on the CPU: what it got is what the on-CPU side must show. */
	fprintf(f, "cpu:spin_on_cpu %llu\n", (unsigned long long)spin_cpu_ns / 1000);
	/* A check of min_block_us needs to know which short sleeps a loaded
	 * machine stretched past it (tw_short_calls_over). */
	fprintf(f, "calls:blocked_in_short_sleep");
	for (long i = 0; i < plan->short_sleeps && i < TW_SHORT_CALLS_MAX; i++)
		fprintf(f, " %llu", (unsigned long long)t->short_call_ns[i] / 1000);
	fprintf(f, "\n");
	return fclose(f);
}

int main(int argc, char **argv)
{
	const struct tw_plan plan = TW_PLAN_DEFAULT;
	const char *times_path = NULL;
	struct tw_times times;
	long spin_ms = 0;
	uint64_t spin_cpu_ns = 0;
	int loop = 0, opt;

	while ((opt = getopt(argc, argv, "n:ls:t:")) != -1) {
		switch (opt) {
		case 'n':
			/* Threads take the name of the thread creating them. */
			if (prctl(PR_SET_NAME, optarg, 0, 0, 0) < 0) {
				perror("workload: prctl");
				return 1;
			}
			break;
		case 'l':
			loop = 1;
			break;
		case 's':
			spin_ms = atol(optarg);
			break;
		case 't':
			times_path = optarg;
			break;
		default:
			fprintf(stderr, "usage: workload [-n NAME] [-l] [-s MS] [-t FILE]\n");
			return 2;
		}
	}
	if (spin_ms > 0) {
		uint64_t t0 = thread_cpu_ns();

		spin_on_cpu(spin_ms);
		spin_cpu_ns = thread_cpu_ns() - t0;
	}
	do {
		if (tw_run(&plan, &times) < 0) {
			fprintf(stderr, "workload: a blocking thread failed\n");
			return 1;
		}
		if (times_path && write_times(times_path, &plan, &times, spin_cpu_ns) != 0) {
			perror("workload: cannot write the times");
			return 1;
		}
	} while (loop);
	return 0;
}

/* The workload the ebpf tests trace: threads blocking in known functions
 * for known times (tests/ebpf/blockers.h), once or in a loop.
 *   workload [-n NAME] [-l]
 * -n sets the process name (so two instances can be told apart), -l
 * repeats the scenario until killed. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "blockers.h"

int main(int argc, char **argv)
{
	const struct tw_plan plan = TW_PLAN_DEFAULT;
	int loop = 0, opt;

	while ((opt = getopt(argc, argv, "n:l")) != -1) {
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
		default:
			fprintf(stderr, "usage: workload [-n NAME] [-l]\n");
			return 2;
		}
	}
	do {
		if (tw_run(&plan) < 0) {
			fprintf(stderr, "workload: a blocking thread failed\n");
			return 1;
		}
	} while (loop);
	return 0;
}

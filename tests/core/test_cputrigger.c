/* The flight recorder's CPU trigger (core/session/cputrigger.c): the decision fed
 * with numbers (no clock, no load), then the CPU time read from /proc for
 * a child that burns a known amount of CPU. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../core/session/cputrigger.h"
#include "../testing.h"

#define S 1000000000ull
/* A monotonic clock's reading far from 0, as a real one is. */
#define T0 (5000 * S)

/* Polls every second with `pct` percent of one CPU used in each. */
static int feed_seconds(struct tr_cpu_trigger *t, uint64_t *now, uint64_t *cpu, double pct,
			int seconds, int *fired_at)
{
	int fired = 0;

	for (int i = 0; i < seconds; i++) {
		*now += S;
		*cpu += (uint64_t)(pct / 100.0 * (double)S);
		if (tr_cpu_trigger_feed(t, *now, *cpu, 0)) {
			fired++;
			if (fired_at)
				*fired_at = (int)((*now - T0) / S);
		}
	}
	return fired;
}

DEF_TEST(fires_once_after_use_stays_above_for_the_time)
{
	struct tr_cpu_trigger t;
	uint64_t now = T0, cpu = 77 * S;
	int at = -1;

	tr_cpu_trigger_init(&t, 80, 5 * S);
	EXPECT_EQ_INT(0, tr_cpu_trigger_feed(&t, now, cpu, 0)); /* primes */
	EXPECT_EQ_INT(0, feed_seconds(&t, &now, &cpu, 20, 10, NULL));
	/* At 95% from second 10 on: above since second 10, held for 5 s at 15. */
	EXPECT_EQ_INT(1, feed_seconds(&t, &now, &cpu, 95, 10, &at));
	EXPECT_EQ_INT(15, at);
	EXPECT_TRUE(t.last_percent > 94.9 && t.last_percent < 95.1);
	/* Still above: no second snapshot for the same spike. */
	EXPECT_EQ_INT(0, feed_seconds(&t, &now, &cpu, 99, 10, NULL));
}

DEF_TEST(a_spike_shorter_than_the_time_does_not_fire)
{
	struct tr_cpu_trigger t;
	uint64_t now = T0, cpu = 0;

	tr_cpu_trigger_init(&t, 80, 5 * S);
	EXPECT_EQ_INT(0, tr_cpu_trigger_feed(&t, now, cpu, 0));
	for (int i = 0; i < 5; i++) {
		EXPECT_EQ_INT(0, feed_seconds(&t, &now, &cpu, 100, 4, NULL));
		EXPECT_EQ_INT(0, feed_seconds(&t, &now, &cpu, 10, 1, NULL));
	}
}

DEF_TEST(the_threshold_itself_counts_as_above)
{
	struct tr_cpu_trigger t;
	uint64_t now = T0, cpu = 0;

	tr_cpu_trigger_init(&t, 50, 2 * S);
	EXPECT_EQ_INT(0, tr_cpu_trigger_feed(&t, now, cpu, 0));
	EXPECT_EQ_INT(1, feed_seconds(&t, &now, &cpu, 50, 3, NULL));
}

DEF_TEST(it_fires_again_after_use_fell_below)
{
	struct tr_cpu_trigger t;
	uint64_t now = T0, cpu = 0;

	tr_cpu_trigger_init(&t, 80, 3 * S);
	EXPECT_EQ_INT(0, tr_cpu_trigger_feed(&t, now, cpu, 0));
	EXPECT_EQ_INT(1, feed_seconds(&t, &now, &cpu, 90, 6, NULL));
	EXPECT_EQ_INT(0, feed_seconds(&t, &now, &cpu, 5, 2, NULL));
	EXPECT_EQ_INT(1, feed_seconds(&t, &now, &cpu, 90, 6, NULL));
}

/* Several traced processes add up past one CPU: 100% is one CPU. */
DEF_TEST(use_above_one_cpu_counts)
{
	struct tr_cpu_trigger t;
	uint64_t now = T0, cpu = 0;

	tr_cpu_trigger_init(&t, 150, 2 * S);
	EXPECT_EQ_INT(0, tr_cpu_trigger_feed(&t, now, cpu, 0));
	EXPECT_EQ_INT(0, feed_seconds(&t, &now, &cpu, 140, 5, NULL));
	EXPECT_EQ_INT(1, feed_seconds(&t, &now, &cpu, 190, 5, NULL));
}

/* A counter that goes back (a traced process exited and left the sum)
 * restarts the measure instead of counting a huge or negative use. */
DEF_TEST(a_counter_going_back_restarts_the_measure)
{
	struct tr_cpu_trigger t;
	uint64_t now = T0, cpu = 100 * S;

	tr_cpu_trigger_init(&t, 80, 3 * S);
	EXPECT_EQ_INT(0, tr_cpu_trigger_feed(&t, now, cpu, 0));
	EXPECT_EQ_INT(0, feed_seconds(&t, &now, &cpu, 90, 2, NULL));
	cpu = 1 * S;
	now += S;
	EXPECT_EQ_INT(0, tr_cpu_trigger_feed(&t, now, cpu, 0));
	EXPECT_EQ_INT(0, t.above_since_ns);
	/* Measured again from there: 3 s more above are needed. */
	EXPECT_EQ_INT(0, feed_seconds(&t, &now, &cpu, 90, 2, NULL));
	EXPECT_EQ_INT(1, feed_seconds(&t, &now, &cpu, 90, 1, NULL));
}

/* The whole machine: use is the busy share of all CPUs' time. */
DEF_TEST(the_machine_share_is_busy_over_total)
{
	struct tr_cpu_trigger t;
	uint64_t now = T0, busy = 1000 * S, total = 4000 * S;
	int fired = 0;

	tr_cpu_trigger_init(&t, 75, 2 * S);
	EXPECT_EQ_INT(0, tr_cpu_trigger_feed(&t, now, busy, total));
	for (int i = 0; i < 4; i++) { /* 4 CPUs, 2 busy: 50% */
		now += S, busy += 2 * S, total += 4 * S;
		fired += tr_cpu_trigger_feed(&t, now, busy, total);
	}
	EXPECT_EQ_INT(0, fired);
	for (int i = 0; i < 4; i++) { /* 4 CPUs, 3.6 busy: 90% */
		now += S, busy += 36 * S / 10, total += 4 * S;
		fired += tr_cpu_trigger_feed(&t, now, busy, total);
	}
	EXPECT_EQ_INT(1, fired);
	EXPECT_TRUE(t.last_percent > 89.9 && t.last_percent < 90.1);
}

DEF_TEST(the_stat_cpu_line_is_read)
{
	uint64_t busy = 0, total = 0;

	EXPECT_EQ_INT(0, tr_cpu_stat_line("cpu  100 5 30 800 20 1 2 3 0 0\ncpu0 1 2 3 4\n",
					  &busy, &total));
	EXPECT_EQ_INT(141, (int)busy);
	EXPECT_EQ_INT(961, (int)total);
	EXPECT_EQ_INT(-EINVAL, tr_cpu_stat_line("cpu0 1 2 3 4\n", &busy, &total));
	EXPECT_EQ_INT(-EINVAL, tr_cpu_stat_line("cpu  1 2\n", &busy, &total));
	EXPECT_EQ_INT(0, tr_cpu_time_machine(&busy, &total));
	EXPECT_TRUE(total > busy && busy > 0);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * S + (uint64_t)ts.tv_nsec;
}

/* A child that burns 300 ms of CPU, then waits to be read: /proc says it
 * used that much (to the clock tick), and nothing once it is gone. */
DEF_TEST(a_process_cpu_time_comes_from_proc)
{
	int ready[2], go[2];
	pid_t child, gone;
	uint64_t cpu = 0;
	char c;

	EXPECT_EQ_INT(0, pipe(ready));
	EXPECT_EQ_INT(0, pipe(go));
	child = fork();
	if (child == 0) {
		volatile uint64_t spin = 0;
		uint64_t start = thread_cpu_ns();

		while (thread_cpu_ns() - start < 300 * 1000000ull)
			spin++;
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	EXPECT_TRUE(child > 0);
	EXPECT_EQ_INT(1, (int)read(ready[0], &c, 1));
	EXPECT_EQ_INT(0, tr_cpu_time_of(&child, 1, &cpu));
	/* Ticks of 1/CLK_TCK s: within two of them. */
	EXPECT_TRUE(cpu >= 280 * 1000000ull && cpu <= 330 * 1000000ull);
	EXPECT_EQ_INT(1, (int)write(go[1], "g", 1));
	EXPECT_EQ_INT(child, waitpid(child, NULL, 0));
	gone = child;
	EXPECT_EQ_INT(-ENOENT, tr_cpu_time_of(&gone, 1, &cpu));
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

int main(void)
{
	RUN_TEST(fires_once_after_use_stays_above_for_the_time);
	RUN_TEST(a_spike_shorter_than_the_time_does_not_fire);
	RUN_TEST(the_threshold_itself_counts_as_above);
	RUN_TEST(it_fires_again_after_use_fell_below);
	RUN_TEST(use_above_one_cpu_counts);
	RUN_TEST(a_counter_going_back_restarts_the_measure);
	RUN_TEST(the_machine_share_is_busy_over_total);
	RUN_TEST(the_stat_cpu_line_is_read);
	RUN_TEST(a_process_cpu_time_comes_from_proc);
	TEST_MAIN_END();
}

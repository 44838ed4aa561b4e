/* The flight recorder's CPU trigger (`trigger_cpu = 80%`, `trigger_for =
 * 5s`): fires when the traced processes' CPU use stays at or above a
 * threshold for a while, as dotnet-monitor's CPU collection rule does.
 *
 * Use is measured between polls, from CPU time: for traced processes the
 * sum of their utime + stime (/proc/PID/stat), where 100% is one CPU, as
 * top(1) shows a process; for the whole machine the busy share of
 * /proc/stat, where 100% is every CPU busy.  The decision itself takes
 * numbers only (tr_cpu_trigger_feed), so it is tested without a clock. */
#ifndef TR_CPUTRIGGER_H
#define TR_CPUTRIGGER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tr_cpu_trigger {
	double percent;       /* threshold */
	uint64_t for_ns;      /* how long use must stay at or above it */
	/* The previous poll. */
	int primed;
	uint64_t last_ns, last_cpu_ns, last_total_ns;
	/* When use went (and stayed) at or above the threshold; 0: below. */
	uint64_t above_since_ns;
	int fired;            /* until use drops below the threshold again */
	double last_percent;  /* use over the last interval, for the manifest */
};

/* A trigger at `percent` (> 0) held for `for_ns`. */
void tr_cpu_trigger_init(struct tr_cpu_trigger *t, double percent, uint64_t for_ns);

/* One poll at monotonic time `now_ns`: `cpu_ns` is the CPU time used so
 * far (a counter that only grows; a smaller value than the last one, as
 * when a traced process exits, restarts the measure), and `total_ns` the
 * time it is a share of (0: the elapsed time, i.e. 100% is one CPU).
 * Returns 1 once when use has stayed at or above the threshold for
 * `for_ns`; it fires again only after use fell below the threshold. */
int tr_cpu_trigger_feed(struct tr_cpu_trigger *t, uint64_t now_ns, uint64_t cpu_ns,
			uint64_t total_ns);

/* CPU time (ns) used so far by the processes `pids` (their threads
 * included; those that exited are left out).  0, or -ENOENT when none of
 * them is left. */
int tr_cpu_time_of(const pid_t *pids, size_t n, uint64_t *cpu_ns);

/* The machine's busy and total CPU time (ns) so far, from /proc/stat's
 * "cpu" line (idle and iowait are not busy).  0 or -errno. */
int tr_cpu_time_machine(uint64_t *busy_ns, uint64_t *total_ns);

/* Parses the "cpu" line of /proc/stat text into busy and total ticks. */
int tr_cpu_stat_line(const char *text, uint64_t *busy_ticks, uint64_t *total_ticks);

#endif

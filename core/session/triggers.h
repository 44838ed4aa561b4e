/* The flight recorder's automatic triggers, polled from the session's
 * loop: the traced processes' CPU use held at or above `trigger_cpu` for
 * `trigger_for` (cputrigger.h), and a traced process dying on a signal
 * that means a crash (`trigger_crash`, exitwatch.h).  Each asks for a
 * snapshot (flight.h) saying what set it off; collection goes on. */
#ifndef TR_TRIGGERS_H
#define TR_TRIGGERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "tracerig-private/ext.h"

#include "cputrigger.h"

struct tr_pids;
struct tr_flight;

struct tr_triggers {
	int cpu_on;
	struct tr_cpu_trigger cpu;
	uint64_t next_poll_ns;
	int crash_on;
	int exit_fd; /* -1: not watching */
	const struct tracerig_targets *targets;
	struct tr_pids *pids;     /* the session's: the processes sources observed */
	struct tr_flight *flight; /* the session's: where a trigger asks for a snapshot */
};

/* Reads the keys' values: `cpu` ("80%", NULL: no CPU trigger), `for_ms`,
 * `crash`.  0, or -EINVAL with the reason in `why`. */
int tr_triggers_configure(struct tr_triggers *t, const char *cpu, long long for_ms, int crash,
			  char *why, size_t why_len);

/* Collection runs: starts watching `targets` and the processes sources
 * observed (`pids`), asking `flight` for snapshots (all must outlive it).
 * A crash trigger that cannot watch is logged and left off. */
void tr_triggers_start(struct tr_triggers *t, const struct tracerig_targets *targets,
		       struct tr_pids *pids, struct tr_flight *flight);

/* The descriptor the session polls for process exits, or -1. */
int tr_triggers_fd(const struct tr_triggers *t);

/* Reads what happened since the last call and asks for snapshots. */
void tr_triggers_poll(struct tr_triggers *t, uint64_t now_ns);

void tr_triggers_stop(struct tr_triggers *t);

/* The CPU time the trigger measures, and what it is a share of (0: the
 * elapsed time, 100% being one CPU): a cgroup's usage, the traced
 * processes' (targets and the processes sources observed), or the
 * machine's busy time over all CPUs'.  0 or a negative errno. */
int tr_triggers_cpu_time(const struct tracerig_targets *targets, struct tr_pids *pids,
			 uint64_t *cpu_ns, uint64_t *total_ns);

#endif

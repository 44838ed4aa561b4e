/* The wall-clock view: a core step after every source has flushed.  It
 * joins the views stack sinks hand over (TRACERIG_STACKS_WALL: on-CPU
 * samples and off-CPU time) into wall.folded, wall.svg and wall.pb.gz, so that
 * where the traced threads spent their time, running or waiting, is one
 * flame graph. */
#ifndef TR_WALL_H
#define TR_WALL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "tracerig-private/ext.h"

/* Marks on the leaf of each wall.folded line. */
#define TR_WALL_ONCPU "[on-cpu]"
#define TR_WALL_OFFCPU "[off-cpu]"

/* The views handed over for the archive a session is writing (its
 * own, or a flight snapshot's), which the wall step then joins. */
struct tr_wall_views;
struct tr_wall_views *tr_wall_views_new(void);
void tr_wall_views_free(struct tr_wall_views *views);

struct tr_folded;
struct pp_builder;

/* A stack sink's view: its lines (lib/folded.h), each unit of their
 * weights worth ns_per_unit nanoseconds, and its profile (NULL: pprof
 * off), for the wall view to join in memory; `name` (the view's entry,
 * "cpu.folded") for the log. */
struct tr_wall_view {
	const char *name;
	enum tracerig_time what;
	struct tr_folded *lines;
	uint64_t ns_per_unit;
	struct pp_builder *profile;
};

/* Takes the view (its lines and profile are the wall's from here on,
 * freed by it, and *v emptied, whatever this returns) with the session
 * window it covers (NULL: unknown), which dates wall.pb.gz.  0, -EINVAL
 * or -ENOMEM. */
int tr_wall_take(struct tr_wall_views *views, const char *who, struct tr_wall_view *v,
		 const struct tracerig_window *window);

/* Which processes belong in the view; NULL accepts all. */
typedef int (*tr_wall_filter_fn)(void *arg, long pid);

/* Adds the lines of view v to `wall` (weights in ns), the leaf marked as
 * on or off CPU, lines of processes `filter` refuses left out (lines
 * without a PID are kept).  Returns the number of lines added or -errno. */
long tr_wall_add_view(struct tr_folded *wall, const struct tr_wall_view *v,
		      tr_wall_filter_fn filter, void *arg);

/* What tr_wall_write wrote as wall.pb.gz, for the manifest. */
struct tr_wall_pprof {
	int written;
	uint64_t samples, total; /* pprof samples (stacks), their nanoseconds */
};

/* The processes some source observed (n of them, from the session's
 * registry): pids NULL when they could not be listed (out of memory). */
struct tr_wall_observed {
	const pid_t *pids;
	size_t n;
};

/* When the session was handed on-CPU and off-CPU views: writes wall.folded
 * and wall.svg into the staging area, and wall.pb.gz when `pb` is not
 * NULL (filling it in; each view's samples from its profile, with their
 * mappings),
 * keeping the processes of `t` and those `observed` unless it traced the
 * whole machine, and logs what it wrote.  0 (also when there is nothing to
 * join) or a negative errno, logged.  Frees the views it was handed. */
int tr_wall_write(struct tr_wall_views *views, struct tracerig_archive *ar,
		  const struct tracerig_targets *t, struct tr_wall_observed observed,
		  struct tr_wall_pprof *pb);
/* The same for a flight snapshot: wall.pb.gz is dated by `range` (the
 * snapshot's) rather than by the session's window. */
int tr_wall_write_dated(struct tr_wall_views *views, struct tracerig_archive *ar,
			const struct tracerig_targets *t, struct tr_wall_observed observed,
			struct tr_wall_pprof *pb, const struct tracerig_window *range);

#endif

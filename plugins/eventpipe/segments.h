/* Flight mode's files of one process: EventPipe cannot drop a stream's
 * oldest events (its blocks refer to metadata and stacks sent earlier, and
 * method names come only in the rundown at a session's end), so a flight
 * session is a chain of sessions, each rotated after half a window: a
 * new session starts, then the old one is stopped and its rundown read.
 * Each ended session is a segment, a whole .nettrace that TraceEvent and
 * PerfView open alone; a snapshot takes the segments that overlap its
 * window, and those older than any window go. */
#ifndef TR_EVENTPIPE_SEGMENTS_H
#define TR_EVENTPIPE_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

struct ep_segment {
	char entry[128];   /* COMM.PID.SEQ.nettrace, in the staging directory */
	uint64_t start_ns; /* the session clock: its session began */
	uint64_t end_ns;   /* StopTracing was sent */
	int complete;      /* the runtime ended the stream (rundown included) */
};

struct ep_segments {
	struct ep_segment *v;
	size_t n, cap;
};

/* 0 or -ENOMEM. */
int ep_segments_add(struct ep_segments *l, const char *entry, uint64_t start_ns, uint64_t end_ns,
		    int complete);

/* Deletes (from dir) the segments that ended before before_ns; returns
 * how many went. */
size_t ep_segments_prune(struct ep_segments *l, const char *dir, uint64_t before_ns);

/* Puts the segments that overlap [from_ns, to_ns] into out_dir under
 * their own names, hard-linked (copied across file systems).  0 and *n
 * the number put, or the -errno of the first that failed. */
int ep_segments_snapshot(const struct ep_segments *l, const char *dir, const char *out_dir,
			 uint64_t from_ns, uint64_t to_ns, size_t *n);

void ep_segments_free(struct ep_segments *l);

#endif

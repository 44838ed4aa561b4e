/* One LTTng recording session: channels, contexts, events, process
 * tracking, start/stop, statistics.  Everything goes through liblttng-ctl. */
#ifndef TR_LTTNG_SESSION_H
#define TR_LTTNG_SESSION_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracerig-private/ext.h"

#include "presets.h"

struct lt_channel_config {
	uint64_t subbuf_size;  /* bytes, power of two */
	uint64_t subbuf_count; /* power of two */
	int overwrite;         /* 0 = discard new events when full */
	int per_pid;           /* per-PID instead of per-UID buffers (userspace) */
	unsigned switch_timer_us;
	unsigned monitor_timer_us;
};

struct lt_config {
	const char *output_dir;          /* absolute; the CTF tree goes here */
	struct lt_channel_config channel;
	const struct lttng_event_list *ust_events;
	const struct lttng_event_list *kernel_events; /* may be empty */
	const char *filter;              /* userspace filter expression or NULL */
	int loglevel;                    /* enum lttng_loglevel, -1 = any */
	int loglevel_only;               /* exactly that level instead of "at least" */
	int kernel_required;             /* fail instead of continuing without kernel events */
	const char *name_suffix;         /* appended to the session name, or NULL */
	int snapshot;                    /* flight mode: a snapshot session, no output of
					  * its own (output_dir unused) */
};

struct lttng_handle;
struct lttng_process_attr_tracker_handle;

struct lt_session {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	char name[64];
	int created, started;
	int kernel;                       /* kernel channel set up */
	int snapshot;                     /* a snapshot session (flight mode) */
	unsigned n_snapshots;             /* snapshots recorded so far */
	struct lttng_handle *ust, *kern;
	struct lttng_process_attr_tracker_handle *vpid_tracker;
	uint64_t discarded_events, lost_packets;
	int last_error;                   /* lttng_error_code of the last failed call, or 0 */
};

/* Sessions are named tracerig-<pid>-<start time of that process in clock
 * ticks since boot>[-suffix]: a pid alone can be reused, the pair names one
 * process, so the next run can tell a session whose owner was killed. */
#define LT_SESSION_PREFIX "tracerig-"
void lt_session_name(char *buf, size_t len, pid_t pid, unsigned long long starttime,
		     const char *suffix);
/* This process's session name.  0, or a negative errno after an error
 * logged through svc. */
int lt_session_name_self(const struct tracerig_services *svc, struct tracerig_ctx *ctx, char *buf,
			 size_t len, const char *suffix);
/* Parses a session name back; -EINVAL when it is not one of ours. */
int lt_session_name_owner(const char *name, pid_t *pid, unsigned long long *starttime);
/* Field 22 of /proc/PID/stat.  0 or a negative errno. */
int lt_proc_starttime(pid_t pid, unsigned long long *out);
/* Nonzero when the process that started at `starttime` still runs as `pid`. */
int lt_owner_alive(pid_t pid, unsigned long long starttime);
/* Destroys a session (stopping it first) and waits until its trace is
 * closed.  0 or a negative lttng_error_code. */
int lt_destroy_session_wait(const char *name, int timeout_ms);
/* Destroys every tracerig-* session whose owner is gone, logging each.
 * Returns how many, or a negative errno when the daemon cannot be asked. */
int lt_reap_orphans(const struct tracerig_services *svc, struct tracerig_ctx *ctx);
/* A negative lttng_error_code as a negative errno (EIO when nothing fits). */
int lt_errno(int code);

/* TraceEvent (PerfView) reads only stream files named channel*_CPU next
 * to a metadata file: the channel name must start with "channel". */
#define LT_CHANNEL_NAME "channel0"

/* Creates the session, its channels, contexts and event rules.  Nothing is
 * recorded until lt_session_start().  Uses s->name when it is set (see
 * lt_session_name_self), else names the session itself. */
int lt_session_create(struct lt_session *s, const struct tracerig_services *svc,
		      struct tracerig_ctx *ctx, const struct lt_config *cfg);
/* Restricts userspace tracing to these virtual PIDs (as the processes see
 * their own PID).  Call before start; may be called again to add more. */
int lt_session_track_vpids(struct lt_session *s, const pid_t *vpids, size_t n);
int lt_session_start(struct lt_session *s);
/* Stops recording, waits until every buffer is on disk, reads the
 * discarded/lost counters and destroys the session, leaving a complete
 * CTF trace in the output directory.  On failure returns a negative errno
 * and leaves the lttng_error_code in s->last_error.  A snapshot session
 * is only stopped: the final snapshot still reads its rings. */
int lt_session_stop(struct lt_session *s);
/* A snapshot session: writes what the ring buffers hold now (flushed
 * first) as a CTF trace under `dir` (absolute, existing), in a
 * subdirectory LTTng names PREFIX-YYYYMMDD-HHMMSS-N, whose PREFIX goes
 * into `written` (may be NULL).  Works before and after stop.  0 or a
 * negative errno, the lttng_error_code in s->last_error. */
int lt_session_snapshot(struct lt_session *s, const char *dir, char *written, size_t len);
/* Records a snapshot of `session` into DIR/NAME-YYYYMMDD-HHMMSS-N/, with
 * no state (the watchdog's cleanup uses it too).  0 or a negative
 * lttng_error_code. */
int lt_snapshot_record_local(const char *session, const char *dir, const char *name);
/* Moves the content (ust/, kernel/) of LTTng's DIR/PREFIX-* snapshot
 * directory up into DIR, so that a snapshot has a recording's layout
 * (ust/uid/N/64-bit/, what TraceEvent reads).  0, -ENOENT when LTTng
 * wrote no such directory, or another negative errno. */
int lt_snapshot_hoist(const char *dir, const char *prefix);
/* Removes DIR and the directories under it that are empty, bottom up. */
void lt_remove_empty_dirs(const char *dir);
/* Destroys whatever lt_session_create/start left (error paths, fini). */
void lt_session_destroy(struct lt_session *s);

/* liblttng-ctl writes to the daemon's socket without MSG_NOSIGNAL: when the
 * daemon hangs up (it does after refusing some kernel commands) the write
 * raises SIGPIPE, which would kill tracerig.  Every entry point blocks it
 * for the calling thread and swallows the one it caused. */
struct lt_sigpipe {
	sigset_t old_mask, pending_before;
	int blocked;
};
void lt_sigpipe_block(struct lt_sigpipe *g);
void lt_sigpipe_restore(struct lt_sigpipe *g);

/* Whether lttng-modules is loaded (the session daemon loads it at start
 * when it is installed). */
int lt_kernel_tracer_loaded(void);


#endif

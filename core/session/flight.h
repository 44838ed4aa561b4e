/* Flight mode ([tracerig] mode = flight): collection runs until stopped,
 * sources keep only the last window, and each trigger (SIGUSR1, `tracerig
 * snapshot`, the stop) writes <name>-<UTC time>.trace.zip of that window
 * while collection goes on.  This file keeps what the session needs
 * between triggers: the window, the sources' snapshot callbacks, the pending
 * triggers and who waits for them, the thread that runs the callbacks, the
 * snapshot archives' names and their retention (`keep`).  One flight
 * session per process, as one output (output.h).  The session drives it
 * (snapshots.c). */
#ifndef TR_FLIGHT_H
#define TR_FLIGHT_H

#include <stddef.h>
#include <stdint.h>
#include "tracerig-private/ext.h"

#include "core/archive/staging.h"

struct tracerig_ctx;

enum tr_trigger {
	TR_TRIGGER_NONE = 0,
	TR_TRIGGER_SIGUSR1,
	TR_TRIGGER_CONTROL, /* `tracerig snapshot` through the control socket */
	TR_TRIGGER_STOP,    /* the final snapshot of a session that stops */
	TR_TRIGGER_CPU,     /* trigger_cpu held for trigger_for (cputrigger.h) */
	TR_TRIGGER_CRASH,   /* a traced process died on a signal (exitwatch.h) */
};

/* What the manifest says ("SIGUSR1", "tracerig snapshot", "stop", "cpu",
 * "crash"). */
const char *tr_trigger_name(enum tr_trigger t);

/* A session's flight mode: the window, where archives go, the triggers
 * pending and the snapshot being written. */
struct tr_flight;
struct tr_flight *tr_flight_new(void);

/* Flight mode on, with its window, retention and the directory archives go
 * to: `dir`, absolute, the output's, kept (not copied) for as long as the
 * output is (`given`, the output as the profile or -o named it, NULL for
 * the working directory, must be a directory).  Logs
 * what is wrong; 0 or a negative errno. */
int tr_flight_configure(struct tr_flight *f, long long window_ms, long long keep, const char *given,
			const char *dir, const char *name);
uint64_t tr_flight_window_ns(const struct tr_flight *f);
/* The archives' directory, absolute. */
const char *tr_flight_dir(const struct tr_flight *f);

/* Whether `ctx`'s plugin takes part in flight mode (TRACERIG_CAP_FLIGHT). */
int tr_flight_supported(const struct tracerig_ctx *ctx);

/* A trigger to serve from the session's loop; `reply_fd` (or -1) is a
 * control connection told the archive's path once it is written (it is
 * closed then).  Safe from the main thread only. */
void tr_flight_request(struct tr_flight *f, enum tr_trigger t, int reply_fd);
/* The same with what set it off, for the log and the manifest's
 * "trigger_detail" ("PID 4242 (app) killed by SIGSEGV"). */
void tr_flight_request_why(struct tr_flight *f, enum tr_trigger t, const char *why);
/* The trigger waiting, or TR_TRIGGER_NONE. */
enum tr_trigger tr_flight_pending(const struct tr_flight *f);

/* One snapshot being written. */
struct tr_snapshot {
	enum tr_trigger trigger;
	char why[256];           /* what set the trigger off, or "" */
	int final;               /* the session's last: it ends with this one */
	const char *cause;       /* for a stop: why the session ended */
	unsigned seq;            /* 1, 2, ... in this session */
	uint64_t from_ns, to_ns; /* CLOCK_MONOTONIC */
	uint64_t from_real_ns, to_real_ns;
	struct tracerig_archive ar; /* its own staging area and temporary archive */
	char *path;                 /* the archive, once committed */
	struct tr_flight *flight;   /* whose snapshot it is */
	int *waiters;               /* control connections to answer */
	size_t n_waiters;
};

/* Starts a snapshot of [from_ns, to_ns]: a fresh staging directory and the
 * waiting control connections.  Logs; 0 or a negative errno. */
int tr_snapshot_begin(struct tr_flight *f, struct tr_snapshot *snap, enum tr_trigger t,
		      uint64_t from_ns, uint64_t to_ns);
/* Copies the run log so far into the snapshot (tracerig.log). */
void tr_snapshot_copy_log(struct tr_snapshot *snap, const char *log_path);
/* Creates the temporary archive the packager writes (ar.output). */
int tr_snapshot_temp(struct tr_snapshot *snap);
/* Moves the written archive to <dir>/<name>-<UTC time>.trace.zip (never
 * replacing anything), then removes the oldest archives of this name
 * beyond `keep`: regular files of the session's uid only, earlier runs'
 * included, never another user's.  Logs; 0 or a negative errno. */
int tr_snapshot_commit(struct tr_snapshot *snap);
/* Answers the waiting connections (the path, or that it failed), removes
 * the staging directory unless `keep_staging`, frees.  snap->path is
 * handed to *path_out when not NULL (the caller frees it). */
void tr_snapshot_end(struct tr_snapshot *snap, int ok, int keep_staging, char **path_out);

/* The window of the snapshot being written when `ar` is its archive (the
 * service archive_window): 0, or -ENOENT. */
int tr_flight_archive_window(const struct tr_flight *f, const struct tracerig_archive *ar,
			     struct tracerig_window *out);

/* Runs the registered callbacks of `ctxs` for `snap` on a thread of its
 * own, so the main thread keeps watching signals, deadlines and faults. */
struct tr_flight_job;
int tr_flight_job_start(struct tracerig_ctx *const *ctxs, size_t n, struct tr_snapshot *snap,
			struct tr_flight_job **out);
/* Readable once the job is done. */
int tr_flight_job_fd(const struct tr_flight_job *job);
/* 1 when done (rets[i] filled for each ctx), 0 while running. */
int tr_flight_job_done(struct tr_flight_job *job, int *rets);
/* The source whose callback runs now (for a hang), or NULL. */
struct tracerig_ctx *tr_flight_job_current(struct tr_flight_job *job);
/* Joins a finished job and frees it; a job still running (a source hung or
 * faulted in it) is left to itself, never freed. */
void tr_flight_job_end(struct tr_flight_job *job);

/* Ends a session's flight state: waiting control connections are told no
 * snapshot comes, and closed. */
void tr_flight_free(struct tr_flight *f);

#endif

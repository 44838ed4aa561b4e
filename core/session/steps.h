/* The session's steps (steps.c), which its lifecycle (session.c) and
 * flight mode's snapshots (snapshots.c) both take: calling plugins under
 * the supervisor, failing one, the signals and faults that arrive
 * meanwhile, and the pieces of an end (stopping sources and the launched
 * command, what failed, the staging's end).  For those files only. */
#ifndef TR_STEPS_H
#define TR_STEPS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "supervise.h"

struct tr_session;
struct tracerig_ctx;
struct tracerig_archive;
struct tracerig_window;
struct tracerig_window;

uint64_t tr_session_now_ns(clockid_t clock);
/* Milliseconds until `deadline` (CLOCK_MONOTONIC ns), rounded up; 0 once
 * it has passed. */
uint64_t tr_session_ms_left(uint64_t deadline);

/* Hands `call` to every plugin in `ctxs` at once and waits until each has
 * returned, faulted or overrun `timeout_ms`.  Fills rets[]; a plugin that
 * faulted or hung is marked failed here. */
void tr_session_run_calls(struct tr_session *s, struct tracerig_ctx **ctxs, size_t n,
			  enum tr_call call, struct tracerig_archive *ar, long long timeout_ms,
			  int *rets, const char *doing);
/* One plugin, one call, under the supervisor: its return, or a negative
 * errno when it failed, faulted or overran `timeout_ms` (it is then
 * marked failed, `doing` saying what the session was doing). */
int tr_session_run_call(struct tr_session *s, struct tracerig_ctx *ctx, enum tr_call call,
			struct tracerig_archive *ar, long long timeout_ms, const char *doing);
/* Marks a plugin failed in `phase` and says so, once. */
void tr_session_fail_plugin(struct tracerig_ctx *ctx, const char *phase, int err);
/* The first SIGINT/SIGTERM, in any phase, means "stop and package"; a
 * second one aborts.  SIGUSR1 asks for a snapshot.  `doing`: what the
 * session finishes first, NULL while collecting. */
void tr_session_drain_signals(struct tr_session *s, const char *doing);
/* A plugin faulted while collecting: which one. */
void tr_session_collect_faults(struct tr_session *s);

/* Stops every started source, at once. */
void tr_session_stop_started(struct tr_session *s);
/* A launched command does not outlive a session that ended without it (a
 * signal, `tracerig stop`, the duration, a failed backend): once the
 * sources have stopped it gets SIGTERM, as perf record's workload does,
 * and SIGKILL if it is still there a grace period later. */
void tr_session_end_command(struct tr_session *s);
/* How many sources failed among the required (1) or the optional (0). */
int tr_session_sources_failed(const struct tr_session *s, int required);
/* An optional backend that failed must not pass unnoticed in a run that
 * otherwise looks fine: one closing warning line names each. */
void tr_session_warn_failed_optional(struct tr_session *s);
/* The wall-clock view of archive `ar` (views/wall.c), from the views the
 * sources declared and the processes they observed; wall.pb.gz (with
 * [tracerig] pprof) dated by `range`, NULL: by the session's window. */
void tr_session_write_wall(struct tr_session *s, struct tracerig_archive *ar,
			   const struct tracerig_window *range);
/* The wall-clock view of archive `ar` (core/views/wall.c), from the views
 * the sources declared and the processes they observed; wall.pb.gz (with
 * [tracerig] pprof) dated by `range`, NULL: by the session's window. */
void tr_session_write_wall(struct tr_session *s, struct tracerig_archive *ar,
			   const struct tracerig_window *range);
/* Writes the manifest and has the packager turn the staging area into the
 * archive.  The packager runs on its driver when it has one (a session),
 * directly when not (the watchdog salvaging a dead collector). */
int tr_session_write_archive(struct tr_session *s);
/* The staging goes once its archive is written (unless kept); the exit
 * status then says how the launched command fared. */
int tr_session_finish_staging(struct tr_session *s, int status);

#endif

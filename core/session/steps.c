/* The session's steps (steps.h). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/archive/output.h"
#include "core/exitcodes.h"
#include "core/log.h"
#include "ctx.h"
#include "flight.h"
#include "options.h"
#include "session.h"
#include "status.h"
#include "steps.h"
#include "summary.h"
#include "supervise.h"
#include "watchdog.h"

uint64_t tr_session_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void abort_session(struct tr_session *s)
{
	tr_status_end();
	tr_err("aborted by a second interrupt: no archive was written; what was collected so "
	       "far is left in %s",
	       s->archive.dir);
	tr_command_abort(&s->command);
	tr_watchdog_abort();
	if (s->archive.output)
		unlink(s->archive.output);
	tr_output_release(s->output);
	tr_log_close_file();
	fflush(NULL);
	/* Plugin threads may be mid-call: nothing of theirs is torn down. */
	_exit(TR_EXIT_ABORTED);
}

/* Within this of the first, the same signal from the same process is the
 * same request. */
#define SAME_REQUEST_NS 1000000000ull

/* Whether si repeats the request that started the stop rather than asks
 * to abort: coreutils' `timeout` sends its signal to the command, then to
 * the command's process group, which holds the command too; read between
 * the two, they counted as two interrupts and aborted the archive.  A
 * terminal's Ctrl-C comes from the kernel (no PID): pressed twice, it
 * always aborts. */
static int same_request(struct tr_session *s, const struct signalfd_siginfo *si)
{
	uint64_t now = tr_session_now_ns(CLOCK_MONOTONIC);

	if (!s->signals) {
		s->stop_signal.signo = si->ssi_signo;
		s->stop_signal.pid = si->ssi_pid;
		s->stop_signal.read_ns = now;
		return 0;
	}
	if (!si->ssi_pid || si->ssi_pid != s->stop_signal.pid ||
	    si->ssi_signo != s->stop_signal.signo ||
	    now - s->stop_signal.read_ns >= SAME_REQUEST_NS)
		return 0;
	tr_info("SIG%s from PID %u again within 1 s: taken as the same request, not a second "
		"one (`timeout` sends it to tracerig and to its process group)",
		sigabbrev_np((int)si->ssi_signo), (unsigned)si->ssi_pid);
	return 1;
}

void tr_session_drain_signals(struct tr_session *s, const char *doing)
{
	struct signalfd_siginfo si;

	while (read(s->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			tr_info("SIGUSR1 from PID %u: a snapshot of the last window",
				(unsigned)si.ssi_pid);
			tr_flight_request(s->flight, TR_TRIGGER_SIGUSR1, -1);
			continue;
		}
		if (si.ssi_signo != SIGINT && si.ssi_signo != SIGTERM)
			continue;
		if (same_request(s, &si))
			continue;
		if (++s->signals > 1)
			abort_session(s);
		if (doing)
			tr_warn("%s while %s: finishing that, then packaging what was collected "
				"(Ctrl-C again aborts without packaging)",
				si.ssi_signo == SIGINT ? "interrupted" : "terminated", doing);
		else
			tr_warn("%s: stopping and packaging what was collected (Ctrl-C again "
				"aborts without packaging)",
				si.ssi_signo == SIGINT ? "interrupted" : "terminated");
	}
}

void tr_session_fail_plugin(struct tracerig_ctx *ctx, const char *phase, int err)
{
	ctx->phase = TR_PHASE_FAILED;
	ctx->failed_in = phase;
	ctx->error = err < 0 ? err : -EIO;
	tr_watchdog_plugin(ctx->plugin->name, "failed");
	/* What the plugin said before it crashed, hung or had nothing to
	 * record comes first; else it is the reason in the failure's line. */
	if (ctx->fault_signal || ctx->hung_ms || (ctx->error == -ENODATA && !strcmp(phase, "init")))
		tr_ctx_say_reason(ctx);
	if (ctx->fault_signal)
		tr_log(TRACERIG_LOG_ERROR, ctx->plugin->name,
		       "crashed (SIG%s) in %s: it gets no more calls; the other backends' data "
		       "is still packaged",
		       sigabbrev_np(ctx->fault_signal) ? sigabbrev_np(ctx->fault_signal) : "?",
		       phase);
	else if (ctx->hung_ms)
		tr_log(TRACERIG_LOG_ERROR, ctx->plugin->name,
		       "%s did not return within %lld ms: abandoned as hung; the other backends' "
		       "data is still packaged (raise [tracerig] %s_timeout if it needs longer)",
		       phase, ctx->hung_ms,
		       strcmp(phase, "init") == 0   ? "start"
		       : strcmp(phase, "fini") == 0 ? "stop"
						    : phase);
	else if (ctx->error == -ENODATA && !strcmp(phase, "init"))
		/* The plugin's own warning said why. */
		tr_log(ctx->required ? TRACERIG_LOG_ERROR : TRACERIG_LOG_INFO, ctx->plugin->name,
		       "left out: nothing it records can come from these targets%s",
		       ctx->required ? " (it is required: the run fails)" : "");
	else
		tr_log(TRACERIG_LOG_ERROR, ctx->plugin->name, "%s failed: %s%s", phase,
		       ctx->reason ? ctx->reason : strerror(-ctx->error),
		       ctx->required || ctx->plugin->kind == TRACERIG_PLUGIN_PACKAGER
			       ? ""
			       : " (optional backend: continuing without it)");
}

uint64_t tr_session_ms_left(uint64_t deadline)
{
	uint64_t now = tr_session_now_ns(CLOCK_MONOTONIC);

	return now >= deadline ? 0 : (deadline - now) / 1000000 + 1;
}

/* Hands each plugin its call; one that cannot take it is settled. */
static void post_calls(struct tracerig_ctx **ctxs, size_t n, enum tr_call call,
		       struct tracerig_archive *ar, int *rets, int *settled)
{
	for (size_t i = 0; i < n; i++) {
		if (call != TR_CALL_FINI)
			tr_ctx_hold_errors(ctxs[i]);
		rets[i] = tr_driver_post(ctxs[i], call, ar);
		if (rets[i] < 0) {
			settled[i] = 1;
			tr_ctx_call_ended(ctxs[i], 0);
		}
	}
}

void tr_session_run_calls(struct tr_session *s, struct tracerig_ctx **ctxs, size_t n,
			  enum tr_call call, struct tracerig_archive *ar, long long timeout_ms,
			  int *rets, const char *doing)
{
	uint64_t deadline = tr_session_now_ns(CLOCK_MONOTONIC) + (uint64_t)timeout_ms * 1000000ull;
	int *settled = calloc(n ? n : 1, sizeof(*settled));

	if (!settled) {
		for (size_t i = 0; i < n; i++)
			rets[i] = -ENOMEM; /* not called: says so, never "returned 0" */
		return;
	}
	post_calls(ctxs, n, call, ar, rets, settled);
	for (;;) {
		struct pollfd pfd[2] = { { .fd = s->sfd, .events = POLLIN },
					 { .fd = tr_supervise_wake_fd(), .events = POLLIN } };
		size_t pending = 0;
		uint64_t left;

		for (size_t i = 0; i < n; i++) {
			enum tr_call_state st;

			if (settled[i])
				continue;
			st = tr_driver_poll(ctxs[i], &rets[i]);
			if (st == TR_CALL_PENDING) {
				pending++;
				continue;
			}
			settled[i] = 1;
			tr_ctx_call_ended(ctxs[i], st == TR_CALL_RETURNED && rets[i] >= 0);
			if (st != TR_CALL_RETURNED) {
				rets[i] = -EOWNERDEAD;
				tr_session_fail_plugin(ctxs[i], tr_call_name(call), rets[i]);
			}
		}
		if (!pending)
			break;
		left = tr_session_ms_left(deadline);
		if (left == 0) {
			for (size_t i = 0; i < n; i++) {
				if (settled[i])
					continue;
				tr_driver_abandon(ctxs[i]);
				tr_ctx_call_ended(ctxs[i], 0);
				ctxs[i]->hung_ms = timeout_ms;
				rets[i] = -ETIMEDOUT;
				tr_session_fail_plugin(ctxs[i], tr_call_name(call), rets[i]);
			}
			break;
		}
		if (poll(pfd, 2, left > 500 ? 500 : (int)left) > 0) {
			if (pfd[1].revents)
				tr_supervise_drain();
			if (pfd[0].revents)
				tr_session_drain_signals(s, doing);
		}
	}
	free(settled);
}

int tr_session_run_call(struct tr_session *s, struct tracerig_ctx *ctx, enum tr_call call,
			struct tracerig_archive *ar, long long timeout_ms, const char *doing)
{
	int ret = 0;

	tr_session_run_calls(s, &ctx, 1, call, ar, timeout_ms, &ret, doing);
	return ret;
}

void tr_session_stop_started(struct tr_session *s)
{
	struct tracerig_ctx **started = calloc(s->n_sources + 1, sizeof(*started));
	int *rets = calloc(s->n_sources + 1, sizeof(*rets));
	uint64_t asked;
	size_t n = 0;

	if (!started || !rets) {
		free(started);
		free(rets);
		return;
	}
	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->phase == TR_PHASE_STARTED)
			started[n++] = s->sources[i];
	/* Together, so that every source's window ends at the same instant:
	 * one that takes long to stop (LTTng) does not lengthen the others'. */
	asked = tr_session_now_ns(CLOCK_MONOTONIC);
	tr_session_run_calls(s, started, n, TR_CALL_STOP, NULL, s->settings.stop_timeout_ms, rets,
			     "stopping");
	for (size_t i = 0; i < n; i++) {
		started[i]->window_end_ns = asked;
		if (started[i]->phase == TR_PHASE_FAILED)
			continue;
		/* An error the plugin gave as the reason stays an error. */
		if (rets[i] < 0)
			tr_log(started[i]->reason ? TRACERIG_LOG_ERROR : TRACERIG_LOG_WARN,
			       started[i]->plugin->name, "stop failed: %s (flushing what it has)",
			       started[i]->reason ? started[i]->reason : strerror(-rets[i]));
		started[i]->phase = TR_PHASE_STOPPED;
		tr_watchdog_plugin(started[i]->plugin->name, "stopped");
	}
	free(started);
	free(rets);
}

void tr_session_collect_faults(struct tr_session *s)
{
	for (size_t i = 0; i < s->n_sources; i++) {
		struct tracerig_ctx *ctx = s->sources[i];

		if (ctx->fault_signal && ctx->phase != TR_PHASE_FAILED) {
			ctx->window_end_ns = tr_session_now_ns(CLOCK_MONOTONIC);
			tr_session_fail_plugin(ctx, "collect", -EOWNERDEAD);
		}
	}
}

/* How long a launched command has to end after SIGTERM before SIGKILL. */
#define COMMAND_GRACE_MS 5000

void tr_session_end_command(struct tr_session *s)
{
	int waited = 0;

	if (!s->command_started || s->command.pid <= 0 || tr_command_poll(&s->command))
		return;
	tr_info("the session ended (%s): stopping the launched command (PID %d) with SIGTERM",
		tr_end_reason_name(s->end_reason), (int)s->command.pid);
	s->command_ended = 1;
	if (kill(s->command.pid, SIGTERM) < 0)
		return;
	while (!tr_command_poll(&s->command) && waited < COMMAND_GRACE_MS) {
		usleep(20 * 1000);
		waited += 20;
	}
	if (!s->command.reaped) {
		tr_warn("the launched command (PID %d) did not end within %d s of SIGTERM: SIGKILL",
			(int)s->command.pid, COMMAND_GRACE_MS / 1000);
		tr_command_abort(&s->command);
	}
}

static int command_exit_status(struct tr_session *s)
{
	if (!s->opts->command)
		return TR_EXIT_OK;
	if (!s->command.reaped)
		return TR_EXIT_OK;
	/* Ended by us: how it ended is no failure of the command's. */
	if (s->command_ended)
		return TR_EXIT_OK;
	if (WIFEXITED(s->command.status)) {
		if (WEXITSTATUS(s->command.status) == 0)
			return TR_EXIT_OK;
		tr_warn("the command exited with status %d", WEXITSTATUS(s->command.status));
		return TR_EXIT_COMMAND_FAILED;
	}
	if (WIFSIGNALED(s->command.status)) {
		tr_warn("the command was killed by signal %d (%s)", WTERMSIG(s->command.status),
			strsignal(WTERMSIG(s->command.status)));
		return TR_EXIT_COMMAND_FAILED;
	}
	return TR_EXIT_OK;
}

int tr_session_sources_failed(const struct tr_session *s, int required)
{
	int n = 0;

	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->phase == TR_PHASE_FAILED && s->sources[i]->required == required)
			n++;
	return n;
}

void tr_session_warn_failed_optional(struct tr_session *s)
{
	for (size_t i = 0; i < s->n_sources; i++) {
		struct tracerig_ctx *ctx = s->sources[i];
		char why[256];

		if (ctx->phase != TR_PHASE_FAILED || ctx->required)
			continue;
		tr_describe_failure(ctx, why, sizeof(why));
		if (ctx->error == -ENODATA && !strcmp(ctx->failed_in, "init"))
			tr_warn("optional backend %s was %s (its warnings say why)",
				ctx->plugin->name, why);
		else if (!strcmp(ctx->failed_in, "init") || !strcmp(ctx->failed_in, "start"))
			tr_warn("optional backend %s failed (%s): the archive holds the other "
				"backends' data only",
				ctx->plugin->name, why);
		else
			/* It may have staged files while it collected (mapharvest's
			 * maps, a growing trace): they are in the archive. */
			tr_warn("optional backend %s failed (%s): the archive holds whatever it "
				"staged before, maybe incomplete, and the other backends' data",
				ctx->plugin->name, why);
	}
}

int tr_session_finish_staging(struct tr_session *s, int status)
{
	if (s->settings.keep_staging)
		fprintf(stderr, "tracerig: staging kept in %s\n", s->archive.dir);
	else
		tr_staging_remove(&s->archive);
	if (s->command_exec_errno)
		return TR_EXIT_COMMAND_NOT_RUN;
	return status == TR_EXIT_OK ? command_exit_status(s) : status;
}

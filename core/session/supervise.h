/* Supervising plugins: every vtable call runs on the plugin's own driver
 * thread while the main thread waits with a deadline, so a plugin that
 * crashes, aborts or hangs is marked failed and the others carry on.
 *
 * A fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) is attributed to a
 * plugin by the thread it happened on (a driver thread) or by the first
 * frame of its stack that lies inside a plugin's object (a thread the
 * plugin started, a library it called).  The faulting thread is then frozen
 * for good, never resumed; the main thread is woken and treats the plugin
 * as dead: no more calls into it, and the process leaves with _exit so no
 * destructor runs over its half-done state.  A fault nobody can be blamed
 * for, or one on the main thread, is fatal: the watchdog packages. */
#ifndef TR_SUPERVISE_H
#define TR_SUPERVISE_H

#include <stdint.h>

struct tracerig_ctx;
struct tracerig_archive;

enum tr_call {
	TR_CALL_NONE = 0,
	TR_CALL_INIT,
	TR_CALL_START,
	TR_CALL_STOP,
	TR_CALL_FLUSH,
	TR_CALL_FINI,
	TR_CALL_VALIDATE,
};

/* What became of a call. */
enum tr_call_state {
	TR_CALL_PENDING = 0,
	TR_CALL_RETURNED, /* ret holds its value */
	TR_CALL_CRASHED,  /* a fault in the plugin: ctx->fault_signal */
	TR_CALL_HUNG,     /* still running at the deadline: abandoned */
};

/* Installs the fault handlers and the wake-up descriptor.  Returns the
 * descriptor the main thread polls (readable after a call returns or a
 * plugin faults), or a negative errno. */
int tr_supervise_init(void);
int tr_supervise_wake_fd(void);
/* Drains the wake-up descriptor. */
void tr_supervise_drain(void);

/* Learns where the plugin's code lives, for fault attribution, and starts
 * its driver thread (with the calling thread's signal mask). */
int tr_driver_start(struct tracerig_ctx *ctx);
/* Hands `call` to the driver; returns at once. */
int tr_driver_post(struct tracerig_ctx *ctx, enum tr_call call, struct tracerig_archive *ar);
/* Non-blocking: the state of the posted call (ret filled when returned). */
enum tr_call_state tr_driver_poll(struct tracerig_ctx *ctx, int *ret);
/* CLOCK_MONOTONIC ns at which the last call returned. */
uint64_t tr_driver_returned_ns(struct tracerig_ctx *ctx);
/* Gives up on a call still running: the plugin is never called again. */
void tr_driver_abandon(struct tracerig_ctx *ctx);
/* Ends the driver thread after its last call (fini) and joins it; does
 * nothing for a driver that crashed or was abandoned. */
void tr_driver_join(struct tracerig_ctx *ctx);

/* True once any plugin faulted or was abandoned: the process cannot free
 * or unload what those threads may still use, and exits with _exit. */
int tr_supervise_tainted(void);
/* Any plugin faulted since the last call (for the collecting loop). */
int tr_supervise_fault_pending(void);

const char *tr_call_name(enum tr_call call);

#endif

/* Processes that die on a signal, for the flight recorder's crash
 * trigger: the kernel's process events connector (PROC_EVENT_EXIT carries
 * every process's exit status, not only our children's, which waitpid
 * would give), read from a netlink socket the session polls.  Needs
 * CAP_NET_ADMIN (root), as tracing does. */
#ifndef TR_EXITWATCH_H
#define TR_EXITWATCH_H

#include <stddef.h>
#include <sys/types.h>

/* A non-blocking socket subscribed to process events, or a negative
 * errno (-EPROTONOSUPPORT: a kernel without CONFIG_PROC_EVENTS). */
int tr_exitwatch_open(void);

/* Reads what is queued: fn(arg, pid, status) for each process (thread
 * group) that exited, `status` as wait(2) gives it.  Messages that do not
 * come from the kernel are ignored.  0, or a negative errno (-ENOBUFS:
 * events were lost, the socket goes on). */
int tr_exitwatch_read(int fd, void (*fn)(void *arg, pid_t pid, int status), void *arg);

/* Whether `status` is a death by a signal that means a crash (those whose
 * default action dumps core: SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL,
 * SIGSYS, SIGTRAP, SIGQUIT, SIGXCPU, SIGXFSZ), not a kill or a stop
 * request. */
int tr_exit_is_crash(int status);

/* "killed by SIGSEGV (core dumped)" into buf. */
void tr_exit_describe(int status, char *buf, size_t len);

#endif

/* Which processes to record: -p PIDs (and their descendants), the launched
 * command, translated to the PIDs the processes see themselves. */
#ifndef TR_LTTNG_TARGETS_H
#define TR_LTTNG_TARGETS_H

#include <stddef.h>
#include <sys/types.h>

struct tr_pid_set;

/* Adds every live descendant of the PIDs already in `s` (read from /proc). */
int targets_add_descendants(struct tr_pid_set *s);

/* Virtual PID of a host PID: the last NSpid field of /proc/PID/status (the
 * PID itself when the process is gone or /proc has no NSpid). */
pid_t host_to_vpid(pid_t pid);

#endif

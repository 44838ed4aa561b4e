/* Which processes to record: -p PIDs (and their descendants), the launched
 * command, translated to the PIDs the processes see themselves. */
#ifndef TR_LTTNG_TARGETS_H
#define TR_LTTNG_TARGETS_H

#include <stddef.h>
#include <sys/types.h>

struct pid_set {
	pid_t *pids;
	size_t n, cap;
};

int pid_set_add(struct pid_set *s, pid_t pid);
int pid_set_has(const struct pid_set *s, pid_t pid);
void pid_set_free(struct pid_set *s);

/* Adds every live descendant of the PIDs already in `s` (read from /proc). */
int pid_set_add_descendants(struct pid_set *s);

/* Virtual PID of a host PID: the last NSpid field of /proc/PID/status (the
 * PID itself when the process is gone or /proc has no NSpid). */
pid_t host_to_vpid(pid_t pid);

#endif

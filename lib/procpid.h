/* What /proc says about a process's PIDs: the PID it has in its own
 * namespace, and its descendants. */
#ifndef TR_LIB_PROCPID_H
#define TR_LIB_PROCPID_H

#include <stddef.h>
#include <sys/types.h>

/* The innermost ID of a /proc/PID/status line listing one ID per nested
 * PID namespace ("NSpid:", "NStgid:"), from the text after the colon up to
 * the end of that line: "\t4242\t17\t1\n" gives 1.  0, or -EINVAL when the
 * line holds no positive ID. */
int tr_status_innermost(const char *after_colon, pid_t *id);

/* The ID of /proc/PID/status text's line `field` ("NStgid") in the
 * innermost namespace.  -ENOENT when there is no such line (kernels before
 * 4.1 have no PID namespace lines), -EINVAL as above. */
int tr_status_field_innermost(const char *status, const char *field, pid_t *id);

/* The PID of process `pid` inside its own namespace, from /proc/PID/status:
 * 0, -errno when it cannot be read, -ENOENT when it has no NSpid line. */
int tr_proc_nspid(pid_t pid, pid_t *nspid);

/* Appends the live descendants of `pid` (children of each of its threads,
 * from /proc/PID/task/TID/children, then theirs: parents before children)
 * to the array *out of *n, skipping PIDs already in it, until it holds `max`.
 * A process that exits meanwhile is passed over.  0 or -ENOMEM. */
int tr_proc_descendants(pid_t pid, pid_t **out, size_t *n, size_t max);

#endif

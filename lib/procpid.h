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

/* A small text file (a /proc or /sys file, a pid file) in one read, into
 * `buf` of `size` bytes, NUL-terminated (cut to size - 1 bytes): its length,
 * -errno when it cannot be opened or read, -ENOENT when it is empty. */
ssize_t tr_read_text(const char *path, char *buf, size_t size);

/* A whole /proc file (they report size 0, so it is read until EOF) of at
 * most `max` bytes, `name` relative to `dirfd` (a /proc/PID directory fd,
 * or AT_FDCWD): a new NUL-terminated buffer in *out (free() it) and its
 * length.  A longer file is cut at `max`: what a process may put in its
 * environment or maps does not get to size our memory.  0 or -errno (of
 * the open: ENOENT, ESRCH for a process gone; of a read; ENOMEM). */
int tr_read_proc_file(int dirfd, const char *name, size_t max, char **out, size_t *len);

/* Field `n` of /proc/PID/stat text, numbered as proc(5) does (4 is the
 * parent's PID, 22 the start time in clock ticks), for a numeric field
 * after the command name (n >= 4).  The name may hold spaces and ')', so
 * fields are counted from the last ')'.  0, or -EINVAL. */
int tr_stat_field(const char *stat, int n, unsigned long long *out);
/* The same read from /proc/PID/stat: 0, -errno when it cannot be read
 * (-ENOENT: no such process), -EINVAL. */
int tr_proc_stat_field(pid_t pid, int n, unsigned long long *out);

/* The PID of process `pid` inside its own namespace, from /proc/PID/status:
 * 0, -errno when it cannot be read, -ENOENT when it has no NSpid line. */
int tr_proc_nspid(pid_t pid, pid_t *nspid);

/* The cgroup a process is in, from /proc/PID/cgroup text (what container
 * runtimes name after the container): the path of the unified
 * hierarchy's line ("0::/system.slice/docker-ab12.scope"); on a v1 host,
 * or a hybrid one that leaves the unified path at "/", the first v1 line's
 * path that is not "/" (else "/").  Copied into `out` of `len` bytes (cut
 * to fit).  0, or -ENOENT when no line has a path. */
int tr_cgroup_path(const char *text, char *out, size_t len);
/* The same read from /proc/PID/cgroup: 0, -errno when it cannot be read. */
int tr_proc_cgroup(pid_t pid, char *out, size_t len);

/* Appends the live descendants of `pid` (children of each of its threads,
 * from /proc/PID/task/TID/children, then theirs: parents before children)
 * to the array *out of *n, skipping PIDs already in it, until it holds `max`.
 * A process that exits meanwhile is passed over.  0 or -ENOMEM. */
int tr_proc_descendants(pid_t pid, pid_t **out, size_t *n, size_t max);

#endif

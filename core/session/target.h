/* The launched command: forked before the sources start, held before
 * exec(2) until they have, so nothing it does goes unseen. */
#ifndef TR_TARGET_H
#define TR_TARGET_H

#include <sys/types.h>

struct tr_command {
	pid_t pid;
	int release_fd;  /* write end: closing it lets the child exec */
	int exec_err_fd; /* read end: errno from a failed exec, EOF on success */
	int exec_errno;
	int status;      /* wait status once reaped */
	int reaped;
};

/* Forks `argv`; `env` (NULL-terminated "NAME=value") is added to the
 * child's environment. */
int tr_command_spawn(struct tr_command *c, char *const argv[], char *const env[]);
/* Lets the child exec; returns 0, or -errno when exec failed. */
int tr_command_release(struct tr_command *c);
/* Kills a child that was never released. */
void tr_command_abort(struct tr_command *c);
/* Non-blocking reap: 1 when the child has exited. */
int tr_command_poll(struct tr_command *c);
void tr_command_close(struct tr_command *c);

/* Raises this process's soft limit of open files to its hard limit (a
 * session may hold an object file open per mapped library of every traced
 * process); a launched command gets the limit tracerig was started with.
 * 0, or -errno when the limit could not be read or raised. */
int tr_raise_open_files(void);

/* Checks -p values: processes that exist.  Logs and returns -ESRCH otherwise. */
int tr_pid_check(pid_t pid);
int tr_pid_alive(pid_t pid);

#endif

/* The control socket of a detached session (`tracerig start`):
 * /run/tracerig/NAME.sock, a Unix stream socket in a root-owned 0700
 * directory, mode 0600.  One line in ("status", "snapshot", "stop"), lines
 * back. */
#ifndef TR_CONTROL_H
#define TR_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

/* Where the sockets and the sessions' logs live: $TRACERIG_RUNTIME_DIR
 * (tests) or /run/tracerig. */
const char *tr_control_dir(void);

/* 0 when `name` can name a session (letters, digits, '.', '_', '-'; not
 * starting with '.' or '-'; at most 64 bytes), else -EINVAL and a reason. */
int tr_control_check_name(const char *name, char *why, size_t len);

/* Checks that the directory is root's alone (owner root, no access for
 * group or others, not a symbolic link): every command trusts what it
 * finds there only then.  0, -ENOENT when it does not exist, or another
 * negative errno (-EPERM: not trusted) with the reason in `why`. */
int tr_control_check_dir(char *why, size_t len);

/* Creates the directory if missing and checks it (tr_control_check_dir);
 * 0 or a negative errno with the reason in `why`. */
int tr_control_prepare_dir(char *why, size_t len);

/* DIR/NAME.suffix into buf; -ENAMETOOLONG when it does not fit. */
int tr_control_file(const char *name, const char *suffix, char *buf, size_t len);

/* Binds and listens on NAME.sock; a socket file nobody answers on (left by
 * a killed session) is replaced.  The fd, or a negative errno (-EADDRINUSE:
 * a session of that name runs) with the reason in `why`. */
int tr_control_listen(const char *name, char *why, size_t len);

/* A connected socket to session `name`, or a negative errno (-ENOENT: no
 * such session; -ECONNREFUSED: a stale socket, which is removed; -EPERM:
 * the directory is not trusted (tr_control_check_dir); -EACCES: the
 * socket's listener is neither root nor this user). */
int tr_control_connect(const char *name);

/* Sends `command` and a newline. */
int tr_control_send(int fd, const char *command);

/* Reads one line (without its newline) within timeout_ms (-1: no limit):
 * 1, 0 at end of stream, or a negative errno (-ETIMEDOUT, -EMSGSIZE).
 * The line is sanitized (lib/sanitize.h: no control characters, valid
 * UTF-8): whatever the peer sent can be printed as it is. */
int tr_control_read_line(int fd, char *buf, size_t len, int timeout_ms);

/* The sessions' names, malloc'd (caller frees each and the array): none
 * when the directory does not exist, -EPERM when it is not trusted. */
int tr_control_list(char ***names, size_t *n);

#endif

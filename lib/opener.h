/* Opening a traced process's files in another process, so that a file
 * system that stops answering cannot hold tracerig.
 *
 * A lookup or a read on a FUSE (or network) file system whose server no
 * longer answers waits in the kernel, uninterruptibly, for as long as the
 * server lives: a thread of ours stuck there blocks even the exit of the
 * whole process (SIGKILL included).  So every open of lib/untrusted.h
 * runs, once tr_opener_start was called, in a helper process:
 *
 * - A supervisor, forked by tr_opener_start (single-threaded, so it may
 *   fork again and use malloc), hands each request to a worker process
 *   it forks, which does the lookups and opens of lib/untrusted.c and
 *   passes the fd back (SCM_RIGHTS) with the struct tr_untrusted.
 * - A worker that does not answer within the deadline is killed and left
 *   behind (it may stay in D state until the file system's server goes:
 *   a child in D state blocks nobody's exit); a fresh one serves the next
 *   request.  The directory of the file that hung is remembered, with
 *   the mount namespace (or mount) it was resolved in, so that a
 *   container's stuck /tmp is not ours: later opens under it fail at once
 *   (-ETIMEDOUT) instead of each waiting for the deadline.  At most TR_OPENER_MAX_ABANDONED workers are left
 *   behind; past that every open fails at once.
 * - A file on FUSE or a network file system (NFS, CIFS/SMB, 9p, Ceph,
 *   AFS, ...) is not handed over as it is, since a later read by one of
 *   our threads could hang the same way: the worker copies it (at most
 *   TR_OPENER_COPY_MAX bytes) into a sealed memfd and passes that.
 *   struct tr_untrusted's st still describes the original file, so
 *   callers compare u->st, never fstat of the fd, with a mapping's inode.
 *
 * The supervisor is reached through the environment (TRACERIG_OPENER,
 * with our pid, so that a process we launch ignores it): each copy of
 * the internal library (the core's, each plugin's) finds it there.  A
 * process that never calls tr_opener_start (unit tests, tools linking
 * lib/) opens directly, as before. */
#ifndef TR_LIB_OPENER_H
#define TR_LIB_OPENER_H

#include <stdint.h>
#include <sys/types.h>

#include "untrusted.h"

/* Abandoned workers (maybe in D state) kept at most; then opens fail. */
#define TR_OPENER_MAX_ABANDONED 8
/* The largest file on FUSE or a network file system copied (256 MiB). */
#define TR_OPENER_COPY_MAX (256ull << 20)

/* Called, from a thread of the opener's own, once per directory that hung:
 * `path` is the file whose open did not end within timeout_ms. */
typedef void (*tr_opener_stuck_fn)(const char *path, unsigned int timeout_ms, void *arg);

/* Starts the supervisor.  Call before any thread exists (it forks); then
 * opens take at most about timeout_ms each.  Returns 0 or -errno (opens
 * stay direct then). */
int tr_opener_start(unsigned int timeout_ms, tr_opener_stuck_fn stuck, void *arg);

/* Ends the supervisor (workers left in D state are not waited for) and
 * the notifying thread; later opens are direct.  Call when no other thread
 * opens files any more. */
void tr_opener_stop(void);

/* For lib/untrusted.c: the operations it forwards. */
enum tr_opener_op {
	TR_OPENER_OPEN,           /* tr_untrusted_open(pid, path) */
	TR_OPENER_OPENAT,         /* tr_untrusted_openat(fd, path, scope) */
	TR_OPENER_REOPEN,         /* tr_untrusted_reopen(fd): fd is taken over */
	TR_OPENER_OPEN_DIR,       /* tr_untrusted_open_dir(fd, path, scope) */
	TR_OPENER_OPEN_LOCAL_DIR, /* tr_untrusted_open_local_dir(fd, path, scope) */
	TR_OPENER_REMOVE,         /* tr_untrusted_remove: through tr_opener_remove */
};

/* 1 when this process forwards its opens (tr_opener_start ran here). */
int tr_opener_active(void);

/* Runs one operation in the worker; returns what the operation returns,
 * or -ETIMEDOUT (u->step says why) when the file system did not answer
 * in time now or before.  u may be NULL for the directories'
 * operations. */
int tr_opener_call(enum tr_opener_op op, int fd, pid_t pid, const char *path,
		   enum tr_scope scope, uint64_t max_size, struct tr_untrusted *u);

/* tr_untrusted_remove(dirfd, name, dev, ino) in the worker: 0 or -errno,
 * -ETIMEDOUT as above. */
int tr_opener_remove(int dirfd, const char *name, dev_t dev, ino_t ino);

#endif

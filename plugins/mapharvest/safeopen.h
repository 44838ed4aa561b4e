/* Opening files that a container controls, without trusting it. */
#ifndef MH_SAFEOPEN_H
#define MH_SAFEOPEN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* How `path` is resolved against `dirfd`. */
enum mh_scope {
	MH_IN_ROOT,  /* dirfd is a process's root: absolute paths and ".." stay inside */
	MH_BENEATH,  /* path must stay below dirfd ("..", absolute paths refused) */
};

/* Opens a regular file for reading.  No symbolic link is followed anywhere
 * in the path (nor /proc magic links), the file is first opened O_PATH so
 * that a FIFO or a device is never really opened, then checked with fstat
 * (regular, at most max_size bytes) and only then reopened for reading.
 *
 * Returns an fd (O_RDONLY|O_CLOEXEC) and fills *st, or
 *   -ENOENT  nothing there (not worth a log line),
 *   -EPERM   refused: `why` says why ("a symbolic link", "a FIFO", ...),
 *   -EFBIG   refused: larger than max_size (`why` has the size),
 *   other    an error, `why` says which step failed. */
int mh_open_regular(int dirfd, const char *path, enum mh_scope scope, uint64_t max_size,
		    struct stat *st, char *why, size_t why_len);

/* Opens a directory O_PATH under the same rules (for unlinkat at cleanup). */
int mh_open_dir(int dirfd, const char *path, enum mh_scope scope);

/* 1 when openat2(2) with RESOLVE_IN_ROOT works here, else 0 and errno. */
int mh_openat2_usable(void);

#endif

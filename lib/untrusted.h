/* The one way to open a file that a traced process (or its container)
 * controls.
 *
 * tracerig runs as root and reads /tmp/perf-PID.map, jit-PID.dump, ELF
 * objects and debug files that the traced process can replace at will: by a
 * symbolic link to /etc/shadow, a FIFO nobody writes, a device node, a 1 GiB
 * sparse file.  Every such file is opened here:
 *
 * - openat2(2) on the process's root (/proc/PID/root, or / for pid 0) with
 *   RESOLVE_IN_ROOT (absolute paths and ".." stay inside that root) and
 *   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: no link is followed at all,
 *   so nothing can point back at the host.  Paths taken from /proc/PID/maps
 *   are canonical (the kernel resolved them), so ELF objects lose nothing.
 * - A file the process writes itself must be on the mount of the directory
 *   that holds it: one bind-mounted over another (which any user may do in
 *   a user and mount namespace of its own, unshare -Urm) is refused
 *   (tr_untrusted_owned); an ELF object bind-mounted alone is opened.  The directories on the
 *   path may be mount points: a container's root, its tmpfs /tmp and its
 *   volumes are its own; what a directory mounted from elsewhere holds is
 *   kept out by the owner check below.
 * - The file is first opened O_PATH | O_NOFOLLOW: that never runs a driver's
 *   open nor blocks on a FIFO, and a trailing link comes back as the link
 *   itself, so fstat says precisely what was refused.
 * - Regular file and size are checked before a byte is read; only then is
 *   that very inode reopened for reading (through /proc/self/fd), with
 *   O_NONBLOCK | O_NOCTTY | O_CLOEXEC.
 * - There is no fallback that follows links: without openat2 (Linux < 5.6)
 *   every open is refused with TR_REFUSED_NO_OPENAT2.
 * - Files the process writes itself (perf maps, jitdumps) must also belong
 *   to a user it acts as (tr_untrusted_owned): root's files only when it is
 *   root.  ELF objects and debug files are root's; they are checked against
 *   what the process mapped (inode, build id, CRC) instead.
 *
 * - Once tr_opener_start (lib/opener.h) ran in the process, all of this
 *   happens in a helper process within a deadline: a file system that does
 *   not answer (a hung FUSE server) costs -ETIMEDOUT, not a thread stuck
 *   for good, and a file on FUSE or a network file system comes back as a
 *   sealed in-memory copy.  So u->st, not fstat of the fd, is the file's
 *   inode.
 *
 * Nothing here logs: functions return 0/an fd or -errno and fill a
 * struct tr_untrusted that tr_untrusted_explain turns into the words of a
 * log line ("a symbolic link", "a FIFO", "larger than the 256 MiB limit"). */
#ifndef TR_LIB_UNTRUSTED_H
#define TR_LIB_UNTRUSTED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

enum tr_refusal {
	TR_REFUSED_NONE = 0,
	TR_REFUSED_SYMLINK,      /* the file itself is a symbolic link */
	TR_REFUSED_LINK_ON_PATH, /* a directory on the path is a link (ELOOP) */
	TR_REFUSED_ESCAPES,      /* the path leaves the directory (EXDEV) */
	TR_REFUSED_FIFO,
	TR_REFUSED_SOCKET,
	TR_REFUSED_CHARDEV,
	TR_REFUSED_BLOCKDEV,
	TR_REFUSED_DIRECTORY,
	TR_REFUSED_NOT_REGULAR,
	TR_REFUSED_TOO_BIG,      /* st_size > the caller's limit */
	TR_REFUSED_CHANGED,      /* another inode between the check and the open */
	TR_REFUSED_NO_OPENAT2,   /* the kernel lacks openat2: nothing is opened */
	TR_REFUSED_MOUNT_POINT,  /* another file is mounted over it */
	TR_REFUSED_OWNER,        /* not the process's user's (tr_untrusted_owned) */
};

/* How `path` is resolved against the directory fd. */
enum tr_scope {
	TR_IN_ROOT, /* the fd is a process's root: absolute paths and ".." stay inside */
	TR_BENEATH, /* path must stay below the fd ("..", absolute paths refused) */
};

/* The largest ELF object or debug file opened (16 GiB): they are mapped,
 * not read whole, so only the headers and sections used are touched. */
#define TR_OBJECT_MAX (16ull << 30)

/* What happened to one open. */
struct tr_untrusted {
	enum tr_refusal refusal; /* set when -EPERM, -EFBIG or -ENOSYS is returned */
	struct stat st;          /* valid once the file was found (refusals included) */
	uint64_t limit;          /* the size limit that applied */
	uid_t proc_uid;          /* TR_REFUSED_OWNER: the process's effective uid */
	int mounted_over;        /* another file is mounted over the name (see lookup) */
	const char *step;        /* for other errors: the call that failed */
};

/* Opens a regular file of at most max_size bytes for reading, under the
 * rules above.  Returns an fd (O_RDONLY | O_NONBLOCK | O_CLOEXEC) or
 *   -ENOENT  nothing there (ENOTDIR included: not worth a log line),
 *   -EPERM   refused, u->refusal says why,
 *   -EFBIG   refused, larger than max_size (u->st.st_size, u->limit),
 *   -ENOSYS  openat2(2) unavailable (u->refusal = TR_REFUSED_NO_OPENAT2),
 *   -ETIMEDOUT  its file system did not answer in time, now or before
 *            (lib/opener.h),
 *   other    -errno of u->step. */
int tr_untrusted_openat(int dirfd, const char *path, enum tr_scope scope, uint64_t max_size,
			struct tr_untrusted *u);

/* The same, for `path` as process `pid` sees it (absolute; resolved inside
 * /proc/PID/root), or inside our own root for pid 0. */
int tr_untrusted_open(pid_t pid, const char *path, uint64_t max_size, struct tr_untrusted *u);

/* The checks and the reopen on their own, for an O_PATH fd the caller got
 * another way (a /proc/PID/map_files entry, which the kernel resolves).
 * Takes pfd over (closes it).  Returns like tr_untrusted_openat. */
int tr_untrusted_reopen(int pfd, uint64_t max_size, struct tr_untrusted *u);

/* For a file the process writes itself: keeps `fd`, a result of the opens
 * above with `u` as they filled it, when the file is on the mount of its
 * directory (not bind-mounted over the name: TR_REFUSED_MOUNT_POINT) and
 * belongs to a user process `pid` acts as (its real, effective, saved or
 * filesystem uid; pid 0: us), so that root's files pass only for a process
 * that could read them anyway.  Otherwise closes fd and returns -EPERM,
 * or -ESRCH when the process is gone.  A negative fd is returned as it
 * is. */
int tr_untrusted_owned(pid_t pid, int fd, struct tr_untrusted *u);

/* Opens a directory O_PATH under the same rules (for tr_untrusted_remove). */
int tr_untrusted_open_dir(int dirfd, const char *path, enum tr_scope scope);

/* The same, for a directory the caller will look into itself (a lookup, a
 * listing, a connect): one on FUSE or a network file system gives
 * -EREMOTE, since its server could hold the caller's thread in the kernel
 * for good, where the opener's deadline cannot reach. */
int tr_untrusted_open_local_dir(int dirfd, const char *path, enum tr_scope scope);

/* Whether `path` names anything inside the root `rootfd`, symlinks
 * followed within that root and never out of it (a soname is a link to
 * its versioned file); nothing is opened for reading. */
int tr_exists_in_root(int rootfd, const char *path);

/* Removes `name` (no '/') from the directory dirfd (of the opens above)
 * if it is still the file dev/ino: 0, -ESTALE when another file has the
 * name now, or -errno (-ETIMEDOUT: its file system did not answer in
 * time, see opener.h). */
int tr_untrusted_remove(int dirfd, const char *name, dev_t dev, ino_t ino);

/* 1 for a statfs f_type whose reads wait on a server that may never
 * answer (FUSE, NFS, SMB, 9p, Ceph, ...). */
int tr_remote_fs(long type);

/* 1 when openat2(2) with RESOLVE_IN_ROOT works here, else 0 (errno set). */
int tr_untrusted_usable(void);

/* Words for a log line about the result `ret` of an open: "a symbolic link
 * (links are not followed inside a process's root)", "a FIFO",
 * "1073741824 bytes, larger than the 256 MiB limit", "openat2: Permission
 * denied".  Writes into buf and returns it. */
const char *tr_untrusted_explain(const struct tr_untrusted *u, int ret, char *buf, size_t len);

/* Reads at most `max` bytes of fd from `offset` into a new buffer (*buf,
 * free() it; NULL when *len is 0).  Stops at the end of file; a file that
 * grows meanwhile is read up to the size it had when called, never past
 * max.  Returns 0 or -errno. */
int tr_read_at_most(int fd, uint64_t offset, size_t max, unsigned char **buf, size_t *len);

#endif

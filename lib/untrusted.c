/* Opening files that a traced process controls, without trusting it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "opener.h"
#include "procpid.h"
#include "untrusted.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static int sys_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how;
	int fd, tries = 0;

	memset(&how, 0, sizeof(how));
	how.flags = flags;
	how.resolve = resolve;
	/* RESOLVE_IN_ROOT answers EAGAIN when a rename raced the lookup. */
	do {
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	} while (fd < 0 && errno == EAGAIN && ++tries < 8);
	return fd;
}

static uint64_t resolve_flags(enum tr_scope scope)
{
	return (scope == TR_IN_ROOT ? RESOLVE_IN_ROOT : RESOLVE_BENEATH) | RESOLVE_NO_SYMLINKS |
	       RESOLVE_NO_MAGICLINKS;
}

int tr_exists_in_root(int rootfd, const char *path)
{
	int fd = sys_openat2(rootfd, path, O_PATH | O_CLOEXEC,
			     RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static enum tr_refusal refusal_of(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFLNK: return TR_REFUSED_SYMLINK;
	case S_IFIFO: return TR_REFUSED_FIFO;
	case S_IFSOCK: return TR_REFUSED_SOCKET;
	case S_IFCHR: return TR_REFUSED_CHARDEV;
	case S_IFBLK: return TR_REFUSED_BLOCKDEV;
	case S_IFDIR: return TR_REFUSED_DIRECTORY;
	default: return TR_REFUSED_NOT_REGULAR;
	}
}

static int refuse(struct tr_untrusted *u, enum tr_refusal why, int ret)
{
	u->refusal = why;
	return ret;
}

/* What a failed lookup means for the caller. */
static int lookup_failed(int err, struct tr_untrusted *u)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		return -ENOENT;
	case ELOOP:
		return refuse(u, TR_REFUSED_LINK_ON_PATH, -EPERM);
	case EXDEV:
		return refuse(u, TR_REFUSED_ESCAPES, -EPERM);
	case ENOSYS:
		/* No fallback: an openat(2) would follow the links. */
		return refuse(u, TR_REFUSED_NO_OPENAT2, -ENOSYS);
	default:
		u->step = "openat2";
		return -err;
	}
}

/* The file O_PATH, in two steps: its directory under the scope's rules,
 * where any directory on the way may be a mount point (a container's /tmp
 * is often a tmpfs of its own), then its name in that directory with
 * RESOLVE_NO_XDEV.  What that tells is a file that is itself a mount
 * point: one bind-mounted over the name, from anywhere its owner could
 * look up but not read.  Such a file is noted (u->mounted_over) and opened
 * all the same: an ELF object bind-mounted alone is common (docker-init,
 * the NVIDIA libraries in a container) and is checked against what the
 * process mapped; a file the process writes itself is refused for it
 * (tr_untrusted_owned).  Returns an fd or the caller's -errno. */
static int lookup(int dirfd, const char *path, enum tr_scope scope, struct tr_untrusted *u)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	int dfd = dirfd, pfd;

	/* "dir/", "dir/." or "dir/..": a directory whatever it is, refused
	 * as one by the caller; its name is no file of a directory. */
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		pfd = sys_openat2(dirfd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC, resolve_flags(scope));
		return pfd < 0 ? lookup_failed(errno, u) : pfd;
	}
	if (slash) {
		char *dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));

		if (!dir) {
			u->step = "lookup";
			return -ENOMEM;
		}
		dfd = sys_openat2(dirfd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, resolve_flags(scope));
		free(dir);
		if (dfd < 0)
			return lookup_failed(errno, u);
	}
	pfd = sys_openat2(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC,
			  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
				  RESOLVE_NO_XDEV);
	if (pfd < 0 && errno == EXDEV) {
		/* One plain name beneath its directory: EXDEV is the mount. */
		u->mounted_over = 1;
		pfd = sys_openat2(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC,
				  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	}
	if (pfd < 0)
		pfd = lookup_failed(errno, u);
	if (dfd != dirfd)
		close(dfd);
	return pfd;
}

static int reopen_here(int pfd, uint64_t max_size, struct tr_untrusted *u);

static int openat_here(int dirfd, const char *path, enum tr_scope scope, uint64_t max_size,
		       struct tr_untrusted *u)
{
	int pfd;

	memset(u, 0, sizeof(*u));
	u->limit = max_size;
	pfd = lookup(dirfd, path, scope, u);
	if (pfd < 0)
		return pfd;
	return reopen_here(pfd, max_size, u);
}

/* Once tr_opener_start ran in this process, the opens below happen in its
 * worker process (lib/opener.h); these are what the worker runs. */
int tr_untrusted_openat(int dirfd, const char *path, enum tr_scope scope, uint64_t max_size,
			struct tr_untrusted *u)
{
	if (tr_opener_active())
		return tr_opener_call(TR_OPENER_OPENAT, dirfd, 0, path, scope, max_size, u);
	return openat_here(dirfd, path, scope, max_size, u);
}

int tr_untrusted_reopen(int pfd, uint64_t max_size, struct tr_untrusted *u)
{
	if (tr_opener_active()) {
		memset(u, 0, sizeof(*u));
		return tr_opener_call(TR_OPENER_REOPEN, pfd, 0, NULL, TR_IN_ROOT, max_size, u);
	}
	return reopen_here(pfd, max_size, u);
}

static int reopen_here(int pfd, uint64_t max_size, struct tr_untrusted *u)
{
	char self[64];
	struct stat again;
	int fd, ret;

	u->limit = max_size;
	if (fstat(pfd, &u->st) < 0) {
		ret = -errno;
		u->step = "fstat";
		goto close_path;
	}
	if (!S_ISREG(u->st.st_mode)) {
		ret = refuse(u, refusal_of(u->st.st_mode), -EPERM);
		goto close_path;
	}
	if ((uint64_t)u->st.st_size > max_size) {
		ret = refuse(u, TR_REFUSED_TOO_BIG, -EFBIG);
		goto close_path;
	}
	/* Reopening through our own fd table opens exactly the inode checked
	 * above, whatever the process renames meanwhile. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		u->step = "reopen for reading";
		goto close_path;
	}
	if (fstat(fd, &again) < 0 || again.st_ino != u->st.st_ino ||
	    again.st_dev != u->st.st_dev || !S_ISREG(again.st_mode)) {
		close(fd);
		ret = refuse(u, TR_REFUSED_CHANGED, -EPERM);
		goto close_path;
	}
	close(pfd);
	return fd;

close_path:
	close(pfd);
	return ret;
}

int tr_untrusted_open(pid_t pid, const char *path, uint64_t max_size, struct tr_untrusted *u)
{
	char root[64];
	int rootfd, fd;

	if (tr_opener_active())
		return tr_opener_call(TR_OPENER_OPEN, -1, pid, path, TR_IN_ROOT, max_size, u);
	memset(u, 0, sizeof(*u));
	u->limit = max_size;
	if (!path || path[0] != '/') {
		u->step = "a path relative to the process's root";
		return -EINVAL;
	}
	if (pid > 0)
		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	else
		snprintf(root, sizeof(root), "/");
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		/* The process is gone (or its root is not ours to see). */
		u->step = "open the process's root";
		return errno == ENOENT ? -ESRCH : -errno;
	}
	fd = openat_here(rootfd, path, TR_IN_ROOT, max_size, u);
	close(rootfd);
	return fd;
}

/* The user ids process `pid` acts as, from its status (in our user
 * namespace's terms, as fstat gives owners): real, effective, saved,
 * filesystem. */
static int proc_uids(pid_t pid, uid_t ids[4])
{
	char path[64], buf[4096];
	unsigned int r, e, s, f;
	const char *line;
	ssize_t n;

	if (pid <= 0) {
		if (getresuid(&ids[0], &ids[1], &ids[2]) < 0)
			return -errno;
		ids[3] = ids[1];
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	/* The Uid line comes early, well within one page; the kernel
	 * escapes a newline in the Name line, so no name can forge one. */
	n = tr_read_text(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	line = strstr(buf, "\nUid:");
	if (!line || sscanf(line + 5, "%u %u %u %u", &r, &e, &s, &f) != 4)
		return -EINVAL;
	ids[0] = r;
	ids[1] = e;
	ids[2] = s;
	ids[3] = f;
	return 0;
}

int tr_untrusted_owned(pid_t pid, int fd, struct tr_untrusted *u)
{
	uid_t ids[4];
	int ret;

	if (fd < 0)
		return fd;
	if (u->mounted_over) {
		close(fd);
		return refuse(u, TR_REFUSED_MOUNT_POINT, -EPERM);
	}
	ret = proc_uids(pid, ids);
	if (ret < 0) {
		u->step = "read the process's user ids";
		close(fd);
		return ret;
	}
	for (int i = 0; i < 4; i++)
		if (u->st.st_uid == ids[i])
			return fd;
	u->proc_uid = ids[1];
	close(fd);
	return refuse(u, TR_REFUSED_OWNER, -EPERM);
}

int tr_untrusted_open_dir(int dirfd, const char *path, enum tr_scope scope)
{
	int fd;

	if (tr_opener_active())
		return tr_opener_call(TR_OPENER_OPEN_DIR, dirfd, 0, path, scope, 0, NULL);
	fd = sys_openat2(dirfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC, resolve_flags(scope));

	return fd < 0 ? -errno : fd;
}

int tr_untrusted_open_local_dir(int dirfd, const char *path, enum tr_scope scope)
{
	struct statfs sfs;
	int fd;

	if (tr_opener_active())
		return tr_opener_call(TR_OPENER_OPEN_LOCAL_DIR, dirfd, 0, path, scope, 0, NULL);
	fd = tr_untrusted_open_dir(dirfd, path, scope);
	/* A server that does not say what it is counts as remote. */
	if (fd >= 0 && (fstatfs(fd, &sfs) < 0 || tr_remote_fs((long)sfs.f_type))) {
		close(fd);
		return -EREMOTE;
	}
	return fd;
}

int tr_untrusted_remove(int dirfd, const char *name, dev_t dev, ino_t ino)
{
	struct stat st;

	if (tr_opener_active())
		return tr_opener_remove(dirfd, name, dev, ino);
	if (!*name || strchr(name, '/'))
		return -EINVAL;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (st.st_dev != dev || st.st_ino != ino)
		return -ESTALE;
	return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
}

int tr_remote_fs(long type)
{
	static const unsigned long magic[] = {
		0x65735546, /* FUSE */
		0x6969,     /* NFS */
		0x517B,     /* SMB */
		0xFF534D42, /* CIFS */
		0xFE534D42, /* SMB2 */
		0x01021997, /* 9p */
		0x00C36400, /* Ceph */
		0x6B414653, /* AFS (kAFS) */
		0x5346414F, /* AFS (OpenAFS) */
		0x73757245, /* Coda */
		0x564C,     /* NCP */
		0x0BD00BD0, /* Lustre */
		0x20030528, /* OrangeFS */
		0x01161970, /* GFS2 */
		0x7461636F, /* OCFS2 */
	};

	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if ((unsigned long)(unsigned int)type == magic[i])
			return 1;
	return 0;
}

int tr_untrusted_usable(void)
{
	int fd = sys_openat2(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC,
			     RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* "256 MiB", "100 KiB", "100-byte": the limit as it was probably written. */
static void size_words(uint64_t n, char *buf, size_t len)
{
	if (n >= (1u << 20) && n % (1u << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(n >> 20));
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, len, "%llu KiB", (unsigned long long)(n >> 10));
	else
		snprintf(buf, len, "%llu-byte", (unsigned long long)n);
}

const char *tr_untrusted_explain(const struct tr_untrusted *u, int ret, char *buf, size_t len)
{
	static const char *const words[] = {
		[TR_REFUSED_NONE] = "",
		[TR_REFUSED_SYMLINK] = "a symbolic link (links are not followed inside a process's root)",
		[TR_REFUSED_LINK_ON_PATH] = "a directory on its path is a symbolic link (links are not "
					    "followed inside a process's root)",
		[TR_REFUSED_ESCAPES] = "the path leaves the directory it must stay in",
		[TR_REFUSED_FIFO] = "a FIFO",
		[TR_REFUSED_SOCKET] = "a socket",
		[TR_REFUSED_CHARDEV] = "a character device",
		[TR_REFUSED_BLOCKDEV] = "a block device",
		[TR_REFUSED_DIRECTORY] = "a directory",
		[TR_REFUSED_NOT_REGULAR] = "not a regular file",
		[TR_REFUSED_TOO_BIG] = "",
		[TR_REFUSED_CHANGED] = "the file changed while it was opened",
		[TR_REFUSED_NO_OPENAT2] = "openat2(2) with RESOLVE_IN_ROOT is unavailable (needs "
					  "Linux 5.6 or later; files are never opened following links)",
		[TR_REFUSED_MOUNT_POINT] = "another file is mounted over it (a file is read only "
					   "from the mount of its own directory)",
		[TR_REFUSED_OWNER] = "",
	};

	if (!len)
		return buf;
	if (u->refusal == TR_REFUSED_OWNER) {
		snprintf(buf, len, "owned by uid %u, not by the process's user (uid %u)",
			 (unsigned int)u->st.st_uid, (unsigned int)u->proc_uid);
	} else if (u->refusal == TR_REFUSED_TOO_BIG) {
		char limit[32];

		size_words(u->limit, limit, sizeof(limit));
		snprintf(buf, len, "%llu bytes, larger than the %s limit",
			 (unsigned long long)u->st.st_size, limit);
	} else if (u->refusal != TR_REFUSED_NONE &&
		   (size_t)u->refusal < sizeof(words) / sizeof(words[0])) {
		snprintf(buf, len, "%s", words[u->refusal]);
	} else if (ret == -ENOENT) {
		snprintf(buf, len, "no such file");
	} else {
		snprintf(buf, len, "%s%s%s", u->step ? u->step : "", u->step ? ": " : "",
			 strerror(ret < 0 ? -ret : ret));
	}
	return buf;
}

int tr_read_at_most(int fd, uint64_t offset, size_t max, unsigned char **buf, size_t *len)
{
	struct stat st;
	unsigned char *b;
	size_t want, got = 0;

	*buf = NULL;
	*len = 0;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size <= offset || max == 0)
		return 0;
	want = (uint64_t)st.st_size - offset < max ? (size_t)((uint64_t)st.st_size - offset) : max;
	b = malloc(want);
	if (!b)
		return -ENOMEM;
	while (got < want) {
		ssize_t n = pread(fd, b + got, want - got, (off_t)(offset + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(b);
			return err;
		}
		if (n == 0)
			break; /* truncated meanwhile */
		got += (size_t)n;
	}
	if (!got) {
		free(b);
		return 0;
	}
	*buf = b;
	*len = got;
	return 0;
}

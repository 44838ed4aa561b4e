/* Safe opening of files inside a container's root.
 *
 * A process in a container decides what /tmp/perf-1.map is: a symbolic link
 * to /etc/shadow, a FIFO nobody writes, a 100 GiB sparse file.  We read it
 * as root on the host, so every lookup goes through openat2(2) on the
 * process's own root with RESOLVE_IN_ROOT (absolute paths and ".." cannot
 * leave it) and RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS (no link is
 * followed at all, so nothing can point back at the host).  The last
 * component is opened O_PATH | O_NOFOLLOW: that never runs a driver's open
 * or blocks on a FIFO, and a trailing link comes back as the link itself, so
 * fstat can say precisely what was refused. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "safeopen.h"

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

static uint64_t resolve_flags(enum mh_scope scope)
{
	return (scope == MH_IN_ROOT ? RESOLVE_IN_ROOT : RESOLVE_BENEATH) |
	       RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
}

static const char *file_type(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFLNK: return "a symbolic link (links are not followed inside a process's root)";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFDIR: return "a directory";
	default: return "not a regular file";
	}
}

int mh_open_regular(int dirfd, const char *path, enum mh_scope scope, uint64_t max_size,
		    struct stat *st, char *why, size_t why_len)
{
	char self[64];
	struct stat again;
	int pfd, fd, ret;

	why[0] = '\0';
	pfd = sys_openat2(dirfd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC, resolve_flags(scope));
	if (pfd < 0) {
		ret = -errno;
		switch (errno) {
		case ENOENT:
		case ENOTDIR:
			return -ENOENT;
		case ELOOP:
			snprintf(why, why_len, "a directory on its path is a symbolic link "
				 "(links are not followed inside a process's root)");
			return -EPERM;
		case EXDEV:
			snprintf(why, why_len, "the path leaves the directory it must stay in");
			return -EPERM;
		default:
			snprintf(why, why_len, "openat2: %s", strerror(errno));
			return ret;
		}
	}
	if (fstat(pfd, st) < 0) {
		ret = -errno;
		snprintf(why, why_len, "fstat: %s", strerror(errno));
		goto close_path;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(why, why_len, "%s", file_type(st->st_mode));
		ret = -EPERM;
		goto close_path;
	}
	if ((uint64_t)st->st_size > max_size) {
		snprintf(why, why_len, "%llu bytes, more than max_size = %llu (raise [mapharvest] "
			 "max_size to keep it)", (unsigned long long)st->st_size,
			 (unsigned long long)max_size);
		ret = -EFBIG;
		goto close_path;
	}
	/* Reopening through our own fd table opens exactly the inode checked
	 * above, whatever the container renames meanwhile. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, why_len, "reopen for reading: %s", strerror(errno));
		goto close_path;
	}
	if (fstat(fd, &again) < 0 || again.st_ino != st->st_ino || again.st_dev != st->st_dev ||
	    !S_ISREG(again.st_mode)) {
		snprintf(why, why_len, "the file changed while it was opened");
		close(fd);
		ret = -EPERM;
		goto close_path;
	}
	close(pfd);
	return fd;

close_path:
	close(pfd);
	return ret;
}

int mh_open_dir(int dirfd, const char *path, enum mh_scope scope)
{
	int fd = sys_openat2(dirfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC, resolve_flags(scope));

	return fd < 0 ? -errno : fd;
}

int mh_openat2_usable(void)
{
	int fd = sys_openat2(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC,
			     RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

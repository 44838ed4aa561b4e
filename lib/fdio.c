/* Whole writes and copies: see fdio.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fdio.h"

int tr_pwrite_counted(int fd, const void *data, size_t len, off_t off, size_t *written)
{
	const uint8_t *p = data;

	*written = 0;
	while (*written < len) {
		size_t left = len - *written;
		ssize_t n = off < 0 ? write(fd, p + *written, left)
				    : pwrite(fd, p + *written, left, off + (off_t)*written);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		*written += (size_t)n;
	}
	return 0;
}

int tr_pwrite_all(int fd, const void *data, size_t len, off_t off)
{
	size_t written;

	return tr_pwrite_counted(fd, data, len, off, &written);
}

int tr_copy_fd(int in, int out)
{
	char buf[64 * 1024];

	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf));
		int ret;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		ret = tr_write_all(out, buf, (size_t)r);
		if (ret < 0)
			return ret;
	}
}

int tr_unlinked_file(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC | O_EXCL, 0600);

	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
		char path[4096];

		if ((size_t)snprintf(path, sizeof(path), "%s/.tracerig-XXXXXX", dir) >= sizeof(path))
			return -ENAMETOOLONG;
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			(void)unlink(path);
	}
	return fd < 0 ? -errno : fd;
}

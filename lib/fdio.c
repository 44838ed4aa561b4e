/* Whole writes and copies: see fdio.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fdio.h"

int tr_pwrite_all(int fd, const void *data, size_t len, off_t off)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		if (off >= 0)
			off += n;
	}
	return 0;
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

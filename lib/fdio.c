/* Whole reads, writes and copies: see fdio.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fdio.h"
#include "vec.h"

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

/* One read(2) of *(int *)fd, again when a signal cut it short: the bytes
 * read, 0 at the end, or -errno. */
static ssize_t read_some(void *fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(*(const int *)fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int tr_copy_fd(int in, int out)
{
	char buf[64 * 1024];

	for (;;) {
		ssize_t r = read_some(&in, buf, sizeof(buf));
		int ret;

		if (r <= 0)
			return (int)r;
		ret = tr_write_all(out, buf, (size_t)r);
		if (ret < 0)
			return ret;
	}
}

int tr_read_to_end(ssize_t (*rd)(void *src, void *buf, size_t len), void *src, size_t first,
		   size_t max, char **out, size_t *len)
{
	size_t cap = 0, used = 0; /* cap counts the NUL's byte */
	char *buf = tr_vec_grow_max(NULL, &cap, 1, 1, first + 1, max + 1), *grown;
	int ret = -ENOMEM;

	*out = NULL;
	*len = 0;
	if (!buf)
		return -ENOMEM;
	while (used < max) {
		ssize_t n;

		if (used + 1 == cap) {
			grown = tr_vec_grow_max(buf, &cap, used + 2, 1, 0, max + 1);
			if (!grown)
				goto fail;
			buf = grown;
		}
		n = rd(src, buf + used, cap - 1 - used);
		if (n < 0) {
			ret = (int)n;
			goto fail;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buf[used] = '\0';
	*out = buf;
	*len = used;
	return 0;

fail:
	free(buf);
	return ret;
}

int tr_read_fd(int fd, size_t max, char **out, size_t *len)
{
	return tr_read_to_end(read_some, &fd, 4096, max, out, len);
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

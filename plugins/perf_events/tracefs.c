#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tracefs.h"

/* perf's reader mallocs each file whole; tracefs files are a few KiB. */
#define TRACEFS_FILE_MAX (64u << 20)

const char *tracefs_root(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/header_page", roots[i]);
		if (access(path, R_OK) == 0)
			return roots[i];
	}
	return NULL;
}

int tracefs_read(const char *path, char **out, size_t *out_len)
{
	size_t len = 0, cap = 8192;
	char *buf = malloc(cap);
	int fd, err = 0;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	for (;;) {
		ssize_t n;

		/* Room for the NUL as well. */
		if (len + 1 >= cap) {
			char *nb;

			if (cap >= TRACEFS_FILE_MAX) {
				err = -EFBIG;
				break;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

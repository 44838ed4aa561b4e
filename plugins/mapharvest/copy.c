/* Incremental copies.  Runtimes only ever append to perf-PID.map and
 * jit-PID.dump, so each pass copies what was appended since the last one:
 * polling a busy process costs an fstat, not a full copy, and the staged file
 * always holds a prefix of the original.  A half-written last line is
 * completed by the next pass. */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "copy.h"
#include "lib/fdio.h"

int64_t mh_copy_tail(int src, int dst, uint64_t *done, uint64_t limit)
{
	char buf[64 * 1024];
	int64_t total = 0;
	int ret;

	for (;;) {
		ssize_t n = pread(src, buf, sizeof(buf), (off_t)*done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return total;
		if (*done + (uint64_t)n > limit)
			return -EFBIG;
		ret = tr_pwrite_all(dst, buf, (size_t)n, (off_t)*done);
		if (ret < 0)
			return ret;
		*done += (uint64_t)n;
		total += n;
	}
}

int mh_perfmap_bare_hex(int fd, uint64_t *fixed, uint64_t end)
{
	char buf[65536];

	while (*fixed < end) {
		size_t want = end - *fixed < sizeof(buf) ? (size_t)(end - *fixed) : sizeof(buf);
		ssize_t n = pread(fd, buf, want, (off_t)*fixed);
		size_t line = 0, last_nl = 0;
		int any = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		/* *fixed is always a line start: the loop below only ever moves
		 * it past a newline. */
		for (size_t i = 0; i < (size_t)n; i++) {
			if (buf[i] != '\n')
				continue;
			if (i - line >= 2 && buf[line] == '0' && buf[line + 1] == 'x') {
				buf[line + 1] = '0';
				any = 1;
			}
			line = i + 1;
			last_nl = i + 1;
		}
		if (!last_nl) {
			/* A line longer than the buffer is not one a runtime
			 * writes: left as it is (whatever follows it is taken
			 * for a line start, at worst one "0x" too many). */
			if ((size_t)n == sizeof(buf)) {
				*fixed += (uint64_t)n;
				continue;
			}
			return 0; /* the last line is not complete yet */
		}
		if (any && pwrite(fd, buf, last_nl, (off_t)*fixed) != (ssize_t)last_nl)
			return -EIO;
		*fixed += last_nl;
	}
	return 0;
}

/* Incremental copies.  Runtimes only ever append to perf-PID.map and
 * jit-PID.dump, so each pass copies what was appended since the last one:
 * polling a busy process costs an fstat, not a full copy, and the staged file
 * always holds a prefix of the original.  A half-written last line is
 * completed by the next pass. */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "copy.h"

int64_t mh_copy_tail(int src, int dst, uint64_t *done, uint64_t limit)
{
	char buf[64 * 1024];
	int64_t total = 0;

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
		for (ssize_t off = 0; off < n;) {
			ssize_t w = pwrite(dst, buf + off, (size_t)(n - off), (off_t)(*done + (uint64_t)off));

			if (w < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			off += w;
		}
		*done += (uint64_t)n;
		total += n;
	}
}

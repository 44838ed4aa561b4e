/* Writeback state of a file's range (see writeback.h). */
#include "writeback.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The C library and the kernel headers this builds against may predate
 * cachestat (Linux 6.5, glibc has no wrapper); the number is the same
 * on every architecture (the generic syscall table's). */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

struct cachestat_range {
	uint64_t off;
	uint64_t len;
};

struct cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

int64_t tr_unwritten_pages(int fd, uint64_t off, uint64_t len)
{
	struct cachestat_range range = { off, len };
	struct cachestat cs;

	if (syscall(__NR_cachestat, fd, &range, &cs, 0) < 0)
		return -errno;
	return (int64_t)(cs.nr_dirty + cs.nr_writeback);
}

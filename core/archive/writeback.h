/* What the kernel has yet to write back of a file's range: a punched
 * hole frees a range's blocks only once it was written (ext4 and XFS
 * write it back first), and that writeback is the flusher's job unless
 * someone forces it (core/archive/stream.c). */
#ifndef TR_WRITEBACK_H
#define TR_WRITEBACK_H

#include <stdint.h>

/* Pages of [off, off + len) of open file `fd` that are dirty or under
 * writeback (cachestat(2), Linux 6.5), or -errno: -ENOSYS on an older
 * kernel, where only forcing the writeback tells. */
int64_t tr_unwritten_pages(int fd, uint64_t off, uint64_t len);

#endif

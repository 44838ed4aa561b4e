/* Copying a growing, append-only file (perf map, jitdump) into staging. */
#ifndef MH_COPY_H
#define MH_COPY_H

#include <stdint.h>
#include <sys/types.h>

/* Copies bytes [*done, EOF) of `src` to the same offsets of `dst`, advancing
 * *done.  Never lets *done pass `limit`: returns -EFBIG when the source has
 * grown beyond it.  Returns the number of bytes copied or a negative errno. */
int64_t mh_copy_tail(int src, int dst, uint64_t *done, uint64_t limit);

#endif

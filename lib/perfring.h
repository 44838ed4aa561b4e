/* One perf mmap ring buffer: the metadata page and 2^n data pages the
 * kernel writes records into, read without copying except for records
 * that wrap around the end. */
#ifndef TR_LIB_PERFRING_H
#define TR_LIB_PERFRING_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct tr_ring {
	int fd;
	void *base;     /* metadata page, then the data pages */
	size_t mmap_len;
	size_t data_len; /* a power of two */
	unsigned char wrap[65536]; /* a record's size is 16 bits */
};

typedef int (*tr_ring_record_fn)(void *arg, const struct perf_event_header *rec);

/* Maps `data_pages` (a power of two) data pages of the event `fd`. */
int tr_ring_map(struct tr_ring *r, int fd, size_t data_pages);
/* Hands every record written since the last call to `fn`, then gives the
 * space back to the kernel.  Returns the number of records or -errno (the
 * first error `fn` returned; records after it stay in the ring). */
long tr_ring_drain(struct tr_ring *r, tr_ring_record_fn fn, void *arg);
void tr_ring_unmap(struct tr_ring *r);

#endif

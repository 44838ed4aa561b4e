/* One perf mmap ring buffer: the metadata page and 2^n data pages the
 * kernel writes records into, read without copying except for records
 * that wrap around the end. */
#ifndef TR_PERF_RING_H
#define TR_PERF_RING_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct ring {
	int fd;
	void *base;     /* metadata page, then the data pages */
	size_t mmap_len;
	size_t data_len; /* a power of two */
	unsigned char wrap[65536]; /* a record's size is 16 bits */
};

typedef int (*ring_record_fn)(void *arg, const struct perf_event_header *rec);

/* Maps `data_pages` (a power of two) data pages of the event `fd`. */
int ring_map(struct ring *r, int fd, size_t data_pages);
/* Hands every record written since the last call to `fn`, then gives the
 * space back to the kernel.  Returns the number of records or -errno (the
 * first error `fn` returned; records after it stay in the ring). */
long ring_drain(struct ring *r, ring_record_fn fn, void *arg);
void ring_unmap(struct ring *r);

#endif

/* Reading a perf ring buffer: data_head is written by the kernel, data_tail
 * by us; acquire/release ordering as perf_event_open(2) prescribes. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfring.h"

int tr_ring_map(struct tr_ring *r, int fd, size_t data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	if (!data_pages || (data_pages & (data_pages - 1)))
		return -EINVAL;
	r->fd = fd;
	r->data_len = data_pages * page;
	r->mmap_len = r->data_len + page;
	p = mmap(NULL, r->mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	r->base = p;
	return 0;
}

long tr_ring_drain(struct tr_ring *r, tr_ring_record_fn fn, void *arg)
{
	struct perf_event_mmap_page *meta = r->base;
	const unsigned char *data;
	uint64_t head, tail;
	long n = 0;
	int ret = 0;

	if (!meta)
		return 0;
	data = (const unsigned char *)r->base + (r->mmap_len - r->data_len);
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	while (tail < head) {
		size_t off = (size_t)(tail & (r->data_len - 1));
		const struct perf_event_header *h = (const void *)(data + off);
		size_t size;

		/* The header itself never straddles the end: records are
		 * 8-byte aligned and the buffer is a multiple of 8. */
		size = h->size;
		if (size < sizeof(*h) || size > head - tail)
			break; /* corrupt: give up on this batch rather than loop */
		if (off + size > r->data_len) {
			size_t first = r->data_len - off;

			memcpy(r->wrap, data + off, first);
			memcpy(r->wrap + first, data, size - first);
			h = (const void *)r->wrap;
		}
		ret = fn(arg, h);
		if (ret < 0)
			break;
		tail += size;
		n++;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return ret < 0 ? ret : n;
}

void tr_ring_unmap(struct tr_ring *r)
{
	if (r->base)
		munmap(r->base, r->mmap_len);
	r->base = NULL;
}

/* A growable byte buffer for building file sections in memory (the
 * perf.data tail, the tracing data blob).  The first error sticks, so a
 * writer checks `err` once at the end. */
#ifndef TR_PERF_BYTEBUF_H
#define TR_PERF_BYTEBUF_H

#include <stddef.h>
#include <stdint.h>

struct bytebuf {
	uint8_t *p;
	size_t len, cap;
	int err; /* 0 or -ENOMEM */
};

/* Appends n bytes of data, or n zero bytes when data is NULL. */
void bytebuf_put(struct bytebuf *b, const void *data, size_t n);
void bytebuf_u32(struct bytebuf *b, uint32_t v);
void bytebuf_u64(struct bytebuf *b, uint64_t v);

#endif

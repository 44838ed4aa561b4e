/* NetTrace streams built byte by byte as the runtime writes them, for the
 * unit tests of their readers (lib/nettrace, the eventpipe backend's
 * counts): the stream header and Trace object, objects with their
 * alignment, the end tag, block headers, metadata records and blocks,
 * compressed event headers of the common kind, sequence points.  Other
 * events are written by the tests themselves, field by field. */
#ifndef TR_TESTS_NETTRACE_BUILD_H
#define TR_TESTS_NETTRACE_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	uint8_t b[8192];
	size_t n;
};

static inline void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > sizeof(b->b))
		abort();
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static inline void u8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static inline void u16(struct buf *b, uint16_t v)
{
	u8(b, (uint8_t)v);
	u8(b, (uint8_t)(v >> 8));
}

static inline void u32(struct buf *b, uint32_t v)
{
	u16(b, (uint16_t)v);
	u16(b, (uint16_t)(v >> 16));
}

static inline void u64(struct buf *b, uint64_t v)
{
	u32(b, (uint32_t)v);
	u32(b, (uint32_t)(v >> 32));
}

static inline void varint(struct buf *b, uint64_t v)
{
	do {
		u8(b, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
		v >>= 7;
	} while (v);
}

static inline void utf16z(struct buf *b, const char *ascii)
{
	while (*ascii)
		u16(b, (uint8_t)*ascii++);
	u16(b, 0);
}

static inline void type(struct buf *b, const char *name, uint32_t version, uint32_t min_reader)
{
	u8(b, 5);
	u8(b, 1);
	u32(b, version);
	u32(b, min_reader);
	u32(b, (uint32_t)strlen(name));
	put(b, name, strlen(name));
	u8(b, 6);
}

#define QPC_FREQ 1000000000ull
#define PID 4242

static inline void header(struct buf *b)
{
	static const uint16_t sync[8] = { 2026, 11, 6, 28, 10, 9, 22, 704 };

	b->n = 0;
	put(b, "Nettrace", 8);
	u32(b, 20);
	put(b, "!FastSerialization.1", 20);
	u8(b, 5);
	type(b, "Trace", 4, 4);
	for (int i = 0; i < 8; i++)
		u16(b, sync[i]);
	u64(b, 123456789); /* sync QPC */
	u64(b, QPC_FREQ);
	u32(b, 8);
	u32(b, PID);
	u32(b, 2);
	u32(b, 1000000);
	u8(b, 6);
}

/* An object: type, block size, padding to the stream's 4-byte alignment,
 * the content, EndObject. */
static inline void object(struct buf *b, const char *name, const struct buf *content)
{
	u8(b, 5);
	type(b, name, 2, 2);
	u32(b, (uint32_t)content->n);
	while (b->n % 4)
		u8(b, 0);
	put(b, content->b, content->n);
	u8(b, 6);
}

/* Where object() will put the content of a `name` object appended to b. */
static inline size_t content_start(const struct buf *b, const char *name)
{
	return (b->n + 1 + 15 + strlen(name) + 4 + 3) / 4 * 4;
}

static inline void block_header(struct buf *c, uint16_t flags)
{
	c->n = 0;
	u16(c, 20);
	u16(c, flags);
	u64(c, 0);
	u64(c, 0);
}

/* A compressed metadata record. */
static inline void metadata(struct buf *c, uint32_t id, const char *provider, uint32_t event_id,
		     const char *name, uint32_t version)
{
	struct buf p = { .n = 0 };

	u32(&p, id);
	utf16z(&p, provider);
	u32(&p, event_id);
	utf16z(&p, name);
	u64(&p, 0x8000);  /* keywords */
	u32(&p, version);
	u32(&p, 4);	  /* level */
	u32(&p, 0);	  /* no fields */
	u8(c, 0x80);	  /* payload size only */
	varint(c, 0);	  /* timestamp */
	varint(c, p.n);
	put(c, p.b, p.n);
}

/* A metadata block of one record, as metadata() writes it. */
static inline void metadata_block(struct buf *b, uint32_t id, const char *provider,
				  uint32_t event_id, const char *name, uint32_t version)
{
	struct buf c;

	block_header(&c, 1);
	metadata(&c, id, provider, event_id, name, version);
	object(b, "MetadataBlock", &c);
}

/* A compressed event header that gives the metadata id and the payload's
 * size (flags 0x81) besides the timestamp: all else as in the event
 * before. */
static inline void event_header(struct buf *c, uint32_t metadata_id, uint64_t timestamp,
				uint64_t payload_len)
{
	u8(c, 0x81);
	varint(c, metadata_id);
	varint(c, timestamp);
	varint(c, payload_len);
}

/* A sequence point at `timestamp`: thread tids[i] got to number seqs[i]. */
static inline void sequence_point(struct buf *b, uint64_t timestamp, size_t n,
				  const uint64_t *tids, const uint32_t *seqs)
{
	struct buf c = { .n = 0 };

	u64(&c, timestamp);
	u32(&c, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		u64(&c, tids[i]);
		u32(&c, seqs[i]);
	}
	object(b, "SPBlock", &c);
}

/* The stream's last object, then its end tag. */
static inline void last_object(struct buf *b, const char *name, const struct buf *content)
{
	object(b, name, content);
	u8(b, 1);
}

/* A whole stream of one object: the header, the object, the end tag. */
static inline void stream_of(struct buf *b, const char *name, const struct buf *content)
{
	header(b);
	last_object(b, name, content);
}

#endif

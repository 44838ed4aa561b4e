#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "nettrace.h"
#include "probe.h"
#include "utf.h"
#include "vec.h"

/* FastSerialization's tags. */
#define TAG_NULL 1
#define TAG_BEGIN_PRIVATE 5
#define TAG_END 6

/* An internal "the object goes on past what was fed": not an error. */
#define SHORT 2

#define TRACE_FIELDS_LEN (8 * 2 + 8 + 8 + 4 * 4)
/* An uncompressed event header after its size field. */
#define PLAIN_HEADER_LEN (4 + 4 + 8 + 8 + 4 + 4 + 8 + 16 + 16 + 4)
#define BLOCK_HEADER_MIN 20

enum kind { K_EVENT, K_METADATA, K_STACK, K_SP };

static const struct {
	const char *name;
	enum kind kind;
} object_types[] = {
	{ "EventBlock", K_EVENT },
	{ "MetadataBlock", K_METADATA },
	{ "StackBlock", K_STACK },
	{ "SPBlock", K_SP },
};

/* Bytes p[0..len) at stream offset base; `want` records how far a read
 * that ran out wanted to go, so that the caller knows what to feed. */
struct cur {
	const uint8_t *p;
	size_t len, pos, want;
	uint64_t base;
};

static int have(struct cur *c, size_t n)
{
	if (c->len - c->pos >= n)
		return 1;
	if (c->pos + n > c->want)
		c->want = c->pos + n;
	return 0;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint64_t at(const struct cur *c)
{
	return c->base + c->pos;
}

static int fail(struct tr_nettrace *nt, int err, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct tr_nettrace *nt, int err, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(nt->why, sizeof(nt->why), "byte %" PRIu64 ": ", off);

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(nt->why))
		vsnprintf(nt->why + n, sizeof(nt->why) - (size_t)n, fmt, ap);
	va_end(ap);
	nt->failed = err;
	return err;
}

void tr_nettrace_init(struct tr_nettrace *nt)
{
	memset(nt, 0, sizeof(*nt));
}

void tr_nettrace_free(struct tr_nettrace *nt)
{
	for (size_t i = 0; i < nt->n_kinds; i++) {
		free(nt->kinds[i].provider);
		free(nt->kinds[i].name);
	}
	free(nt->kinds);
	free(nt->slots);
	free(nt->threads);
	memset(nt, 0, sizeof(*nt));
}

/* ---- UTF-16 */

int tr_nettrace_utf16z(const uint8_t *p, size_t len, char **out, size_t *used)
{
	size_t units = 0, n = len / 2, o = 0;
	char *s;

	while (units < n && le16(p + 2 * units))
		units++;
	if (units == n)
		return -EBADMSG;
	/* 3 bytes of UTF-8 at most per unit: a pair's 4 bytes take 2 units. */
	s = malloc(units * 3 + 1);
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < units; i++) {
		uint32_t u = le16(p + 2 * i);

		if (u >= 0xd800 && u < 0xdc00 && i + 1 < units) {
			uint32_t lo = le16(p + 2 * (i + 1));

			if (lo >= 0xdc00 && lo < 0xe000) {
				o += tr_put_utf8(s + o, 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00));
				i++;
				continue;
			}
		}
		if (u >= 0xd800 && u < 0xe000)
			u = 0xfffd;
		o += tr_put_utf8(s + o, u);
	}
	s[o] = '\0';
	*out = s;
	*used = (units + 1) * 2;
	return 0;
}

/* ---- metadata: one kind of event per id */

static int kind_slot_used(const void *slot)
{
	return *(const uint32_t *)slot != 0;
}

static uint64_t kind_slot_hash(const void *slot, const void *ctx)
{
	const struct tr_nettrace *nt = ctx;

	return tr_u64_hash(nt->kinds[*(const uint32_t *)slot - 1].metadata_id);
}

/* Metadata ids to kinds: the slots hold index + 1. */
static const struct tr_probe_ops kind_ops = {
	.size = sizeof(uint32_t),
	.first = 64,
	.used = kind_slot_used,
	.hash = kind_slot_hash,
};

struct kind_key {
	const struct tr_nettrace *nt;
	uint32_t id;
};

static int kind_is(const void *slot, const void *key)
{
	const struct kind_key *k = key;

	return k->nt->kinds[*(const uint32_t *)slot - 1].metadata_id == k->id;
}

static struct tr_nettrace_kind *find_kind(const struct tr_nettrace *nt, uint32_t id)
{
	struct kind_key key = { nt, id };
	uint32_t s;

	if (!nt->n_slots)
		return NULL;
	s = nt->slots[tr_probe_find(nt->slots, nt->n_slots, &kind_ops, tr_u64_hash(id), kind_is,
				    &key)];
	return s ? &nt->kinds[s - 1] : NULL;
}

/* kinds[k], new, into the index (of the n_kinds before it). */
static int index_kind(struct tr_nettrace *nt, size_t k)
{
	uint32_t *grown = tr_probe_grow(nt->slots, &nt->n_slots, nt->n_kinds + 1, &kind_ops, nt);

	if (!grown)
		return -ENOMEM;
	nt->slots = grown;
	nt->slots[tr_probe_find(nt->slots, nt->n_slots, &kind_ops,
				tr_u64_hash(nt->kinds[k].metadata_id), NULL, NULL)] =
		(uint32_t)(k + 1);
	return 0;
}

/* A metadata record (the payload of a MetadataBlock's event): id,
 * provider, event id, name, keywords, version, level, then the fields'
 * descriptions, which this reader has no use for.  On an error, what
 * *rec holds is the caller's to free. */
static int parse_metadata(struct tr_nettrace *nt, const uint8_t *p, size_t len, uint64_t off,
			  struct tr_nettrace_kind *rec)
{
	size_t pos = 0, n;
	int err;

	if (len < 4)
		return fail(nt, -EBADMSG, off, "metadata record of %zu bytes, too short for its id", len);
	rec->metadata_id = le32(p);
	pos = 4;
	if (rec->metadata_id == 0)
		return fail(nt, -EBADMSG, off, "metadata record for id 0 (reserved for metadata)");
	err = tr_nettrace_utf16z(p + pos, len - pos, &rec->provider, &n);
	if (err == -ENOMEM)
		return fail(nt, err, off, "out of memory");
	if (err < 0)
		return fail(nt, err, off + pos,
			    "metadata record %" PRIu32 ": provider name without its NUL",
			    rec->metadata_id);
	pos += n;
	if (len - pos < 4)
		return fail(nt, -EBADMSG, off + pos,
			    "metadata record %" PRIu32 ": cut before its event id",
			    rec->metadata_id);
	rec->event_id = le32(p + pos);
	pos += 4;
	err = tr_nettrace_utf16z(p + pos, len - pos, &rec->name, &n);
	if (err < 0)
		return err == -ENOMEM ? fail(nt, err, off, "out of memory")
				      : fail(nt, err, off + pos,
					     "metadata record %" PRIu32 ": event "
					     "name without its NUL",
					     rec->metadata_id);
	pos += n;
	if (len - pos < 8 + 4 + 4)
		return fail(nt, -EBADMSG, off + pos,
			    "metadata record %" PRIu32 ": cut before its "
			    "keywords, version and level",
			    rec->metadata_id);
	rec->keywords = le64(p + pos);
	rec->version = le32(p + pos + 8);
	rec->level = le32(p + pos + 12);
	if (!rec->name[0]) {
		free(rec->name);
		rec->name = NULL;
	}
	return 0;
}

/* The kind *rec describes, taken over by the reader unless an error is
 * returned: within the limits, and in place of an earlier definition of
 * its id. */
static int store_kind(struct tr_nettrace *nt, struct tr_nettrace_kind *rec, uint64_t off)
{
	struct tr_nettrace_kind *k;
	size_t n, old;

	n = strlen(rec->provider) + (rec->name ? strlen(rec->name) : 0);
	k = find_kind(nt, rec->metadata_id);
	/* Defined again: the latest definition describes what follows, and
	 * the names it replaces are no longer held. */
	old = k ? strlen(k->provider) + (k->name ? strlen(k->name) : 0) : 0;
	if (!k && nt->n_kinds >= TR_NETTRACE_MAX_KINDS)
		return fail(nt, -E2BIG, off, "more than %u kinds of events defined",
			    TR_NETTRACE_MAX_KINDS);
	if (n > TR_NETTRACE_MAX_META_BYTES - (nt->meta_bytes - old))
		return fail(nt, -E2BIG, off, "the metadata's names take more than %u MiB",
			    TR_NETTRACE_MAX_META_BYTES >> 20);
	if (k) {
		free(k->provider);
		free(k->name);
		rec->count = k->count;
		*k = *rec;
	} else {
		struct tr_nettrace_kind *grown = tr_vec_grow(nt->kinds, &nt->kinds_cap, nt->n_kinds + 1,
							     sizeof(*grown), 64);

		if (!grown)
			return fail(nt, -ENOMEM, off, "out of memory");
		nt->kinds = grown;
		nt->kinds[nt->n_kinds] = *rec;
		if (index_kind(nt, nt->n_kinds) < 0)
			return fail(nt, -ENOMEM, off, "out of memory");
		nt->n_kinds++;
	}
	nt->meta_bytes = nt->meta_bytes - old + n;
	return 0;
}

/* A metadata record, p[0..len) at stream offset `off`: the kind of its id. */
static int add_metadata(struct tr_nettrace *nt, const uint8_t *p, size_t len, uint64_t off)
{
	struct tr_nettrace_kind rec = { 0 };
	int err;

	err = parse_metadata(nt, p, len, off, &rec);
	if (err == 0)
		err = store_kind(nt, &rec, off);
	if (err < 0) {
		free(rec.provider);
		free(rec.name);
	}
	return err;
}

/* ---- lost events: each thread's sequence numbers */

static int thread_used(const void *slot)
{
	return ((const struct tr_nettrace_thread *)slot)->used != 0;
}

static uint64_t thread_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return tr_u64_hash(((const struct tr_nettrace_thread *)slot)->id);
}

static int thread_is(const void *slot, const void *key)
{
	return ((const struct tr_nettrace_thread *)slot)->id == *(const uint64_t *)key;
}

static const struct tr_probe_ops thread_ops = {
	.size = sizeof(struct tr_nettrace_thread),
	.first = 64,
	.used = thread_used,
	.hash = thread_hash,
};

/* The thread `id`, added with `seq` as its last sequence number if new;
 * NULL when out of memory. */
static struct tr_nettrace_thread *thread_of(struct tr_nettrace *nt, uint64_t id, uint32_t seq)
{
	struct tr_nettrace_thread *t;

	if (nt->threads_cap) {
		t = &nt->threads[tr_probe_find(nt->threads, nt->threads_cap, &thread_ops,
					       tr_u64_hash(id), thread_is, &id)];
		if (t->used)
			return t;
	}
	if (nt->n_threads >= TR_NETTRACE_MAX_THREADS) {
		memset(nt->threads, 0, nt->threads_cap * sizeof(*nt->threads));
		nt->n_threads = 0;
	}
	t = tr_probe_grow(nt->threads, &nt->threads_cap, nt->n_threads + 1, &thread_ops, NULL);
	if (!t)
		return NULL;
	nt->threads = t;
	t = &nt->threads[tr_probe_find(nt->threads, nt->threads_cap, &thread_ops, tr_u64_hash(id),
				       NULL, NULL)];
	*t = (struct tr_nettrace_thread){ .id = id, .seq = seq, .used = 1 };
	nt->n_threads++;
	return t;
}

/* The thread's last number should be `expected` by now: the numbers
 * between were events dropped.  A last number of 0 is taken for a thread
 * not seen yet, as TraceEvent takes it. */
static void count_gap(struct tr_nettrace *nt, const struct tr_nettrace_thread *t,
		      uint32_t expected)
{
	uint32_t gap = expected - t->seq;

	if (t->seq != 0 && gap != 0 && gap <= INT32_MAX)
		nt->stats.lost += gap;
}

/* A SequencePointBlock: a timestamp, then each thread's id and the last
 * number it used, dropped events included. */
static int read_sequence_point(struct tr_nettrace *nt, struct cur *c)
{
	uint32_t n = c->len >= 12 ? le32(c->p + 8) : 0;

	if (c->len < 12 || n > (c->len - 12) / 12)
		return fail(nt, -EBADMSG, at(c), "a sequence point of %zu bytes, too short for %s",
			    c->len, c->len < 12 ? "its header" : "its threads");
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = c->p + 12 + 12 * (size_t)i;
		uint32_t seq = le32(e + 8);
		struct tr_nettrace_thread *t = thread_of(nt, le64(e), seq);

		if (!t)
			return fail(nt, -ENOMEM, at(c), "out of memory");
		count_gap(nt, t, seq);
		t->seq = seq;
	}
	return 0;
}

/* ---- event blobs */

/* A LEB128 number of at most `max` bytes (5 for 32 bits, 10 for 64). */
static int varint(struct cur *c, uint64_t *v, int max)
{
	uint64_t r = 0;

	for (int i = 0; i < max && c->pos < c->len; i++) {
		uint8_t b = c->p[c->pos++];

		r |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -EBADMSG;
}

static int deliver(struct tr_nettrace *nt, struct tr_nettrace_event *ev, tr_nettrace_fn cb, void *arg)
{
	struct tr_nettrace_kind *k = find_kind(nt, ev->metadata_id);

	ev->trace = &nt->trace;
	ev->known = k != NULL;
	ev->provider = k ? k->provider : "";
	ev->name = k ? k->name : NULL;
	ev->event_id = k ? k->event_id : 0;
	ev->version = k ? k->version : 0;
	ev->level = k ? k->level : 0;
	ev->keywords = k ? k->keywords : 0;
	if (k)
		k->count++;
	else
		nt->stats.unknown_metadata++;
	nt->stats.events++;
	return cb ? cb(arg, ev) : 0;
}

static int cut_header(struct tr_nettrace *nt, const struct tr_nettrace_event *ev, const char *what)
{
	return fail(nt, -EBADMSG, ev->offset, "%s: a malformed or cut event header", what);
}

/* A compressed header: its first byte says which fields follow, each
 * relative to the previous event's (left in *ev). */
static int read_compressed_event(struct tr_nettrace *nt, struct cur *c,
				 struct tr_nettrace_event *ev, const char *what)
{
	uint8_t f = c->p[c->pos++];
	uint64_t v;

	if (f & 1) {
		if (varint(c, &v, 5) < 0)
			return cut_header(nt, ev, what);
		ev->metadata_id = (uint32_t)v;
	}
	if (f & 2) {
		if (varint(c, &v, 5) < 0)
			return cut_header(nt, ev, what);
		ev->sequence += (uint32_t)v + 1;
		if (varint(c, &ev->capture_thread_id, 10) < 0 || varint(c, &v, 5) < 0)
			return cut_header(nt, ev, what);
		ev->processor = (uint32_t)v;
	} else if (ev->metadata_id) {
		ev->sequence++;
	}
	if ((f & 4) && varint(c, &ev->thread_id, 10) < 0)
		return cut_header(nt, ev, what);
	if (f & 8) {
		if (varint(c, &v, 5) < 0)
			return cut_header(nt, ev, what);
		ev->stack_id = (uint32_t)v;
	}
	if (varint(c, &v, 10) < 0)
		return cut_header(nt, ev, what);
	ev->timestamp = (int64_t)((uint64_t)ev->timestamp + v);
	if (f & 16) {
		if (!have(c, 16))
			return cut_header(nt, ev, what);
		ev->activity_id = c->p + c->pos;
		c->pos += 16;
	}
	if (f & 32) {
		if (!have(c, 16))
			return cut_header(nt, ev, what);
		ev->related_activity_id = c->p + c->pos;
		c->pos += 16;
	}
	ev->sorted = !!(f & 64);
	if (f & 128) {
		if (varint(c, &v, 5) < 0)
			return cut_header(nt, ev, what);
		ev->payload_len = (uint32_t)v;
	}
	if (!have(c, ev->payload_len))
		return fail(nt, -EBADMSG, ev->offset,
			    "%s: a payload of %zu bytes past the block's end (%zu bytes left)",
			    what, ev->payload_len, c->len - c->pos);
	ev->payload = c->p + c->pos;
	c->pos += ev->payload_len;
	return 0;
}

/* An uncompressed event: its size, then every field of its header. */
static int read_plain_event(struct tr_nettrace *nt, struct cur *c, struct tr_nettrace_event *ev,
			    const char *what)
{
	const uint8_t *h;
	size_t end;
	uint32_t size, mid;

	if (!have(c, 4))
		return cut_header(nt, ev, what);
	size = le32(c->p + c->pos);
	if (size < PLAIN_HEADER_LEN || !have(c, 4 + (size_t)size))
		return fail(nt, -EBADMSG, ev->offset,
			    "%s: an event of %" PRIu32 " bytes (%zu left "
			    "in the block, %d at least for a header)",
			    what, size, c->len - c->pos - 4, PLAIN_HEADER_LEN);
	end = c->pos + 4 + size;
	h = c->p + c->pos + 4;
	mid = le32(h);
	ev->metadata_id = mid & 0x7fffffff;
	ev->sorted = !!(mid & 0x80000000u);
	ev->sequence = le32(h + 4);
	ev->thread_id = le64(h + 8);
	ev->capture_thread_id = le64(h + 16);
	ev->processor = le32(h + 24);
	ev->stack_id = le32(h + 28);
	ev->timestamp = (int64_t)le64(h + 32);
	ev->activity_id = h + 40;
	ev->related_activity_id = h + 56;
	ev->payload_len = le32(h + 72);
	if (ev->payload_len > size - PLAIN_HEADER_LEN)
		return fail(nt, -EBADMSG, ev->offset,
			    "%s: a payload of %zu bytes in an event of %" PRIu32, what,
			    ev->payload_len, size);
	ev->payload = h + PLAIN_HEADER_LEN;
	/* Padded to the stream's 4-byte alignment. */
	end += (size_t)((4 - (c->base + end) % 4) % 4);
	if (end > c->len)
		return fail(nt, -EBADMSG, ev->offset, "%s: an event's padding past the block's end",
			    what);
	c->pos = end;
	return 0;
}

/* An event of an EventBlock: its thread's sequence numbers checked for
 * gaps, then the event given to the callback. */
static int take_event(struct tr_nettrace *nt, struct tr_nettrace_event *ev,
		      struct tr_nettrace_thread **thread, tr_nettrace_fn cb, void *arg)
{
	/* The runtime writes a thread's events in a run that starts with a
	 * sorted one: only there does the capture thread change, as
	 * TraceEvent reads it. */
	if (!*thread || ev->sorted) {
		*thread = thread_of(nt, ev->capture_thread_id, ev->sequence - 1);
		if (!*thread)
			return fail(nt, -ENOMEM, ev->offset, "out of memory");
	}
	count_gap(nt, *thread, ev->sequence - 1);
	(*thread)->seq = ev->sequence;
	return deliver(nt, ev, cb, arg);
}

/* The events (or metadata records) of a whole EventBlock or MetadataBlock. */
static int read_events(struct tr_nettrace *nt, struct cur *c, enum kind kind, tr_nettrace_fn cb,
		       void *arg)
{
	static const uint8_t zero_guid[16];
	struct tr_nettrace_event ev;
	struct tr_nettrace_thread *thread = NULL;
	const char *what = kind == K_METADATA ? "metadata block" : "event block";
	uint16_t hsize, flags;
	int ret;

	if (!have(c, BLOCK_HEADER_MIN))
		return fail(nt, -EBADMSG, at(c), "%s of %zu bytes, too short for its header", what,
			    c->len);
	hsize = le16(c->p);
	flags = le16(c->p + 2);
	if (hsize < BLOCK_HEADER_MIN || hsize > c->len)
		return fail(nt, -EBADMSG, at(c), "%s header of %u bytes in a block of %zu", what,
			    hsize, c->len);
	c->pos = hsize;
	/* Compressed headers are relative to the previous event of the same
	 * block; the first is relative to all zeros. */
	memset(&ev, 0, sizeof(ev));
	ev.activity_id = ev.related_activity_id = zero_guid;
	while (c->pos < c->len) {
		ev.offset = at(c);
		if (flags & 1)
			ret = read_compressed_event(nt, c, &ev, what);
		else
			ret = read_plain_event(nt, c, &ev, what);
		if (ret)
			return ret;
		if (kind == K_METADATA)
			ret = add_metadata(nt, ev.payload, ev.payload_len,
					   c->base + (uint64_t)(ev.payload - c->p));
		else
			ret = take_event(nt, &ev, &thread, cb, arg);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- objects */

/* A FastSerialization type: BeginPrivateObject, NullReference, version,
 * minimum reader version, name (length, bytes), EndObject.  0, SHORT, or
 * an error. */
static int read_type(struct tr_nettrace *nt, struct cur *c, uint32_t *version, uint32_t *min_reader,
		     char *name, size_t name_size)
{
	uint32_t len;

	if (!have(c, 2 + 12))
		return SHORT;
	if (c->p[c->pos] != TAG_BEGIN_PRIVATE || c->p[c->pos + 1] != TAG_NULL)
		return fail(nt, -EBADMSG, at(c), "an object's type does not start with tags 5, 1 "
			    "(found %u, %u)", c->p[c->pos], c->p[c->pos + 1]);
	*version = le32(c->p + c->pos + 2);
	*min_reader = le32(c->p + c->pos + 6);
	len = le32(c->p + c->pos + 10);
	if (len == 0 || len >= name_size)
		return fail(nt, -EBADMSG, at(c) + 10, "an object type's name of %" PRIu32 " bytes "
			    "(the format's are at most %zu)", len, name_size - 1);
	c->pos += 14;
	if (!have(c, (size_t)len + 1))
		return SHORT;
	for (uint32_t i = 0; i < len; i++) {
		uint8_t ch = c->p[c->pos + i];

		/* Said in messages: nothing of the stream's reaches a terminal raw. */
		name[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	name[len] = '\0';
	c->pos += len;
	if (c->p[c->pos] != TAG_END)
		return fail(nt, -EBADMSG, at(c), "type \"%s\" not closed by tag 6 (found %u)", name,
			    c->p[c->pos]);
	c->pos++;
	return 0;
}

/* Magic, stream header, the Trace object.  0, SHORT, or an error. */
static int read_header(struct tr_nettrace *nt, struct cur *c)
{
	static const char fs[] = "!FastSerialization.1";
	char name[32];
	uint32_t version, min_reader;
	const uint8_t *f;
	int ret;

	if (!have(c, 8))
		return SHORT;
	if (memcmp(c->p, "Nettrace", 8) != 0)
		return fail(nt, -EBADMSG, 0, "not a NetTrace stream (no \"Nettrace\" magic)");
	if (!have(c, 12))
		return SHORT;
	if (le32(c->p + 8) == 0)
		return fail(nt, -EPROTONOSUPPORT, 8, "NetTrace format V6 or later, which this "
			    "reader does not read (V4 and V5 only)");
	if (le32(c->p + 8) != sizeof(fs) - 1)
		return fail(nt, -EBADMSG, 8, "no \"%s\" stream header", fs);
	if (!have(c, 12 + sizeof(fs) - 1 + 1))
		return SHORT;
	if (memcmp(c->p + 12, fs, sizeof(fs) - 1) != 0)
		return fail(nt, -EBADMSG, 12, "no \"%s\" stream header", fs);
	c->pos = 12 + sizeof(fs) - 1;
	if (c->p[c->pos] != TAG_BEGIN_PRIVATE)
		return fail(nt, -EBADMSG, at(c), "no Trace object after the stream header");
	c->pos++;
	ret = read_type(nt, c, &version, &min_reader, name, sizeof(name));
	if (ret)
		return ret;
	if (strcmp(name, "Trace") != 0)
		return fail(nt, -EBADMSG, at(c), "the first object is a \"%s\", not the Trace", name);
	if (version < 4 || min_reader > 4)
		return fail(nt, -EPROTONOSUPPORT, at(c), "a Trace object of version %" PRIu32
			    " (for readers of version %" PRIu32 " and later): this reader reads "
			    "version 4", version, min_reader);
	if (!have(c, TRACE_FIELDS_LEN + 1))
		return SHORT;
	f = c->p + c->pos;
	for (int i = 0; i < 8; i++)
		nt->trace.sync_time[i] = le16(f + 2 * i);
	nt->trace.sync_qpc = (int64_t)le64(f + 16);
	nt->trace.qpc_freq = (int64_t)le64(f + 24);
	nt->trace.pointer_size = le32(f + 32);
	nt->trace.pid = le32(f + 36);
	nt->trace.ncpus = le32(f + 40);
	nt->trace.sampling_rate = le32(f + 44);
	nt->trace.version = version;
	c->pos += TRACE_FIELDS_LEN;
	if (c->p[c->pos] != TAG_END)
		return fail(nt, -EBADMSG, at(c), "the Trace object is not closed by tag 6 (found %u)",
			    c->p[c->pos]);
	c->pos++;
	nt->have_trace = 1;
	return 0;
}

/* The content of a block, by its kind: 0, the callback's value, or an
 * error. */
static int read_block(struct tr_nettrace *nt, enum kind kind, struct cur *block, tr_nettrace_fn cb,
		      void *arg)
{
	switch (kind) {
	case K_EVENT: nt->stats.event_blocks++; return read_events(nt, block, K_EVENT, cb, arg);
	case K_METADATA:
		nt->stats.metadata_blocks++;
		return read_events(nt, block, K_METADATA, cb, arg);
	case K_STACK:
		/* Stacks are not resolved: stepped over whole. */
		nt->stats.stack_blocks++;
		return 0;
	case K_SP: nt->stats.sequence_points++; return read_sequence_point(nt, block);
	}
	return 0;
}

/* One object after the Trace: 0 (or the callback's value), SHORT, or an
 * error; 1 for the end tag. */
static int read_object(struct tr_nettrace *nt, struct cur *c, tr_nettrace_fn cb, void *arg)
{
	char name[32];
	uint32_t version, min_reader, size;
	size_t pad, type = 0;
	struct cur block;
	int ret;

	if (!have(c, 1))
		return SHORT;
	if (c->p[c->pos] == TAG_NULL) {
		c->pos++;
		return 1;
	}
	if (c->p[c->pos] != TAG_BEGIN_PRIVATE)
		return fail(nt, -EBADMSG, at(c), "tag %u where an object or the end of the stream "
			    "was expected", c->p[c->pos]);
	c->pos++;
	ret = read_type(nt, c, &version, &min_reader, name, sizeof(name));
	if (ret)
		return ret;
	while (type < sizeof(object_types) / sizeof(object_types[0]) &&
	       strcmp(object_types[type].name, name) != 0)
		type++;
	if (type == sizeof(object_types) / sizeof(object_types[0]))
		return fail(nt, -EBADMSG, at(c), "an object of unknown type \"%s\"", name);
	if (min_reader > 2)
		return fail(nt, -EPROTONOSUPPORT, at(c), "a %s of version %" PRIu32 " (for readers "
			    "of version %" PRIu32 " and later): this reader reads version 2", name,
			    version, min_reader);
	if (!have(c, 4))
		return SHORT;
	size = le32(c->p + c->pos);
	if (size > TR_NETTRACE_MAX_BLOCK)
		return fail(nt, -E2BIG, at(c), "a %s of %" PRIu32 " bytes (this reader takes %u MiB "
			    "at most)", name, size, TR_NETTRACE_MAX_BLOCK >> 20);
	c->pos += 4;
	/* The block's content starts at a 4-byte offset of the stream. */
	pad = (size_t)((4 - at(c) % 4) % 4);
	if (!have(c, pad + size + 1))
		return SHORT;
	c->pos += pad;
	block = (struct cur){ .p = c->p + c->pos, .len = size, .base = at(c) };
	ret = read_block(nt, object_types[type].kind, &block, cb, arg);
	if (ret)
		return ret;
	c->pos += size;
	if (c->p[c->pos] != TAG_END)
		return fail(nt, -EBADMSG, at(c), "the %s is not closed by tag 6 (found %u)", name,
			    c->p[c->pos]);
	c->pos++;
	return 0;
}

int tr_nettrace_feed(struct tr_nettrace *nt, const void *data, size_t len, size_t *used,
		     tr_nettrace_fn cb, void *arg)
{
	struct cur c = { .p = data, .len = len, .base = nt->offset };
	size_t done = 0;
	int ret = 0;

	*used = 0;
	nt->need = 0;
	if (nt->failed)
		return nt->failed;
	if (nt->ended)
		return 1;
	if (!nt->have_trace) {
		ret = read_header(nt, &c);
		if (ret == 0)
			done = c.pos;
	}
	while (ret == 0) {
		ret = read_object(nt, &c, cb, arg);
		/* Only whole objects are consumed: a callback's stop too
		 * leaves the reader after the block that holds its event. */
		if (ret != SHORT && ret >= 0)
			done = c.pos;
	}
	if (ret == SHORT) {
		nt->need = c.want - done;
		ret = 0;
	} else if (ret == 1) {
		nt->ended = 1;
	}
	*used = done;
	nt->offset += done;
	/* A callback's stop ends the read too: fed again, the block would
	 * give its first events twice. */
	if (ret < 0 && !nt->failed)
		nt->failed = ret;
	return ret;
}

int tr_nettrace_finish(struct tr_nettrace *nt)
{
	if (nt->failed)
		return nt->failed;
	if (nt->ended)
		return 0;
	return fail(nt, -ENODATA, nt->offset, "the stream is cut short %s",
		    nt->have_trace ? "(no end tag: the file was cut, or its process died)"
				   : "before the end of its Trace object");
}

int tr_nettrace_read(struct tr_nettrace *nt, const void *buf, size_t len, tr_nettrace_fn cb,
		     void *arg)
{
	size_t used;
	int ret;

	tr_nettrace_init(nt);
	ret = tr_nettrace_feed(nt, buf, len, &used, cb, arg);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return tr_nettrace_finish(nt);
	if (used != len)
		return fail(nt, -EBADMSG, nt->offset, "%zu bytes after the end of the stream",
			    len - used);
	return 0;
}

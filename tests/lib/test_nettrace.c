/* The NetTrace reader over streams built here byte by byte as the runtime
 * writes them: the stream header and Trace object, a metadata block, event
 * blocks with compressed headers (each optional field present, then carried
 * over from the event before), an uncompressed block, a stack block stepped
 * over, sequence points; events the runtime dropped, from the gaps in each
 * thread's sequence numbers.  Then what a traced process could send instead:
 * the same stream cut at every byte, corrupted at every byte, fed in pieces
 * of every size, and a list of lies (sizes, versions, tags, varints). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/nettrace.h"
#include "../testing.h"
#include "nettrace-build.h"

/* ---- building streams: nettrace-build.h, and */

static const uint8_t guid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* The stream the tests start from: two kinds, five compressed events in
 * two blocks, a stack block and a sequence point between, one uncompressed
 * event, the end tag. */
static void valid(struct buf *b)
{
	struct buf c;

	header(b);
	block_header(&c, 1);
	metadata(&c, 1, "Microsoft-Windows-DotNETRuntime", 1, "", 2);
	metadata(&c, 2, "My-Source", 7, "Hello", 0);
	object(b, "MetadataBlock", &c);

	block_header(&c, 1);
	/* Every field: metadata 1, sequence, capture thread 77 on CPU 1,
	 * thread 78, stack 3, timestamp 1000, both activity ids, payload 8. */
	u8(&c, 0xff);
	varint(&c, 1);
	varint(&c, 0);
	varint(&c, 77);
	varint(&c, 1);
	varint(&c, 78);
	varint(&c, 3);
	varint(&c, 1000);
	put(&c, guid, 16);
	put(&c, guid, 16);
	varint(&c, 8);
	u32(&c, 5);
	u32(&c, 2); /* a GCStart: count 5, depth 2 */
	/* Nothing but the timestamp: all else as before (payload too). */
	u8(&c, 0);
	varint(&c, 500);
	u32(&c, 6);
	u32(&c, 0);
	/* Metadata 2, a payload of 3. */
	event_header(&c, 2, 500, 3);
	put(&c, "abc", 3);
	object(b, "EventBlock", &c);

	c.n = 0;
	u32(&c, 1); /* first id */
	u32(&c, 1); /* count */
	u32(&c, 8);
	u64(&c, 0xdeadbeef);
	object(b, "StackBlock", &c);
	sequence_point(b, 2000, 0, NULL, NULL);

	/* A new block: relative to zeros again. */
	block_header(&c, 1);
	u8(&c, 0x85);
	varint(&c, 1);
	varint(&c, 99);
	varint(&c, 3000);
	varint(&c, 8);
	u32(&c, 7);
	u32(&c, 1);
	object(b, "EventBlock", &c);

	/* Uncompressed: sizes, ids and the padding spelt out. */
	block_header(&c, 0);
	u32(&c, 76 + 2);
	u32(&c, 2 | 0x80000000u);
	u32(&c, 9);	 /* sequence */
	u64(&c, 100);	 /* thread */
	u64(&c, 101);	 /* capture thread */
	u32(&c, 0);	 /* processor */
	u32(&c, 0);	 /* stack */
	u64(&c, 4000);	 /* timestamp */
	put(&c, guid, 16);
	put(&c, guid, 16);
	u32(&c, 2);
	put(&c, "hi", 2);
	while ((content_start(b, "EventBlock") + c.n) % 4)
		u8(&c, 0);
	last_object(b, "EventBlock", &c);
}

/* ---- reading them */

struct seen {
	int n;
	struct tr_nettrace_event ev[16];
	char provider[16][64], name[16][16];
	uint8_t payload[16][16];
	uint64_t sum; /* over every field, to compare two reads */
	int stop_at;
};

static int collect(void *arg, const struct tr_nettrace_event *e)
{
	struct seen *s = arg;

	s->sum = s->sum * 31 + e->metadata_id + e->event_id * 7 + (uint64_t)e->timestamp +
		 e->thread_id * 3 + e->capture_thread_id + e->sequence + e->payload_len + e->stack_id;
	if (s->n < 16) {
		s->ev[s->n] = *e;
		snprintf(s->provider[s->n], sizeof(s->provider[0]), "%s", e->provider);
		snprintf(s->name[s->n], sizeof(s->name[0]), "%s", e->name ? e->name : "(null)");
		memcpy(s->payload[s->n], e->payload, e->payload_len < 16 ? e->payload_len : 16);
	}
	s->n++;
	return s->stop_at && s->n == s->stop_at ? -ECANCELED : 0;
}

DEF_TEST(reads_the_trace_object_and_every_event)
{
	struct buf b;
	struct tr_nettrace nt;
	struct seen s = { 0 };

	valid(&b);
	EXPECT_EQ_INT(0, tr_nettrace_read(&nt, b.b, b.n, collect, &s));
	EXPECT_EQ_STR("", nt.why);
	EXPECT_EQ_INT(4, nt.trace.version);
	EXPECT_EQ_INT(PID, nt.trace.pid);
	EXPECT_EQ_INT(QPC_FREQ, nt.trace.qpc_freq);
	EXPECT_EQ_INT(123456789, nt.trace.sync_qpc);
	EXPECT_EQ_INT(2026, nt.trace.sync_time[0]);
	EXPECT_EQ_INT(704, nt.trace.sync_time[7]);
	EXPECT_EQ_INT(8, nt.trace.pointer_size);
	EXPECT_EQ_INT(5, s.n);
	EXPECT_EQ_INT(5, nt.stats.events);
	EXPECT_EQ_INT(0, nt.stats.unknown_metadata);
	EXPECT_EQ_INT(3, nt.stats.event_blocks);
	EXPECT_EQ_INT(1, nt.stats.metadata_blocks);
	EXPECT_EQ_INT(1, nt.stats.stack_blocks);
	EXPECT_EQ_INT(1, nt.stats.sequence_points);

	/* Every field given. */
	EXPECT_EQ_STR("Microsoft-Windows-DotNETRuntime", s.provider[0]);
	EXPECT_EQ_STR("(null)", s.name[0]);
	EXPECT_EQ_INT(1, s.ev[0].event_id);
	EXPECT_EQ_INT(2, s.ev[0].version);
	EXPECT_EQ_INT(4, s.ev[0].level);
	EXPECT_EQ_INT(0x8000, s.ev[0].keywords);
	EXPECT_EQ_INT(1, s.ev[0].sequence);
	EXPECT_EQ_INT(77, s.ev[0].capture_thread_id);
	EXPECT_EQ_INT(1, s.ev[0].processor);
	EXPECT_EQ_INT(78, s.ev[0].thread_id);
	EXPECT_EQ_INT(3, s.ev[0].stack_id);
	EXPECT_EQ_INT(1000, s.ev[0].timestamp);
	EXPECT_EQ_INT(1, s.ev[0].sorted);
	EXPECT_EQ_INT(8, s.ev[0].payload_len);
	EXPECT_EQ_INT(5, s.payload[0][0]);
	EXPECT_EQ_INT(2, s.payload[0][4]);
	EXPECT_TRUE(s.ev[0].trace && s.ev[0].trace->pid == PID);
	/* Carried over, the timestamp a delta, the sequence one more. */
	EXPECT_EQ_INT(1500, s.ev[1].timestamp);
	EXPECT_EQ_INT(78, s.ev[1].thread_id);
	EXPECT_EQ_INT(2, s.ev[1].sequence);
	EXPECT_EQ_INT(8, s.ev[1].payload_len);
	EXPECT_EQ_INT(6, s.payload[1][0]);
	EXPECT_EQ_INT(0, s.ev[1].sorted);
	/* Another kind, with a name. */
	EXPECT_EQ_STR("My-Source", s.provider[2]);
	EXPECT_EQ_STR("Hello", s.name[2]);
	EXPECT_EQ_INT(7, s.ev[2].event_id);
	EXPECT_EQ_INT(3, s.ev[2].payload_len);
	EXPECT_TRUE(memcmp(s.payload[2], "abc", 3) == 0);
	EXPECT_EQ_INT(2000, s.ev[2].timestamp);
	/* A new block starts from zeros. */
	EXPECT_EQ_INT(3000, s.ev[3].timestamp);
	EXPECT_EQ_INT(99, s.ev[3].thread_id);
	EXPECT_EQ_INT(0, s.ev[3].stack_id);
	EXPECT_EQ_INT(1, s.ev[3].sequence);
	/* Uncompressed. */
	EXPECT_EQ_STR("My-Source", s.provider[4]);
	EXPECT_EQ_INT(9, s.ev[4].sequence);
	EXPECT_EQ_INT(100, s.ev[4].thread_id);
	EXPECT_EQ_INT(101, s.ev[4].capture_thread_id);
	EXPECT_EQ_INT(4000, s.ev[4].timestamp);
	EXPECT_EQ_INT(1, s.ev[4].sorted);
	EXPECT_EQ_INT(2, s.ev[4].payload_len);
	EXPECT_TRUE(memcmp(s.payload[4], "hi", 2) == 0);
	EXPECT_TRUE(memcmp(s.ev[4].activity_id, guid, 16) == 0);

	/* Counted by kind. */
	EXPECT_EQ_INT(2, nt.n_kinds);
	EXPECT_EQ_INT(3, nt.kinds[0].count);
	EXPECT_EQ_INT(2, nt.kinds[1].count);
	EXPECT_EQ_STR("Hello", nt.kinds[1].name);
	EXPECT_TRUE(nt.kinds[0].name == NULL);
	tr_nettrace_free(&nt);
}

DEF_TEST(every_cut_is_said_with_where)
{
	struct buf b;
	struct tr_nettrace nt;

	valid(&b);
	for (size_t cut = 0; cut < b.n; cut++) {
		struct seen s = { 0 };
		int ret = tr_nettrace_read(&nt, b.b, cut, collect, &s);

		if (ret != -ENODATA || !strstr(nt.why, "byte ")) {
			TEST_FAIL("cut at %zu: %d, \"%s\"", cut, ret, nt.why);
			tr_nettrace_free(&nt);
			return;
		}
		EXPECT_TRUE(s.n <= 5);
		tr_nettrace_free(&nt);
	}
	EXPECT_EQ_INT(-ENODATA, tr_nettrace_read(&nt, b.b, b.n - 1, NULL, NULL));
	{
		/* Cut where the end tag was: every object before it was read. */
		char where[64];

		snprintf(where, sizeof(where), "byte %zu: the stream is cut short (no end tag", b.n - 1);
		EXPECT_CONTAINS(where, nt.why);
	}
	tr_nettrace_free(&nt);
}

DEF_TEST(pieces_of_every_size_give_the_same_events)
{
	struct buf b;
	struct tr_nettrace nt;
	struct seen whole = { 0 };

	valid(&b);
	EXPECT_EQ_INT(0, tr_nettrace_read(&nt, b.b, b.n, collect, &whole));
	tr_nettrace_free(&nt);
	for (size_t step = 1; step <= b.n; step++) {
		struct seen s = { 0 };
		size_t off = 0, avail = 0, used;
		int ret;

		tr_nettrace_init(&nt);
		for (;;) {
			/* As a caller with a buffer would: what is left, and more. */
			avail = off + avail + step > b.n ? b.n - off : avail + step;
			ret = tr_nettrace_feed(&nt, b.b + off, avail, &used, collect, &s);
			off += used;
			avail -= used;
			if (ret || (off + avail == b.n && !used))
				break;
		}
		if (ret != 1 || s.n != 5 || s.sum != whole.sum || off != b.n) {
			TEST_FAIL("pieces of %zu: %d, %d events, \"%s\"", step, ret, s.n, nt.why);
			tr_nettrace_free(&nt);
			return;
		}
		EXPECT_EQ_INT(0, tr_nettrace_finish(&nt));
		tr_nettrace_free(&nt);
	}
	/* What a feed that wants more says it needs is enough. */
	tr_nettrace_init(&nt);
	{
		size_t used, n = 10;

		while (tr_nettrace_feed(&nt, b.b, n, &used, NULL, NULL) == 0 && !used) {
			EXPECT_TRUE(nt.need > n);
			n = nt.need;
		}
		EXPECT_TRUE(used > 0 && nt.have_trace);
	}
	tr_nettrace_free(&nt);
}

DEF_TEST(every_corrupt_byte_is_read_or_refused_without_harm)
{
	static const uint8_t values[] = { 0, 1, 5, 6, 0x7f, 0x80, 0xff };
	struct buf b, bad;
	struct tr_nettrace nt;

	valid(&b);
	for (size_t i = 0; i < b.n; i++) {
		for (size_t v = 0; v < sizeof(values) + 1; v++) {
			struct seen s = { 0 };
			int ret;

			bad = b;
			bad.b[i] = v < sizeof(values) ? values[v] : (uint8_t)(b.b[i] ^ 0x40);
			ret = tr_nettrace_read(&nt, bad.b, bad.n, collect, &s);
			if (ret != 0 && (ret > 0 || !nt.why[0]))
				TEST_FAIL("byte %zu = %u: %d without a reason", i, bad.b[i], ret);
			tr_nettrace_free(&nt);
		}
	}
}

DEF_TEST(lies_are_named)
{
	struct buf b, c;
	struct tr_nettrace nt;

	valid(&b);
	memcpy(b.b, "NETTRACE", 8);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("not a NetTrace stream", nt.why);
	tr_nettrace_free(&nt);

	/* V6 starts its header with a reserved 0. */
	valid(&b);
	memset(b.b + 8, 0, 4);
	EXPECT_EQ_INT(-EPROTONOSUPPORT, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("V6", nt.why);
	tr_nettrace_free(&nt);

	/* A Trace for newer readers only. */
	valid(&b);
	b.b[8 + 24 + 3 + 4] = 9;
	EXPECT_EQ_INT(-EPROTONOSUPPORT, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("version 9", nt.why);
	tr_nettrace_free(&nt);

	/* A block of 1 GB: refused before anything waits for it. */
	header(&b);
	u8(&b, 5);
	type(&b, "EventBlock", 2, 2);
	u32(&b, 1u << 30);
	EXPECT_EQ_INT(-E2BIG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("EventBlock of 1073741824 bytes", nt.why);
	tr_nettrace_free(&nt);

	/* An object no reader knows cannot be stepped over. */
	header(&b);
	c.n = 0;
	u32(&c, 0);
	object(&b, "Blob", &c);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("unknown type \"Blob\"", nt.why);
	tr_nettrace_free(&nt);

	/* A type name full of escapes is not repeated as it is. */
	header(&b);
	object(&b, "\033[2J", &c);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("\"?[2J\"", nt.why);
	tr_nettrace_free(&nt);

	/* A payload past its block's end. */
	block_header(&c, 1);
	u8(&c, 0x80);
	varint(&c, 0);
	varint(&c, 1000);
	stream_of(&b, "EventBlock", &c);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("payload of 1000 bytes past the block's end", nt.why);
	tr_nettrace_free(&nt);

	/* A varint that never ends. */
	block_header(&c, 1);
	u8(&c, 0x01);
	for (int i = 0; i < 12; i++)
		u8(&c, 0xff);
	u8(&c, 0);
	stream_of(&b, "EventBlock", &c);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("malformed or cut event header", nt.why);
	tr_nettrace_free(&nt);

	/* A block header larger than its block. */
	block_header(&c, 1);
	c.b[0] = 200;
	stream_of(&b, "MetadataBlock", &c);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("header of 200 bytes in a block of 20", nt.why);
	tr_nettrace_free(&nt);

	/* Metadata for id 0, and a provider name without its NUL. */
	header(&b);
	metadata_block(&b, 0, "P", 1, "", 0);
	u8(&b, 1);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("id 0", nt.why);
	tr_nettrace_free(&nt);
	block_header(&c, 1);
	u8(&c, 0x80);
	varint(&c, 0);
	varint(&c, 8);
	u32(&c, 3);
	u16(&c, 'P');
	u16(&c, 'Q');
	stream_of(&b, "MetadataBlock", &c);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("provider name without its NUL", nt.why);
	tr_nettrace_free(&nt);

	/* An uncompressed event that claims more than its block. */
	block_header(&c, 0);
	u32(&c, 5000);
	stream_of(&b, "EventBlock", &c);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("an event of 5000 bytes", nt.why);
	tr_nettrace_free(&nt);

	/* A stray tag between objects; bytes after the end. */
	header(&b);
	u8(&b, 9);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("tag 9 where an object", nt.why);
	tr_nettrace_free(&nt);
	valid(&b);
	u8(&b, 0);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("1 bytes after the end", nt.why);
	tr_nettrace_free(&nt);
}

DEF_TEST(events_of_unknown_kinds_are_counted_and_a_callback_stops_the_read)
{
	struct buf b, c;
	struct tr_nettrace nt;
	struct seen s = { 0 };

	block_header(&c, 1);
	event_header(&c, 42, 1, 0);
	stream_of(&b, "EventBlock", &c);
	EXPECT_EQ_INT(0, tr_nettrace_read(&nt, b.b, b.n, collect, &s));
	EXPECT_EQ_INT(1, s.n);
	EXPECT_EQ_INT(0, s.ev[0].known);
	EXPECT_EQ_STR("", s.provider[0]);
	EXPECT_EQ_INT(42, s.ev[0].metadata_id);
	EXPECT_EQ_INT(1, nt.stats.unknown_metadata);
	tr_nettrace_free(&nt);

	valid(&b);
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	EXPECT_EQ_INT(-ECANCELED, tr_nettrace_read(&nt, b.b, b.n, collect, &s));
	EXPECT_EQ_INT(2, s.n);
	/* Stopped is stopped: no event given twice. */
	{
		size_t used;

		EXPECT_EQ_INT(-ECANCELED, tr_nettrace_feed(&nt, b.b, b.n, &used, collect, &s));
		EXPECT_EQ_INT(0, used);
		EXPECT_EQ_INT(2, s.n);
	}
	tr_nettrace_free(&nt);
}

DEF_TEST(a_kind_defined_again_describes_what_follows)
{
	struct buf b, c;
	struct tr_nettrace nt;
	struct seen s = { 0 };

	header(&b);
	for (int round = 0; round < 2; round++) {
		metadata_block(&b, 5, round ? "Second" : "First", 10 + (uint32_t)round, "", 0);
		block_header(&c, 1);
		event_header(&c, 5, 1, 0);
		object(&b, "EventBlock", &c);
	}
	u8(&b, 1);
	EXPECT_EQ_INT(0, tr_nettrace_read(&nt, b.b, b.n, collect, &s));
	EXPECT_EQ_INT(2, s.n);
	EXPECT_EQ_STR("First", s.provider[0]);
	EXPECT_EQ_INT(10, s.ev[0].event_id);
	EXPECT_EQ_STR("Second", s.provider[1]);
	EXPECT_EQ_INT(11, s.ev[1].event_id);
	EXPECT_EQ_INT(1, nt.n_kinds);
	EXPECT_EQ_INT(2, nt.kinds[0].count);
	tr_nettrace_free(&nt);
}

/* One compressed event of metadata 1 on capture thread `tid`, number
 * `seq`: sorted, as the first of a thread's run in a block is. */
static void event_on(struct buf *c, uint32_t *last_seq, uint64_t tid, uint32_t seq, int sorted)
{
	u8(c, (uint8_t)(0x01 | 0x02 | (sorted ? 0x40 : 0)));
	varint(c, 1);
	varint(c, (uint32_t)(seq - *last_seq - 1));
	varint(c, tid);
	varint(c, 0); /* processor */
	varint(c, 10); /* timestamp */
	*last_seq = seq;
}

/* Thread 7 skips 3, 4, 5 between two events, and 7, 8, 9 after its last
 * (the sequence point says it got to 9); thread 8 comes back with lower
 * numbers (a new thread with an old id: not a loss); thread 9 is first
 * seen at a sequence point. */
static void with_gaps(struct buf *b)
{
	static const uint64_t tids[] = { 7, 8, 9 };
	static const uint32_t seqs[] = { 9, 2, 5 };
	struct buf c;
	uint32_t last;

	header(b);
	metadata_block(b, 1, "Microsoft-Windows-DotNETRuntime", 1, "", 2);

	block_header(&c, 1);
	last = 0;
	event_on(&c, &last, 7, 1, 1);
	u8(&c, 0); /* number 2: one more, unsaid */
	varint(&c, 1);
	last = 2;
	event_on(&c, &last, 7, 6, 0);
	event_on(&c, &last, 8, 1, 1);
	event_on(&c, &last, 8, 2, 0);
	object(b, "EventBlock", &c);
	sequence_point(b, 5000, 3, tids, seqs);

	block_header(&c, 1);
	last = 0;
	event_on(&c, &last, 7, 10, 1);
	event_on(&c, &last, 8, 1, 1);
	event_on(&c, &last, 9, 6, 1);
	last_object(b, "EventBlock", &c);
}

DEF_TEST(gaps_in_a_threads_sequence_numbers_are_events_lost)
{
	struct buf b;
	struct tr_nettrace nt;

	valid(&b);
	EXPECT_EQ_INT(0, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_EQ_INT(0, nt.stats.lost);
	tr_nettrace_free(&nt);

	with_gaps(&b);
	EXPECT_EQ_INT(0, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_EQ_STR("", nt.why);
	EXPECT_EQ_INT(8, nt.stats.events);
	EXPECT_EQ_INT(6, nt.stats.lost);
	EXPECT_EQ_INT(1, nt.stats.sequence_points);
	tr_nettrace_free(&nt);

	/* The same, the stream fed in pieces of every size: what a gap
	 * spans (events, blocks, the sequence point) is split anywhere. */
	for (size_t step = 1; step <= b.n; step++) {
		size_t off = 0, avail = 0, used;
		int ret;

		tr_nettrace_init(&nt);
		for (;;) {
			avail = off + avail + step > b.n ? b.n - off : avail + step;
			ret = tr_nettrace_feed(&nt, b.b + off, avail, &used, NULL, NULL);
			off += used;
			avail -= used;
			if (ret || (off + avail == b.n && !used))
				break;
		}
		if (ret != 1 || nt.stats.lost != 6 || nt.stats.events != 8) {
			TEST_FAIL("pieces of %zu: %d, %llu lost of %llu events, \"%s\"", step, ret,
				  (unsigned long long)nt.stats.lost, (unsigned long long)nt.stats.events,
				  nt.why);
			tr_nettrace_free(&nt);
			return;
		}
		tr_nettrace_free(&nt);
	}
}

DEF_TEST(a_sequence_point_that_lies_about_its_threads_is_named)
{
	struct buf b, c;
	struct tr_nettrace nt;

	c.n = 0;
	u64(&c, 5000);
	u32(&c, 2); /* two threads, and one given */
	u64(&c, 7);
	u32(&c, 1);
	stream_of(&b, "SPBlock", &c);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("a sequence point of 24 bytes, too short for its threads", nt.why);
	tr_nettrace_free(&nt);

	c.n = 0;
	u64(&c, 5000);
	stream_of(&b, "SPBlock", &c);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_read(&nt, b.b, b.n, NULL, NULL));
	EXPECT_CONTAINS("a sequence point of 8 bytes, too short for its header", nt.why);
	tr_nettrace_free(&nt);
}

DEF_TEST(utf16_strings)
{
	/* "aé€😀" then a lone high surrogate, then the NUL. */
	static const uint8_t s[] = { 'a', 0, 0xe9, 0, 0xac, 0x20, 0x3d, 0xd8, 0x00, 0xde,
				     0x3d, 0xd8, 0, 0, 'x', 0 };
	char *out;
	size_t used;

	EXPECT_EQ_INT(0, tr_nettrace_utf16z(s, sizeof(s), &out, &used));
	EXPECT_EQ_STR("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbd", out);
	EXPECT_EQ_INT(14, used);
	free(out);
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_utf16z(s, 12, &out, &used));
	/* An odd length: the last byte is no unit. */
	EXPECT_EQ_INT(-EBADMSG, tr_nettrace_utf16z(s + 12, 1, &out, &used));
	EXPECT_EQ_INT(0, tr_nettrace_utf16z(s + 12, 2, &out, &used));
	EXPECT_EQ_STR("", out);
	free(out);
}

int main(void)
{
	RUN_TEST(reads_the_trace_object_and_every_event);
	RUN_TEST(every_cut_is_said_with_where);
	RUN_TEST(pieces_of_every_size_give_the_same_events);
	RUN_TEST(every_corrupt_byte_is_read_or_refused_without_harm);
	RUN_TEST(lies_are_named);
	RUN_TEST(events_of_unknown_kinds_are_counted_and_a_callback_stops_the_read);
	RUN_TEST(a_kind_defined_again_describes_what_follows);
	RUN_TEST(gaps_in_a_threads_sequence_numbers_are_events_lost);
	RUN_TEST(a_sequence_point_that_lies_about_its_threads_is_named);
	RUN_TEST(utf16_strings);
	TEST_MAIN_END();
}

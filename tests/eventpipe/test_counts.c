/* What the manifest says of a runtime's stream, counted as the stream is
 * copied: events by kind (the runtime provider's ids, not another
 * provider's same ids), events of no known metadata as "other", events the
 * runtime dropped.  The stream comes as a socket gives it: in pieces cut
 * anywhere, inside an event, a block header, a varint. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "counts.h"
#include "testing.h"
#include "../lib/nettrace-build.h"

#define RUNTIME "Microsoft-Windows-DotNETRuntime"

/* n compressed events of metadata `id`, each one more in its thread's
 * numbers. */
static void events(struct buf *c, uint32_t id, int n)
{
	for (int i = 0; i < n; i++) {
		u8(c, 0x01);
		varint(c, id);
		varint(c, 10);
	}
}

/* The runtime's kinds and others with the same ids: 18 events, 4 of them
 * other (a rundown event with MethodLoadVerbose's id, another provider's
 * event 1, an event of no metadata). */
static void by_kind(struct buf *b)
{
	struct buf c;

	header(b);
	block_header(&c, 1);
	metadata(&c, 1, RUNTIME, 1, "", 2);
	metadata(&c, 2, RUNTIME, 2, "", 1);
	metadata(&c, 3, RUNTIME, 80, "", 1);
	metadata(&c, 4, RUNTIME, 143, "", 2);
	metadata(&c, 5, RUNTIME, 81, "", 2);
	metadata(&c, 6, RUNTIME, 55, "", 0);
	metadata(&c, 7, "Microsoft-Windows-DotNETRuntimeRundown", 143, "", 2);
	metadata(&c, 8, "My-Source", 1, "Hello", 0);
	object(b, "MetadataBlock", &c);
	block_header(&c, 1);
	events(&c, 1, 3);
	events(&c, 2, 3);
	events(&c, 3, 2);
	events(&c, 4, 4);
	object(b, "EventBlock", &c);
	block_header(&c, 1);
	events(&c, 5, 1);
	events(&c, 6, 1);
	events(&c, 7, 2);
	events(&c, 8, 1);
	events(&c, 42, 1);
	last_object(b, "EventBlock", &c);
}

static void expect_by_kind(const struct ep_counts *n)
{
	EXPECT_EQ_INT(18, n->events);
	EXPECT_EQ_INT(3, n->kind[EP_GC_START]);
	EXPECT_EQ_INT(3, n->kind[EP_GC_END]);
	EXPECT_EQ_INT(2, n->kind[EP_EXCEPTION_THROWN]);
	EXPECT_EQ_INT(4, n->kind[EP_METHOD_LOAD]);
	EXPECT_EQ_INT(1, n->kind[EP_CONTENTION_START]);
	EXPECT_EQ_INT(1, n->kind[EP_THREADPOOL_ADJUSTMENT]);
	EXPECT_EQ_INT(4, n->kind[EP_OTHER]);
	EXPECT_EQ_INT(0, n->lost);
}

DEF_TEST(events_are_counted_by_kind_whatever_the_pieces)
{
	struct buf b;
	struct ep_counter c;
	struct ep_counts n;

	by_kind(&b);
	for (size_t step = 1; step <= b.n; step++) {
		ep_counter_init(&c);
		for (size_t off = 0; off < b.n; off += step)
			ep_counter_feed(&c, b.b + off, off + step > b.n ? b.n - off : step);
		ep_counter_get(&c, &n);
		if (n.events != 18 || !c.counting || !c.nt.ended) {
			TEST_FAIL("pieces of %zu: %llu events, counting %d, \"%s\"", step,
				  (unsigned long long)n.events, c.counting, c.nt.why);
			ep_counter_free(&c);
			return;
		}
		expect_by_kind(&n);
		EXPECT_EQ_INT(0, c.carry_len);
		ep_counter_free(&c);
	}
}

DEF_TEST(the_counts_so_far_are_of_whole_blocks)
{
	struct buf b;
	struct ep_counter c;
	struct ep_counts n;
	uint64_t before = 0;

	by_kind(&b);
	ep_counter_init(&c);
	for (size_t off = 0; off < b.n; off += 7) {
		ep_counter_feed(&c, b.b + off, off + 7 > b.n ? b.n - off : 7);
		ep_counter_get(&c, &n);
		/* 12 events in the first block, then 6. */
		if ((n.events != 0 && n.events != 12 && n.events != 18) || n.events < before) {
			TEST_FAIL("at %zu: %llu events", off, (unsigned long long)n.events);
			break;
		}
		before = n.events;
		EXPECT_EQ_INT(n.events, n.kind[EP_GC_START] + n.kind[EP_GC_END] +
				n.kind[EP_EXCEPTION_THROWN] + n.kind[EP_METHOD_LOAD] +
				n.kind[EP_CONTENTION_START] + n.kind[EP_THREADPOOL_ADJUSTMENT] +
				n.kind[EP_OTHER]);
	}
	EXPECT_EQ_INT(18, before);
	ep_counter_free(&c);
	/* Freed twice is freed. */
	ep_counter_free(&c);
}

/* Capture thread 7's events numbered 1, 2, then 6: 3, 4 and 5 were
 * dropped. */
static void with_gap(struct buf *b)
{
	struct buf c;

	header(b);
	metadata_block(b, 1, RUNTIME, 80, "", 1);
	block_header(&c, 1);
	u8(&c, 0x01 | 0x02 | 0x40); /* metadata, thread and number, sorted */
	varint(&c, 1);
	varint(&c, 0);   /* number 1 */
	varint(&c, 7);   /* capture thread */
	varint(&c, 0);   /* processor */
	varint(&c, 100); /* timestamp */
	u8(&c, 0);       /* number 2 */
	varint(&c, 10);
	u8(&c, 0x02);
	varint(&c, 3);   /* number 2 + 3 + 1 */
	varint(&c, 7);
	varint(&c, 0);
	varint(&c, 10);
	last_object(b, "EventBlock", &c);
}

DEF_TEST(a_gap_in_a_threads_numbers_is_events_lost_wherever_the_stream_is_cut)
{
	struct buf b;
	struct ep_counter c;
	struct ep_counts n;

	with_gap(&b);
	/* Two feeds, cut at every byte: inside the events too. */
	for (size_t cut = 0; cut <= b.n; cut++) {
		ep_counter_init(&c);
		ep_counter_feed(&c, b.b, cut);
		ep_counter_feed(&c, b.b + cut, b.n - cut);
		ep_counter_get(&c, &n);
		if (n.events != 3 || n.lost != 3 || n.kind[EP_EXCEPTION_THROWN] != 3 || !c.nt.ended) {
			TEST_FAIL("cut at %zu: %llu events, %llu lost, \"%s\"", cut,
				  (unsigned long long)n.events, (unsigned long long)n.lost, c.nt.why);
			ep_counter_free(&c);
			return;
		}
		ep_counter_free(&c);
	}
}

DEF_TEST(a_stream_that_cannot_be_read_keeps_what_was_counted)
{
	struct buf b;
	struct ep_counter c;
	struct ep_counts n;

	by_kind(&b);
	/* The end tag becomes a stray one. */
	b.b[b.n - 1] = 9;
	u8(&b, 1);
	ep_counter_init(&c);
	ep_counter_feed(&c, b.b, b.n);
	EXPECT_EQ_INT(0, c.counting);
	EXPECT_CONTAINS("tag 9 where an object", c.nt.why);
	ep_counter_get(&c, &n);
	expect_by_kind(&n);
	/* Nothing more is read, nothing more kept. */
	ep_counter_feed(&c, b.b, b.n);
	ep_counter_get(&c, &n);
	EXPECT_EQ_INT(18, n.events);
	ep_counter_free(&c);
}

DEF_TEST(the_counters_are_named_for_the_manifest)
{
	struct ep_counts sum = { 0 }, one = { .events = 5, .lost = 2, .kind = { [EP_OTHER] = 5 } };

	EXPECT_EQ_STR("events_gc_start", ep_kind_counters[EP_GC_START]);
	EXPECT_EQ_STR("events_method_load", ep_kind_counters[EP_METHOD_LOAD]);
	EXPECT_EQ_STR("events_other", ep_kind_counters[EP_OTHER]);
	for (int k = 0; k < EP_KINDS; k++)
		EXPECT_TRUE(ep_kind_counters[k] && !strncmp(ep_kind_counters[k], "events_", 7));
	ep_counts_add(&sum, &one);
	ep_counts_add(&sum, &one);
	EXPECT_EQ_INT(10, sum.events);
	EXPECT_EQ_INT(4, sum.lost);
	EXPECT_EQ_INT(10, sum.kind[EP_OTHER]);
}

int main(void)
{
	RUN_TEST(events_are_counted_by_kind_whatever_the_pieces);
	RUN_TEST(the_counts_so_far_are_of_whole_blocks);
	RUN_TEST(a_gap_in_a_threads_numbers_is_events_lost_wherever_the_stream_is_cut);
	RUN_TEST(a_stream_that_cannot_be_read_keeps_what_was_counted);
	RUN_TEST(the_counters_are_named_for_the_manifest);
	TEST_MAIN_END();
}

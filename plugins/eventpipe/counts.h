/* What manifest.json says of a runtime's events: read from its NetTrace
 * stream (lib/nettrace) while the stream is copied, a piece at a time as
 * the socket gives it, never read again from the file.
 *
 * The reader keeps one record per metadata id (its provider and event
 * id) and counts the events of each; a kind below is a sum over those
 * records, so that no event costs more than the reader's own work.  A
 * metadata id defined twice (the runtime never does) counts under its
 * last definition. */
#ifndef TR_EVENTPIPE_COUNTS_H
#define TR_EVENTPIPE_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/nettrace.h"

/* The runtime's events counted apart (lib/clrevents.h), each a counter of
 * the backend: ep_kind_counters[]. */
enum ep_kind {
	EP_GC_START,
	EP_GC_END,
	EP_EXCEPTION_THROWN,
	EP_METHOD_LOAD,
	EP_CONTENTION_START,
	EP_THREADPOOL_ADJUSTMENT,
	EP_OTHER, /* every other event, of any provider */
	EP_KINDS
};

/* "events_gc_start" ... "events_other", by enum ep_kind. */
extern const char *const ep_kind_counters[EP_KINDS];

struct ep_counts {
	uint64_t events;          /* as many as TraceEvent's EventPipeEventSource reads */
	uint64_t kind[EP_KINDS];  /* which add up to events */
	uint64_t lost;            /* dropped by the runtime (struct tr_nettrace_stats) */
};

void ep_counts_add(struct ep_counts *sum, const struct ep_counts *c);

/* The reader of one stream.  Zero-initialised is not ready: ep_counter_init. */
struct ep_counter {
	struct tr_nettrace nt;
	/* An object not yet whole, waiting for the bytes that complete it. */
	char *carry;
	size_t carry_len, carry_cap;
	/* 0 once the stream could not be read: nt.why says why, the counts
	 * stay what they were. */
	int counting;
};

void ep_counter_init(struct ep_counter *c);

/* The next n bytes of the stream, as they came. */
void ep_counter_feed(struct ep_counter *c, const void *p, size_t n);

/* What was counted so far. */
void ep_counter_get(const struct ep_counter *c, struct ep_counts *out);

/* Frees what the reader holds (idempotent). */
void ep_counter_free(struct ep_counter *c);

#endif

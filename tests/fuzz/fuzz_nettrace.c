/* libFuzzer target: the NetTrace reader (lib/nettrace.c), fed what a traced
 * .NET process sends over its diagnostics socket, as `tracerig report`
 * feeds it: whole, and again in pieces as a zip entry inflates (the piece
 * size from the input's length).  Both reads must agree on every event, a
 * failure must say why, and every byte an event points at must be readable
 * (ASan checks the payloads and the names). */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/nettrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	uint64_t n, sum;
};

static int each(void *arg, const struct tr_nettrace_event *ev)
{
	struct seen *s = arg;
	size_t used;
	char *text;

	s->n++;
	s->sum = s->sum * 31 + ev->metadata_id + ev->event_id + (uint64_t)ev->timestamp +
		 ev->thread_id + ev->sequence + ev->payload_len + strlen(ev->provider) +
		 (ev->name ? strlen(ev->name) : 0) + ev->activity_id[15] + ev->related_activity_id[15];
	for (size_t i = 0; i < ev->payload_len; i++)
		s->sum += ev->payload[i];
	/* What the report does with an exception's payload. */
	if (tr_nettrace_utf16z(ev->payload, ev->payload_len, &text, &used) == 0) {
		assert(used <= ev->payload_len);
		free(text);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_nettrace whole, pieces;
	struct seen a = { 0 }, b = { 0 };
	size_t step = 1 + size % 97, off = 0, avail = 0, used;
	int ra, rb;

	ra = tr_nettrace_read(&whole, data, size, each, &a);
	assert(ra <= 0);
	assert(ra == 0 || whole.why[0]);
	assert(a.n == whole.stats.events);

	tr_nettrace_init(&pieces);
	for (;;) {
		avail = off + avail + step > size ? size - off : avail + step;
		rb = tr_nettrace_feed(&pieces, data + off, avail, &used, each, &b);
		assert(used <= avail);
		off += used;
		avail -= used;
		if (rb)
			break;
		if (off + avail == size && !used) {
			rb = tr_nettrace_finish(&pieces);
			break;
		}
		/* What the caller's buffer must hold next is what it will hold. */
		assert(pieces.need <= TR_NETTRACE_MAX_BLOCK + 4096);
	}
	/* The same events up to where either stopped. */
	if (ra == 0 || ra == -ENODATA) {
		assert(rb == 1 || rb == -ENODATA);
		assert(a.n == b.n && a.sum == b.sum);
	}
	tr_nettrace_free(&whole);
	tr_nettrace_free(&pieces);
	return 0;
}

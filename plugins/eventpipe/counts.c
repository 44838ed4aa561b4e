/* A runtime's events counted as its stream is copied: see counts.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counts.h"
#include "lib/clrevents.h"
#include "lib/vec.h"

/* The first read of an object that spans pieces; it grows to what one
 * block needs (TR_NETTRACE_MAX_BLOCK at most). */
#define CARRY_INITIAL (64 * 1024)

const char *const ep_kind_counters[EP_KINDS] = {
	[EP_GC_START] = "events_gc_start",
	[EP_GC_END] = "events_gc_end",
	[EP_EXCEPTION_THROWN] = "events_exception_thrown",
	[EP_METHOD_LOAD] = "events_method_load",
	[EP_CONTENTION_START] = "events_contention_start",
	[EP_THREADPOOL_ADJUSTMENT] = "events_threadpool_adjustment",
	[EP_OTHER] = "events_other",
};

/* The runtime provider's event ids counted apart. */
static const struct {
	uint32_t event_id;
	enum ep_kind kind;
} runtime_kinds[] = {
	{ TR_CLR_GC_START, EP_GC_START },
	{ TR_CLR_GC_END, EP_GC_END },
	{ TR_CLR_EXCEPTION_THROWN, EP_EXCEPTION_THROWN },
	{ TR_CLR_METHOD_LOAD_VERBOSE, EP_METHOD_LOAD },
	{ TR_CLR_CONTENTION_START, EP_CONTENTION_START },
	{ TR_CLR_THREADPOOL_ADJUSTMENT, EP_THREADPOOL_ADJUSTMENT },
};

void ep_counts_add(struct ep_counts *sum, const struct ep_counts *c)
{
	sum->events += c->events;
	sum->lost += c->lost;
	for (int k = 0; k < EP_KINDS; k++)
		sum->kind[k] += c->kind[k];
}

void ep_counter_init(struct ep_counter *c)
{
	memset(c, 0, sizeof(*c));
	tr_nettrace_init(&c->nt);
	c->counting = 1;
}

static enum ep_kind kind_of(const struct tr_nettrace_kind *k)
{
	/* The id first: most kinds end there, without a string compared. */
	for (size_t i = 0; i < sizeof(runtime_kinds) / sizeof(runtime_kinds[0]); i++)
		if (runtime_kinds[i].event_id == k->event_id)
			return strcmp(k->provider, TR_CLR_PROVIDER) == 0 ? runtime_kinds[i].kind
									  : EP_OTHER;
	return EP_OTHER;
}

void ep_counter_get(const struct ep_counter *c, struct ep_counts *out)
{
	uint64_t named = 0;

	memset(out, 0, sizeof(*out));
	out->events = c->nt.stats.events;
	out->lost = c->nt.stats.lost;
	for (size_t i = 0; i < c->nt.n_kinds; i++) {
		enum ep_kind k = kind_of(&c->nt.kinds[i]);

		if (k != EP_OTHER) {
			out->kind[k] += c->nt.kinds[i].count;
			named += c->nt.kinds[i].count;
		}
	}
	/* Events of no known kind too. */
	out->kind[EP_OTHER] = out->events - named;
}

static void stop_counting(struct ep_counter *c, const char *why)
{
	c->counting = 0;
	if (why)
		snprintf(c->nt.why, sizeof(c->nt.why), "%s", why);
}

/* Room for `need` bytes in carry; 0 when out of memory (counting stops). */
static int carry_room(struct ep_counter *c, size_t need)
{
	char *grown = tr_vec_grow(c->carry, &c->carry_cap, need, 1, CARRY_INITIAL);

	if (!grown) {
		stop_counting(c, "out of memory");
		return 0;
	}
	c->carry = grown;
	return 1;
}

void ep_counter_feed(struct ep_counter *c, const void *p, size_t n)
{
	const char *data = p;
	size_t len = n, used = 0;
	int ret;

	if (!c->counting || c->nt.ended || !n)
		return;
	if (c->carry_len) {
		if (!carry_room(c, c->carry_len + n))
			return;
		memcpy(c->carry + c->carry_len, p, n);
		c->carry_len += n;
		data = c->carry;
		len = c->carry_len;
	}
	ret = tr_nettrace_feed(&c->nt, data, len, &used, NULL, NULL);
	if (ret < 0) {
		stop_counting(c, NULL);
		return;
	}
	if (ret == 1) {
		/* Nothing follows the end tag: what does is not counted. */
		c->carry_len = 0;
		return;
	}
	/* Keep the incomplete object for the next bytes. */
	if (data == c->carry) {
		memmove(c->carry, c->carry + used, len - used);
	} else if (used < len) {
		if (!carry_room(c, len - used))
			return;
		memcpy(c->carry, data + used, len - used);
	}
	c->carry_len = len - used;
}

void ep_counter_free(struct ep_counter *c)
{
	free(c->carry);
	c->carry = NULL;
	c->carry_len = c->carry_cap = 0;
	tr_nettrace_free(&c->nt);
}

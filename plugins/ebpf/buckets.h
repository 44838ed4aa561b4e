/* Flight mode: the off-CPU aggregation is cumulative (the kernel's `agg`
 * map, callchain = dwarf's table in user space), so a window is the totals
 * now minus the totals at a moment before the window began.  This ring
 * keeps the totals read at each bucket boundary, a fixed number of them,
 * the oldest dropped first.  Pure data: no BPF, no plugin ABI, so it is
 * unit-tested without root (tests/ebpf/test_buckets.c). */
#ifndef TR_EBPF_BUCKETS_H
#define TR_EBPF_BUCKETS_H

#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "offcpu.h"

/* One entry's totals at a boundary (56 bytes). */
struct bk_val {
	struct offcpu_key key;
	uint64_t weighted_ns, real_ns, count;
	uint64_t first_ns; /* the entry's making: another value is another entry */
};

/* The totals at one boundary.  `agg` is sorted by key; `us[i]` holds
 * entry i of callchain = dwarf's table (whose entries never move). */
struct bk_totals {
	uint64_t t_ns; /* CLOCK_MONOTONIC once the totals were read: every
	                * interval counted in them had ended by then */
	struct bk_val *agg;
	size_t n_agg;
	struct bk_val *us; /* key unused */
	size_t n_us;
	uint64_t counters[OFFCPU_CNT__MAX];
	uint64_t us_unwound, us_cut_short, us_unmapped, us_lost;
};

struct bk_ring;

/* A ring of `cap` boundaries (at least 2).  NULL when out of memory. */
struct bk_ring *bk_ring_new(size_t cap);
void bk_ring_free(struct bk_ring *r);
size_t bk_ring_cap(const struct bk_ring *r);

/* How many boundaries a window needs at this bucket: one at or before
 * any window's start for a snapshot whose callback runs up to two buckets
 * after its trigger, and the ones after it. */
size_t bk_ring_cap_for(uint64_t window_ns, uint64_t bucket_ns);

/* The totals of `n` aggregated entries (any order) into *t, with t_ns,
 * counters and us filled by the caller (bk_totals_set_us).  0 or -ENOMEM;
 * on failure *t holds nothing to free. */
int bk_totals_from(struct bk_totals *t, const struct oc_entry *v, size_t n);
/* us[i] from entry i of callchain = dwarf's table (v[i]), for i < n. */
int bk_totals_set_us(struct bk_totals *t, const struct oc_entry *v, size_t n);
void bk_totals_free(struct bk_totals *t);

/* Takes *t into the ring (the oldest boundary goes when full); *t is
 * emptied.  Boundaries must come in time order. */
void bk_ring_push(struct bk_ring *r, struct bk_totals *t);

/* The newest boundary at or before `from_ns`; when there is none, NULL if
 * the ring never dropped one (the window starts before the first: every
 * total counts, from zero), else the oldest kept (*short_by set to how
 * much later than from_ns it is).  Valid until the next push. */
const struct bk_totals *bk_ring_base(const struct bk_ring *r, uint64_t from_ns,
				     uint64_t *short_by);

/* The entry's totals minus what `base` held of the same key (NULL: zero)
 * into *out; returns 0 when nothing was added since (left out of a
 * snapshot), 1 otherwise. */
int bk_delta_agg(const struct bk_totals *base, const struct oc_entry *cur, struct oc_entry *out);
/* The same for entry `i` of callchain = dwarf's table. */
int bk_delta_us(const struct bk_totals *base, size_t i, const struct oc_entry *cur,
		struct oc_entry *out);

#endif

/* The ring of cumulative totals at bucket boundaries (buckets.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buckets.h"

struct bk_ring {
	struct bk_totals *b; /* cap slots, b[(first + i) % cap] for i < n */
	size_t cap, first, n;
	int dropped; /* a boundary left the ring */
};

struct bk_ring *bk_ring_new(size_t cap)
{
	struct bk_ring *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->cap = cap < 2 ? 2 : cap;
	r->b = calloc(r->cap, sizeof(*r->b));
	if (!r->b) {
		free(r);
		return NULL;
	}
	return r;
}

void bk_ring_free(struct bk_ring *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		bk_totals_free(&r->b[(r->first + i) % r->cap]);
	free(r->b);
	free(r);
}

size_t bk_ring_cap(const struct bk_ring *r)
{
	return r->cap;
}

size_t bk_ring_cap_for(uint64_t window_ns, uint64_t bucket_ns)
{
	/* Boundaries come at least a bucket apart; the oldest of `cap` is
	 * then at least (cap - 1) buckets old, which must reach back a
	 * window and the two buckets a late snapshot callback may take. */
	uint64_t per_window = bucket_ns ? (window_ns + bucket_ns - 1) / bucket_ns : 1;

	return (size_t)per_window + 3;
}

static int key_cmp(const struct offcpu_key *a, const struct offcpu_key *b)
{
	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->kstack != b->kstack)
		return a->kstack < b->kstack ? -1 : 1;
	if (a->ustack != b->ustack)
		return a->ustack < b->ustack ? -1 : 1;
	return 0;
}

static int val_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct bk_val *)a)->key, &((const struct bk_val *)b)->key);
}

int bk_totals_from(struct bk_totals *t, const struct oc_entry *v, size_t n)
{
	t->agg = NULL;
	t->n_agg = 0;
	if (!n)
		return 0;
	t->agg = malloc(n * sizeof(*t->agg));
	if (!t->agg)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		t->agg[i] = (struct bk_val){ .key = v[i].key, .weighted_ns = v[i].val.weighted_ns,
					     .real_ns = v[i].val.real_ns, .count = v[i].val.count,
					     .first_ns = v[i].val.first_ns };
	qsort(t->agg, n, sizeof(*t->agg), val_cmp);
	t->n_agg = n;
	return 0;
}

int bk_totals_set_us(struct bk_totals *t, const struct oc_entry *v, size_t n)
{
	free(t->us);
	t->us = NULL;
	t->n_us = 0;
	if (!n)
		return 0;
	t->us = malloc(n * sizeof(*t->us));
	if (!t->us)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		t->us[i] = (struct bk_val){ .weighted_ns = v[i].val.weighted_ns,
					    .real_ns = v[i].val.real_ns, .count = v[i].val.count,
					    .first_ns = v[i].val.first_ns };
	t->n_us = n;
	return 0;
}

void bk_totals_free(struct bk_totals *t)
{
	free(t->agg);
	free(t->us);
	t->agg = t->us = NULL;
	t->n_agg = t->n_us = 0;
}

void bk_ring_push(struct bk_ring *r, struct bk_totals *t)
{
	if (r->n == r->cap) {
		bk_totals_free(&r->b[r->first]);
		r->first = (r->first + 1) % r->cap;
		r->n--;
		r->dropped = 1;
	}
	r->b[(r->first + r->n) % r->cap] = *t;
	r->n++;
	memset(t, 0, sizeof(*t));
}

const struct bk_totals *bk_ring_base(const struct bk_ring *r, uint64_t from_ns,
				     uint64_t *short_by)
{
	*short_by = 0;
	for (size_t i = r->n; i-- > 0;) {
		const struct bk_totals *b = &r->b[(r->first + i) % r->cap];

		if (b->t_ns <= from_ns)
			return b;
	}
	if (!r->dropped || !r->n)
		return NULL;
	*short_by = r->b[r->first].t_ns - from_ns;
	return &r->b[r->first];
}

/* Totals only grow while an entry exists: one made at another time
 * (evicted and made again), or a smaller value, is not the entry the
 * boundary saw, and counts from zero. */
static int delta(const struct bk_val *base, const struct oc_entry *cur, struct oc_entry *out)
{
	*out = *cur;
	if (base && base->first_ns == cur->val.first_ns && base->count <= cur->val.count &&
	    base->weighted_ns <= cur->val.weighted_ns && base->real_ns <= cur->val.real_ns) {
		out->val.weighted_ns -= base->weighted_ns;
		out->val.real_ns -= base->real_ns;
		out->val.count -= base->count;
	}
	return out->val.count != 0;
}

int bk_delta_agg(const struct bk_totals *base, const struct oc_entry *cur, struct oc_entry *out)
{
	const struct bk_val *found = NULL;

	if (base && base->n_agg) {
		struct bk_val k = { .key = cur->key };

		found = bsearch(&k, base->agg, base->n_agg, sizeof(*base->agg), val_cmp);
	}
	return delta(found, cur, out);
}

int bk_delta_us(const struct bk_totals *base, size_t i, const struct oc_entry *cur,
		struct oc_entry *out)
{
	return delta(base && i < base->n_us ? &base->us[i] : NULL, cur, out);
}

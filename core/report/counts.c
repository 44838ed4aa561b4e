#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "counts.h"
#include "lib/vec.h"

struct rp_count *rp_counts_get(struct rp_counts *c, const char *name, size_t len)
{
	struct tr_strmap_entry *at = tr_strmap_get(&c->index, name, len);
	struct rp_count *e, *items;

	if (!at)
		return NULL;
	if (at->value)
		return &c->items[at->value - 1];
	items = tr_vec_grow(c->items, &c->cap, c->n + 1, sizeof(*items), 64);
	if (!items)
		return NULL;
	c->items = items;
	e = &c->items[c->n];
	memset(e, 0, sizeof(*e));
	e->name = at->key;
	at->value = ++c->n;
	return e;
}

int rp_count_comm(struct rp_count *e, const char *comm, uint64_t n)
{
	int k;

	for (k = 0; k < RP_MAX_COMMS && e->comms[k].name; k++) {
		if (strcmp(e->comms[k].name, comm) == 0) {
			e->comms[k].n = rp_add(e->comms[k].n, n);
			return 0;
		}
	}
	if (k == RP_MAX_COMMS)
		return 0;
	e->comms[k].name = strdup(comm);
	if (!e->comms[k].name)
		return -ENOMEM;
	e->comms[k].n = n;
	return 0;
}

static int by_self(const void *a, const void *b)
{
	const struct rp_count *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_total(const void *a, const void *b)
{
	const struct rp_count *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void sort(struct rp_counts *c, int (*cmp)(const void *, const void *))
{
	/* qsort with no items may get a NULL array: undefined behaviour. */
	if (!c->n)
		return;
	qsort(c->items, c->n, sizeof(*c->items), cmp);
	/* Sorting moved the items: the index must follow. */
	for (size_t i = 0; i < c->n; i++)
		tr_strmap_find(&c->index, c->items[i].name, strlen(c->items[i].name))->value = i + 1;
}

void rp_counts_sort_by_self(struct rp_counts *c)
{
	sort(c, by_self);
}

void rp_counts_sort_by_total(struct rp_counts *c)
{
	sort(c, by_total);
}

void rp_counts_free(struct rp_counts *c)
{
	for (size_t i = 0; i < c->n; i++)
		for (int k = 0; k < RP_MAX_COMMS; k++)
			free(c->items[i].comms[k].name);
	free(c->items);
	tr_strmap_free(&c->index);
	memset(c, 0, sizeof(*c));
}

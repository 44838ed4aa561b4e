#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "probe.h"
#include "strmap.h"

#define FIRST_SLOTS 1024

static int entry_used(const void *slot)
{
	return ((const struct tr_strmap_entry *)slot)->key != NULL;
}

static uint64_t entry_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return ((const struct tr_strmap_entry *)slot)->hash;
}

static const struct tr_probe_ops entry_ops = {
	.size = sizeof(struct tr_strmap_entry),
	.first = FIRST_SLOTS,
	.used = entry_used,
	.hash = entry_hash,
};

struct key {
	const char *s;
	size_t len;
	uint64_t hash;
};

static int entry_is(const void *slot, const void *key)
{
	const struct tr_strmap_entry *e = slot;
	const struct key *k = key;

	return e->hash == k->hash && strncmp(e->key, k->s, k->len) == 0 && e->key[k->len] == '\0';
}

/* The slot of the key, or the empty slot where it would go. */
static struct tr_strmap_entry *slot_of(const struct tr_strmap *m, const char *key, size_t len,
				       uint64_t h)
{
	struct key k = { key, len, h };

	return &m->slots[tr_probe_find(m->slots, m->n_slots, &entry_ops, h, entry_is, &k)];
}

struct tr_strmap_entry *tr_strmap_find(const struct tr_strmap *m, const char *key, size_t len)
{
	struct tr_strmap_entry *e;

	if (!m->n)
		return NULL;
	e = slot_of(m, key, len, tr_hash_words(0, key, len));
	return e->key ? e : NULL;
}

struct tr_strmap_entry *tr_strmap_get(struct tr_strmap *m, const char *key, size_t len)
{
	uint64_t h = tr_hash_words(0, key, len);
	struct tr_strmap_entry *e =
		tr_probe_grow(m->slots, &m->n_slots, m->n + 1, &entry_ops, NULL);

	if (!e)
		return NULL;
	m->slots = e;
	e = slot_of(m, key, len, h);
	if (e->key)
		return e;
	e->key = strndup(key, len);
	if (!e->key)
		return NULL;
	e->hash = h;
	e->value = 0;
	m->n++;
	return e;
}

struct tr_strmap_entry *tr_strmap_next(const struct tr_strmap *m, size_t *i)
{
	while (*i < m->n_slots) {
		struct tr_strmap_entry *e = &m->slots[(*i)++];

		if (e->key)
			return e;
	}
	return NULL;
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(const struct tr_strmap_entry *const *)a)->key,
		      (*(const struct tr_strmap_entry *const *)b)->key);
}

const struct tr_strmap_entry **tr_strmap_sorted(const struct tr_strmap *m)
{
	const struct tr_strmap_entry **v = malloc((m->n ? m->n : 1) * sizeof(*v));
	struct tr_strmap_entry *e;
	size_t k = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; (e = tr_strmap_next(m, &i));)
		v[k++] = e;
	qsort(v, k, sizeof(*v), by_key);
	return v;
}

void tr_strmap_free(struct tr_strmap *m)
{
	for (size_t i = 0; i < m->n_slots; i++)
		free(m->slots[i].key);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "strmap.h"

#define FIRST_SLOTS 1024

static int grow(struct tr_strmap *m)
{
	size_t n = m->n_slots ? m->n_slots * 2 : FIRST_SLOTS;
	struct tr_strmap_entry *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_slots; i++) {
		size_t j;

		if (!m->slots[i].key)
			continue;
		for (j = m->slots[i].hash & (n - 1); slots[j].key; j = (j + 1) & (n - 1))
			;
		slots[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->n_slots = n;
	return 0;
}

/* The slot of the key, or the empty slot where it would go. */
static size_t slot_of(const struct tr_strmap *m, const char *key, size_t len, uint64_t h)
{
	size_t j = h & (m->n_slots - 1);

	for (; m->slots[j].key; j = (j + 1) & (m->n_slots - 1)) {
		const struct tr_strmap_entry *e = &m->slots[j];

		if (e->hash == h && strncmp(e->key, key, len) == 0 && e->key[len] == '\0')
			break;
	}
	return j;
}

struct tr_strmap_entry *tr_strmap_find(const struct tr_strmap *m, const char *key, size_t len)
{
	size_t j;

	if (!m->n)
		return NULL;
	j = slot_of(m, key, len, tr_hash_words(0, key, len));
	return m->slots[j].key ? &m->slots[j] : NULL;
}

struct tr_strmap_entry *tr_strmap_get(struct tr_strmap *m, const char *key, size_t len)
{
	uint64_t h = tr_hash_words(0, key, len);
	struct tr_strmap_entry *e;

	/* At most half full, so probes stay short and always end. */
	if ((m->n + 1) * 2 > m->n_slots && grow(m) < 0)
		return NULL;
	e = &m->slots[slot_of(m, key, len, h)];
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

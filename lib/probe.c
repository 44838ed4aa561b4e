#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

void *tr_probe_grow(void *slots, size_t *cap, size_t need, const struct tr_probe_ops *ops,
		    const void *ctx)
{
	const unsigned char *old = slots;
	unsigned char *tab;
	size_t ncap = *cap ? *cap : ops->first, quarters = ops->quarters ? ops->quarters : 2;

	if (need <= *cap / 4 * quarters)
		return slots;
	/* Twice the old size (or the first), then on until it holds `need`. */
	if (*cap) {
		if (ncap > SIZE_MAX / 2)
			return NULL;
		ncap *= 2;
	}
	while (ncap / 4 * quarters < need) {
		if (ncap > SIZE_MAX / 2)
			return NULL;
		ncap *= 2;
	}
	tab = calloc(ncap, ops->size);
	if (!tab)
		return NULL;
	/* In slot order, as each table did by hand: the same entries land in
	 * the same slots, so what walks a table walks it as before. */
	for (size_t i = 0; i < *cap; i++) {
		const unsigned char *s = old + i * ops->size;
		size_t j;

		if (!ops->used(s))
			continue;
		j = tr_probe_find(tab, ncap, ops, ops->hash(s, ctx), NULL, NULL);
		memcpy(tab + j * ops->size, s, ops->size);
	}
	free(slots);
	*cap = ncap;
	return tab;
}

void tr_probe_delete(void *slots, size_t cap, size_t i, const struct tr_probe_ops *ops,
		     const void *ctx)
{
	unsigned char *s = slots;
	size_t mask = cap - 1, j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!ops->used(s + j * ops->size))
			break;
		home = (size_t)ops->hash(s + j * ops->size, ctx) & mask;
		/* It stays when its home is cyclically within (i, j]. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		memcpy(s + i * ops->size, s + j * ops->size, ops->size);
		i = j;
	}
	memset(s + i * ops->size, 0, ops->size);
}

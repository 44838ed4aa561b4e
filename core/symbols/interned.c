#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "interned.h"
#include "lib/hash.h"

static int grow(struct tr_interned *set)
{
	size_t cap = set->cap ? set->cap * 2 : 1024, i;
	const char **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t k = 0; k < set->cap; k++) {
		const char *s = set->slots[k];

		if (!s)
			continue;
		for (i = tr_fnv1a_str(s) & (cap - 1); slots[i]; i = (i + 1) & (cap - 1))
			;
		slots[i] = s;
	}
	free(set->slots);
	set->slots = slots;
	set->cap = cap;
	return 0;
}

const char *tr_interned_n(struct tr_interned *set, struct tr_arena *arena, const char *s,
			  size_t len)
{
	size_t i;

	if ((set->n + 1) * 2 > set->cap && grow(set) < 0)
		return NULL;
	for (i = tr_fnv1a(s, len) & (set->cap - 1); set->slots[i]; i = (i + 1) & (set->cap - 1))
		if (strncmp(set->slots[i], s, len) == 0 && set->slots[i][len] == '\0')
			return set->slots[i];
	set->slots[i] = tr_arena_strndup(arena, s, len);
	if (!set->slots[i])
		return NULL;
	set->n++;
	return set->slots[i];
}

void tr_interned_free(struct tr_interned *set)
{
	free(set->slots);
	*set = (struct tr_interned){ 0 };
}

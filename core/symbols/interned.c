#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "interned.h"
#include "lib/hash.h"
#include "lib/probe.h"

static int string_used(const void *slot)
{
	return *(const char *const *)slot != NULL;
}

static uint64_t string_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return tr_fnv1a_str(*(const char *const *)slot);
}

static const struct tr_probe_ops string_ops = {
	.size = sizeof(const char *),
	.first = 1024,
	.used = string_used,
	.hash = string_hash,
};

struct key {
	const char *s;
	size_t len;
};

static int string_is(const void *slot, const void *key)
{
	const char *in = *(const char *const *)slot;
	const struct key *k = key;

	return strncmp(in, k->s, k->len) == 0 && in[k->len] == '\0';
}

const char *tr_interned_n(struct tr_interned *set, struct tr_arena *arena, const char *s,
			  size_t len)
{
	const char **slots = tr_probe_grow(set->slots, &set->cap, set->n + 1, &string_ops, NULL);
	struct key k = { s, len };
	size_t i;

	if (!slots)
		return NULL;
	set->slots = slots;
	i = tr_probe_find(set->slots, set->cap, &string_ops, tr_fnv1a(s, len), string_is, &k);
	if (set->slots[i])
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

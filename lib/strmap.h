/* Strings to 64-bit values (a count, a weight, an index into the caller's
 * own array), by open addressing (lib/probe.h) on tr_hash_words
 * (lib/hash.h).  Keys are copied in and keep their address for the map's
 * life, so callers may point at them. */
#ifndef TR_LIB_STRMAP_H
#define TR_LIB_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct tr_strmap_entry {
	char *key; /* NULL: an empty slot */
	uint64_t hash;
	uint64_t value;
};

/* Zero-initialised is empty and ready. */
struct tr_strmap {
	struct tr_strmap_entry *slots;
	size_t n_slots, n;
};

/* The entry of key[0..len) (no NUL needed there), added with value 0 when
 * new; NULL when out of memory. */
struct tr_strmap_entry *tr_strmap_get(struct tr_strmap *m, const char *key, size_t len);

/* The entry of key[0..len), or NULL. */
struct tr_strmap_entry *tr_strmap_find(const struct tr_strmap *m, const char *key, size_t len);

/* The next entry at or after slot *i (which it moves past), or NULL at the
 * end: for (size_t i = 0; (e = tr_strmap_next(m, &i));).  Unordered. */
struct tr_strmap_entry *tr_strmap_next(const struct tr_strmap *m, size_t *i);

/* The m->n entries sorted by key, in an array to free(); NULL when out of
 * memory.  Sorted output makes one collection always give the same file. */
const struct tr_strmap_entry **tr_strmap_sorted(const struct tr_strmap *m);

void tr_strmap_free(struct tr_strmap *m);

#endif

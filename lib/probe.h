/* Open addressing: the one hash table of the tree.  A power-of-two array
 * of fixed-size slots, linear probing from the hash's home slot, at most
 * half full (so a probe always meets a free slot and stays short; three
 * quarters for the frame caches, whose slots are many and large), grown by
 * doubling and rehashing, emptied without tombstones.
 *
 *     static const struct tr_probe_ops thread_ops = {
 *             .size = sizeof(struct thread), .first = 256,
 *             .used = thread_used, .hash = thread_hash,
 *     };
 *     struct thread *grown = tr_probe_grow(c->tab, &c->cap, c->n + 1,
 *                                          &thread_ops, NULL);
 *     if (!grown)
 *             return -ENOMEM;
 *     c->tab = grown;
 *     i = tr_probe_find(c->tab, c->cap, &thread_ops, tr_pid_hash(tid),
 *                       thread_is, &tid);
 *
 * As with lib/vec.h, the caller keeps the slots, their count and their
 * capacity in its own struct, so the slots stay a plain typed array (an
 * id, a pointer, or the entry itself).  Hashes come from lib/hash.h. */
#ifndef TR_LIB_PROBE_H
#define TR_LIB_PROBE_H

#include <stddef.h>
#include <stdint.h>

struct tr_probe_ops {
	size_t size;  /* of a slot, in bytes */
	size_t first; /* slots of a new table: a power of two, 4 or more */
	/* How full the table may get, in quarters of its slots: 0 for 2
	 * (half), else 3 at most. */
	unsigned quarters;
	/* Whether a slot holds an entry.  A free slot is all zero bytes (what
	 * calloc gives and tr_probe_delete leaves). */
	int (*used)(const void *slot);
	/* The hash of the entry in a used slot, the one it was found by;
	 * ctx is the caller's, for slots that hold an index into its own
	 * arrays rather than the key. */
	uint64_t (*hash)(const void *slot, const void *ctx);
};

/* Room for `need` entries in `slots`, which has *cap: `slots` when the
 * table stays as full as ops->quarters lets it at most, else a new one twice as big (ops->first
 * slots the first time, and on until it is) with the entries rehashed in,
 * the old one freed and *cap updated.  NULL when out of memory or the size
 * overflows: `slots` and *cap are then as they were. */
void *tr_probe_grow(void *slots, size_t *cap, size_t need, const struct tr_probe_ops *ops,
		    const void *ctx);

/* The index of the slot whose entry is(slot, key) accepts, or else of the
 * free slot where it would go (is NULL: the first free slot, for an entry
 * known to be new).  cap > 0.  Inline, so that with ops a constant the
 * compiler calls `used` and `is` directly, as a table written by hand
 * would: probing is the hot path of every conversion. */
static inline size_t tr_probe_find(const void *slots, size_t cap, const struct tr_probe_ops *ops,
				   uint64_t hash, int (*is)(const void *slot, const void *key),
				   const void *key)
{
	const unsigned char *s = slots;
	size_t mask = cap - 1, i = (size_t)hash & mask;

	while (ops->used(s + i * ops->size) && !(is && is(s + i * ops->size, key)))
		i = (i + 1) & mask;
	return i;
}

/* Empties slot i of a table of `cap` slots, moving back the entries after
 * it that probing would no longer reach past the hole.  The caller counts
 * one entry fewer. */
void tr_probe_delete(void *slots, size_t cap, size_t i, const struct tr_probe_ops *ops,
		     const void *ctx);

#endif

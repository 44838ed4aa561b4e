/* Growable arrays: the one doubling realloc that tables of items
 * (counts, frames, stacks, comm changes) and buffers (a message, a file
 * read to its end) use to make room; hash tables grow by lib/probe.h.
 *
 *     struct item *grown = tr_vec_grow(v->items, &v->cap, v->n + 1,
 *                                      sizeof(*grown), 64);
 *     if (!grown)
 *             return -ENOMEM;
 *     v->items = grown;
 *
 * The caller keeps the array, its count and its capacity in its own struct
 * (with their own types), so the array stays a plain typed pointer. */
#ifndef TR_LIB_VEC_H
#define TR_LIB_VEC_H

#include <stddef.h>
#include <stdint.h>

/* Makes room for `need` (>= 1) items of `size` bytes in `items`, which
 * holds *cap: returns `items` when it does already, else the array
 * reallocated to twice its capacity (`initial` items the first time, and
 * never fewer than `need`, nor more than `max`: a buffer with a limit of
 * its own) with *cap updated.  NULL when out of memory, when `need` >
 * `max` or the size overflows: `items` and *cap are then as they were. */
void *tr_vec_grow_max(void *items, size_t *cap, size_t need, size_t size, size_t initial,
		      size_t max);

/* The same without a limit: tables of items. */
static inline void *tr_vec_grow(void *items, size_t *cap, size_t need, size_t size, size_t initial)
{
	return tr_vec_grow_max(items, cap, need, size, initial, SIZE_MAX);
}

#endif

/* Growable arrays: the one doubling realloc that tables of items
 * (counts, frames, stacks, comm changes) use to make room.
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

/* Makes room for `need` (>= 1) items of `size` bytes in `items`, which
 * holds *cap: returns `items` when it does already, else the array
 * reallocated to twice its capacity (`initial` items the first time, and
 * never fewer than `need`) with *cap updated.  NULL when out of memory or
 * the size overflows: `items` and *cap are then as they were. */
void *tr_vec_grow(void *items, size_t *cap, size_t need, size_t size, size_t initial);

#endif

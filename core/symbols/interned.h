/* Strings kept once: paths of the objects processes map and the frame
 * names made per (process, address) repeat across processes (a compile
 * loop makes the same "[cc1]" for every one), and one copy of each in an
 * arena bounds what they take by what is distinct. */
#ifndef TR_INTERNED_H
#define TR_INTERNED_H

#include <stddef.h>
#include <string.h>

#include "symtab.h"

/* Open addressing, at most half full; the strings are the arena's. */
struct tr_interned {
	const char **slots;
	size_t n, cap;
};

/* The one copy in `arena` of s[0..len), made on first sight; NULL when out
 * of memory. */
const char *tr_interned_n(struct tr_interned *set, struct tr_arena *arena, const char *s,
			  size_t len);

static inline const char *tr_interned(struct tr_interned *set, struct tr_arena *arena,
				      const char *s)
{
	return tr_interned_n(set, arena, s, strlen(s));
}

/* Frees the table, not the strings (they go with their arena). */
void tr_interned_free(struct tr_interned *set);

#endif

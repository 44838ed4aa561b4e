/* Building blocks of the symbolizer: a string arena whose strings live as
 * long as the symbolizer (the ABI promises that), and a sorted symbol table
 * searched by binary search. */
#ifndef TR_SYMTAB_H
#define TR_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct tr_arena_chunk;

struct tr_arena {
	struct tr_arena_chunk *head;
};

/* Copies n bytes of s plus a NUL; NULL when out of memory. */
char *tr_arena_strndup(struct tr_arena *a, const char *s, size_t n);
char *tr_arena_strdup(struct tr_arena *a, const char *s);
void tr_arena_free(struct tr_arena *a);

struct tr_sym {
	uint64_t start;
	uint64_t size;
	const char *name; /* in an arena; replaced by its demangled form once */
	uint32_t prio;    /* at equal start the higher wins (binding, JIT order) */
	uint8_t demangled;
	uint8_t size_max; /* size is only an upper bound: the symbol ends at the
	                   * next one (ELF symbols without a size, kallsyms) */
};

struct tr_symtab {
	struct tr_sym *syms;
	size_t n, cap;
	int sorted;
};

/* Which of several names at one address to show, as perf chooses: a
 * function over a label, then non-weak, global, fewer leading underscores,
 * the longest name (then the first in byte order, so runs agree). */
uint32_t tr_symtab_alias_prio(int is_func, int weak, int global, const char *name);

int tr_symtab_add(struct tr_symtab *t, uint64_t start, uint64_t size, const char *name,
		  uint32_t prio);
/* A symbol without a size: it ends at the next symbol, at most at max_end. */
int tr_symtab_add_unsized(struct tr_symtab *t, uint64_t start, uint64_t max_end, const char *name,
			  uint32_t prio);
/* perf ranks ELF aliases (symbols that share a start) by the names it
 * shows: for each alias whose `shown` name (malloc'd, or NULL when it is
 * the symbol's own) differs, the name part of its priority is redone.
 * Call before tr_symtab_finish. */
void tr_symtab_rank_aliases(struct tr_symtab *t, char *(*shown)(const char *name));
/* Sorts, keeps one symbol per start address and, when fix_sizes, ends
 * unsized symbols at the next one (as perf does). */
void tr_symtab_finish(struct tr_symtab *t, int fix_sizes);
/* The symbol containing addr, or NULL.  The table must be finished. */
struct tr_sym *tr_symtab_find(struct tr_symtab *t, uint64_t addr);
void tr_symtab_free(struct tr_symtab *t);

#endif

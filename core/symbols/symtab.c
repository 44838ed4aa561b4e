/* String arena and sorted symbol tables for the symbolizer. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symtab.h"
#include "lib/vec.h"

#define CHUNK_SIZE (64 * 1024)

struct tr_arena_chunk {
	struct tr_arena_chunk *next;
	size_t used, size;
	char data[];
};

char *tr_arena_strndup(struct tr_arena *a, const char *s, size_t n)
{
	struct tr_arena_chunk *c = a->head;
	char *p;

	if (!c || c->size - c->used < n + 1) {
		/* Long strings get a chunk of their own behind the current one,
		 * so the current chunk's free room is not wasted. */
		size_t size = n + 1 > CHUNK_SIZE / 4 ? n + 1 : CHUNK_SIZE;
		struct tr_arena_chunk *nc = malloc(sizeof(*nc) + size);

		if (!nc)
			return NULL;
		nc->used = 0;
		nc->size = size;
		if (c && size != CHUNK_SIZE) {
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			a->head = nc;
		}
		c = nc;
	}
	p = c->data + c->used;
	memcpy(p, s, n);
	p[n] = '\0';
	c->used += n + 1;
	return p;
}

char *tr_arena_strdup(struct tr_arena *a, const char *s)
{
	return tr_arena_strndup(a, s, strlen(s));
}

void tr_arena_free(struct tr_arena *a)
{
	while (a->head) {
		struct tr_arena_chunk *next = a->head->next;

		free(a->head);
		a->head = next;
	}
}

static int by_start_then_prio(const void *a, const void *b);

/* The same order as one qsort by_start_then_prio (glibc's is a stable
 * merge sort, and the order is total), cheaper for the common case:
 * /proc/kallsyms and most symbol tables come in address order already,
 * and only each run of aliases at one address needs ordering. */
static void sort_by_start_then_prio(struct tr_sym *v, size_t n)
{
	size_t i = 1;

	while (i < n && v[i - 1].start <= v[i].start)
		i++;
	if (i < n) {
		qsort(v, n, sizeof(*v), by_start_then_prio);
		return;
	}
	for (i = 0; i < n;) {
		size_t end = i + 1;

		while (end < n && v[end].start == v[i].start)
			end++;
		if (end - i > 1)
			qsort(v + i, end - i, sizeof(*v), by_start_then_prio);
		i = end;
	}
}

/* The part of the priority that comes from the name: fewer leading
 * underscores, then the longer name. */
static uint32_t name_prio(const char *name)
{
	uint32_t underscores = 0;
	size_t len = strlen(name);

	while (name[underscores] == '_' && underscores < 15)
		underscores++;
	return (15 - underscores) << 16 | (uint32_t)(len > 0xffff ? 0xffff : len);
}

#define NAME_PRIO_MASK ((1u << 22) - 1)

uint32_t tr_symtab_alias_prio(int is_func, int weak, int global, const char *name)
{
	return (uint32_t)!!is_func << 24 | (uint32_t)!weak << 23 | (uint32_t)!!global << 22 |
	       name_prio(name);
}

void tr_symtab_rank_aliases(struct tr_symtab *t, char *(*shown)(const char *name))
{
	if (t->n < 2)
		return;
	sort_by_start_then_prio(t->syms, t->n);
	for (size_t i = 0; i < t->n;) {
		size_t end = i + 1;

		while (end < t->n && t->syms[end].start == t->syms[i].start)
			end++;
		for (size_t k = i; end - i > 1 && k < end; k++) {
			char *name = shown(t->syms[k].name);

			if (!name)
				continue;
			t->syms[k].prio = (t->syms[k].prio & ~NAME_PRIO_MASK) | name_prio(name);
			free(name);
		}
		i = end;
	}
}

int tr_symtab_add(struct tr_symtab *t, uint64_t start, uint64_t size, const char *name,
		  uint32_t prio)
{
	struct tr_sym *syms = tr_vec_grow(t->syms, &t->cap, t->n + 1, sizeof(*syms), 256);

	if (!syms)
		return -ENOMEM;
	t->syms = syms;
	t->syms[t->n++] = (struct tr_sym){ .start = start, .size = size, .name = name, .prio = prio };
	t->sorted = 0;
	return 0;
}

int tr_symtab_add_unsized(struct tr_symtab *t, uint64_t start, uint64_t max_end, const char *name,
			  uint32_t prio)
{
	int ret = tr_symtab_add(t, start, max_end > start ? max_end - start : 1, name, prio);

	if (ret == 0)
		t->syms[t->n - 1].size_max = 1;
	return ret;
}

static int by_start_then_prio(const void *a, const void *b)
{
	const struct tr_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1; /* the preferred one first */
	return strcmp(x->name, y->name);
}

void tr_symtab_finish(struct tr_symtab *t, int fix_sizes)
{
	size_t out = 0;

	if (t->sorted)
		return;
	if (t->n < 2) { /* nothing to order (and qsort must not see NULL) */
		t->sorted = 1;
		return;
	}
	sort_by_start_then_prio(t->syms, t->n);
	for (size_t i = 0; i < t->n; i++) {
		if (out && t->syms[out - 1].start == t->syms[i].start) {
			/* ELF aliases: keep the preferred name but the known
			 * extent.  (JIT entries: the newest one, as it is.) */
			struct tr_sym *kept = &t->syms[out - 1], *alias = &t->syms[i];

			if (fix_sizes && !alias->size_max &&
			    (kept->size_max || alias->size > kept->size)) {
				kept->size = alias->size;
				kept->size_max = 0;
			}
			continue;
		}
		t->syms[out++] = t->syms[i];
	}
	t->n = out;
	if (fix_sizes) {
		for (size_t i = 0; i + 1 < t->n; i++) {
			uint64_t room = t->syms[i + 1].start - t->syms[i].start;

			if (t->syms[i].size_max && t->syms[i].size > room)
				t->syms[i].size = room;
		}
	}
	t->sorted = 1;
}

struct tr_sym *tr_symtab_find(struct tr_symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	if (!t->n || addr < t->syms[0].start)
		return NULL;
	/* Last symbol starting at or below addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	/* The innermost symbol wins; a few steps back find an enclosing one
	 * when addr lies past the end of a nested (or reused JIT) symbol.  A
	 * label without a size inside a function (V8's builtins have them)
	 * loses to the function, as perf names it. */
	struct tr_sym *label = NULL;

	for (size_t i = lo + 1, steps = 0; i-- > 0 && steps < 8; steps++) {
		struct tr_sym *s = &t->syms[i];

		if (addr - s->start >= s->size)
			continue;
		if (!s->size_max)
			return s;
		if (!label)
			label = s;
	}
	return label;
}

void tr_symtab_free(struct tr_symtab *t)
{
	free(t->syms);
	t->syms = NULL;
	t->n = t->cap = 0;
}

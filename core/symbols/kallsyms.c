/* /proc/kallsyms reader. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "lib/kallsyms.h"
#include "lib/vec.h"

static int mod_by_start(const void *a, const void *b)
{
	const struct tr_kmodule *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The module's entry, created on first sight.  Lines of one module are
 * consecutive, so the last one found is tried first. */
static struct tr_kmodule *module(struct tr_kallsyms *k, const char *name, size_t len,
				 size_t *cap, struct tr_arena *arena)
{
	static const size_t none = (size_t)-1;
	size_t found = none;
	struct tr_kmodule *m;
	char *dso;

	if (k->n_mods && strncmp(k->mods[k->n_mods - 1].dso + 1, name, len) == 0 &&
	    k->mods[k->n_mods - 1].dso[len + 1] == ']')
		return &k->mods[k->n_mods - 1];
	for (size_t i = 0; i < k->n_mods; i++) {
		if (strncmp(k->mods[i].dso + 1, name, len) == 0 && k->mods[i].dso[len + 1] == ']') {
			found = i;
			break;
		}
	}
	if (found != none)
		return &k->mods[found];
	m = tr_vec_grow(k->mods, cap, k->n_mods + 1, sizeof(*m), 64);
	if (!m)
		return NULL;
	k->mods = m;
	dso = tr_arena_strndup(arena, name - 1, len + 2); /* with its brackets */
	if (!dso)
		return NULL;
	k->mods[k->n_mods] = (struct tr_kmodule){ .start = UINT64_MAX, .end = 0, .dso = dso };
	return &k->mods[k->n_mods++];
}

struct loading {
	struct tr_kallsyms *k;
	struct tr_arena *arena;
	size_t mods_cap;
	uint32_t seq;
	int nonzero;
};

static int add_line(void *arg, const struct tr_kallsyms_line *l)
{
	struct loading *ld = arg;
	char *copy;

	if (l->type != 't' && l->type != 'T' && l->type != 'w' && l->type != 'W')
		return 0;
	if (l->addr)
		ld->nonzero = 1;
	if (!l->module && l->name_len == 5 && memcmp(l->name, "_text", 5) == 0)
		ld->k->text = l->addr;
	else if (!l->module && l->name_len == 6 && memcmp(l->name, "_etext", 6) == 0)
		ld->k->etext = l->addr;
	copy = tr_arena_strndup(ld->arena, l->name, l->name_len);
	/* The last symbol before a gap (end of the kernel's text, of a
	 * module) is given at most 64 KiB.  Of aliases at one address
	 * the one listed last wins, as in perf: it ends each symbol where
	 * the next begins, so the earlier aliases have no length, and
	 * its first rule prefers a symbol with one (memcpy and
	 * __pi_memcpy: perf says __pi_memcpy). */
	if (!copy || tr_symtab_add_unsized(&ld->k->syms, l->addr, l->addr + 65536, copy, ++ld->seq))
		return -ENOMEM;
	if (l->module) {
		struct tr_kmodule *m = module(ld->k, l->module, l->module_len, &ld->mods_cap,
					      ld->arena);

		if (!m)
			return -ENOMEM;
		if (l->addr < m->start)
			m->start = l->addr;
		if (l->addr >= m->end)
			m->end = l->addr + 1;
	}
	return 0;
}

int tr_kallsyms_load(struct tr_kallsyms *k, const char *path, struct tr_arena *arena)
{
	struct loading ld = { .k = k, .arena = arena };
	int ret = tr_kallsyms_each(path, add_line, &ld);

	if (ret < 0)
		return ret;
	if (!ld.nonzero)
		return -EPERM;
	tr_symtab_finish(&k->syms, 1);
	/* A module's range ends where its last symbol does. */
	for (size_t i = 0; i < k->n_mods; i++) {
		struct tr_sym *last = tr_symtab_find(&k->syms, k->mods[i].end - 1);

		if (last)
			k->mods[i].end = last->start + last->size;
	}
	if (k->n_mods > 1)
		qsort(k->mods, k->n_mods, sizeof(*k->mods), mod_by_start);
	for (size_t i = 0; i + 1 < k->n_mods; i++)
		if (k->mods[i].end > k->mods[i + 1].start)
			k->mods[i].end = k->mods[i + 1].start;
	return 0;
}

const char *tr_kallsyms_dso(const struct tr_kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n_mods;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < k->mods[mid].start)
			hi = mid;
		else if (addr >= k->mods[mid].end)
			lo = mid + 1;
		else
			return k->mods[mid].dso;
	}
	return "[kernel.kallsyms]";
}

void tr_kallsyms_free(struct tr_kallsyms *k)
{
	tr_symtab_free(&k->syms);
	free(k->mods);
	k->mods = NULL;
	k->n_mods = 0;
}

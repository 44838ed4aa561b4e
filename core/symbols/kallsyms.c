/* /proc/kallsyms reader. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"

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
	if (k->n_mods == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct tr_kmodule *m = realloc(k->mods, ncap * sizeof(*m));

		if (!m)
			return NULL;
		k->mods = m;
		*cap = ncap;
	}
	dso = tr_arena_strndup(arena, name - 1, len + 2); /* with its brackets */
	if (!dso)
		return NULL;
	k->mods[k->n_mods] = (struct tr_kmodule){ .start = UINT64_MAX, .end = 0, .dso = dso };
	return &k->mods[k->n_mods++];
}

int tr_kallsyms_load(struct tr_kallsyms *k, const char *path, struct tr_arena *arena)
{
	char *line = NULL;
	size_t cap = 0, mods_cap = 0;
	int ret = 0, nonzero = 0;
	uint32_t seq = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long addr;
		char type, *name, *mod, *end;
		size_t len;

		/* "ffffffff81000000 T _text" or "... t foo\t[ext4]" */
		addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = end[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = end + 3;
		len = strcspn(name, "\t \n");
		mod = name + len;
		if (addr)
			nonzero = 1;
		char *copy = tr_arena_strndup(arena, name, len);
		/* The last symbol before a gap (end of the kernel's text, of a
		 * module) is given at most 64 KiB.  Of aliases at one address
		 * the one listed last wins, as in perf: it ends each symbol where
		 * the next begins, so the earlier aliases have no length, and
		 * its first rule prefers a symbol with one (memcpy and
		 * __pi_memcpy: perf says __pi_memcpy). */
		if (!copy || tr_symtab_add_unsized(&k->syms, addr, addr + 65536, copy, ++seq)) {
			ret = -ENOMEM;
			break;
		}
		while (*mod == '\t' || *mod == ' ')
			mod++;
		if (*mod == '[') {
			size_t mlen = strcspn(mod + 1, "]\n");
			struct tr_kmodule *m = module(k, mod + 1, mlen, &mods_cap, arena);

			if (!m) {
				ret = -ENOMEM;
				break;
			}
			if (addr < m->start)
				m->start = addr;
			if (addr >= m->end)
				m->end = addr + 1;
		}
	}
	free(line);
	fclose(f);
	if (ret < 0)
		return ret;
	if (!nonzero)
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

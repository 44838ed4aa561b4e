/* ReadyToRun symbols: see r2rsym.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/r2r.h"
#include "r2rsym.h"

/* What the runtime appends to a precompiled method's name in its jitdump. */
#define PREJIT "[PreJIT]"

int tr_r2r_symbols(struct tr_elf *e, int fd, struct tr_arena *arena)
{
	struct tr_r2r r;
	char name[TR_R2R_NAME_MAX + 64];
	int ret = tr_r2r_read(fd, TR_R2R_SIGNATURES, &r, NULL, 0);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < r.n_sec && e->n_loads < TR_ELF_MAX_LOADS; i++)
		e->loads[e->n_loads++] = (struct tr_elf_load){ .off = r.sec[i].file_off,
							       .filesz = r.sec[i].file_size,
							       .vaddr = r.sec[i].rva };
	for (size_t i = 0; i < r.n && ret == 0; i++) {
		const struct tr_r2r_method *m = &r.v[i];
		const char *text = m->signature ? m->signature : m->name;
		char *copy;
		int len;

		if (!text || m->end_rva <= m->start_rva)
			continue;
		len = snprintf(name, sizeof(name), "%s" PREJIT, text);
		copy = tr_arena_strndup(arena, name, (size_t)len < sizeof(name) ? (size_t)len
									 : sizeof(name) - 1);
		if (!copy || tr_symtab_add(&e->syms, m->start_rva, m->end_rva - m->start_rva, copy,
					   0) < 0)
			ret = -ENOMEM;
	}
	tr_r2r_free(&r);
	if (ret == 0)
		e->symbols_from = "ReadyToRun";
	return ret;
}

/* Kernel symbols from /proc/kallsyms, modules as "[name]" objects. */
#ifndef TR_SYMBOLS_KALLSYMS_H
#define TR_SYMBOLS_KALLSYMS_H

#include <stdint.h>

#include "symtab.h"

struct tr_kmodule {
	uint64_t start, end;
	const char *dso; /* "[ext4]" */
};

struct tr_kallsyms {
	struct tr_symtab syms;
	struct tr_kmodule *mods;
	size_t n_mods;
	/* _text and _etext, the kernel's own text (0 if not listed): what
	 * perf's kernel map spans. */
	uint64_t text, etext;
};

/* Reads `path` (normally /proc/kallsyms).  -EPERM when every address reads
 * as zero (kptr_restrict hides them). */
int tr_kallsyms_load(struct tr_kallsyms *k, const char *path, struct tr_arena *arena);
/* "[kernel.kallsyms]" or the module's "[name]" for a kernel address. */
const char *tr_kallsyms_dso(const struct tr_kallsyms *k, uint64_t addr);
void tr_kallsyms_free(struct tr_kallsyms *k);

#endif

/* libFuzzer target: the symbolizer's ELF reader (core/symbols/elfsym.c over
 * libelf: PT_LOAD segments, build id, .symtab / .dynsym) and the demangler
 * (core/symbols/demangle.c) its names go through.  A traced process chooses
 * the objects it maps, so both read files it controls.
 *
 * Input: an ELF image, read from memory as the vDSO is. */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/symbols/demangle.h"
#include "core/symbols/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_arena arena = { 0 };
	struct tr_elf e;
	void *image;

	/* libelf may convert a foreign byte order in place: a private copy. */
	image = malloc(size ? size : 1);
	if (!image)
		abort();
	memcpy(image, data, size);
	memset(&e, 0, sizeof(e));
	if (tr_elf_read_memory(&e, image, size, &arena) == 0) {
		assert(e.n_loads <= TR_ELF_MAX_LOADS);
		assert(e.build_id_len <= sizeof(e.build_id));
		tr_symtab_finish(&e.syms, 1);
		for (size_t i = 0; i < e.syms.n; i++) {
			const struct tr_sym *s = &e.syms.syms[i];
			char *d = tr_demangle(s->name);

			free(d);
			(void)tr_symtab_find(&e.syms, s->start);
			(void)tr_elf_vaddr(&e, s->start);
		}
	}
	tr_elf_free(&e);
	tr_arena_free(&arena);
	free(image);
	return 0;
}

/* Symbols of one ELF object (executable, shared library, vDSO) with libelf:
 * .symtab, else a separate debug file's (by build-id, then .gnu_debuglink),
 * else .dynsym; plus the PT_LOAD segments that turn a file offset into the
 * virtual address the symbols use. */
#ifndef TR_SYMBOLS_ELFSYM_H
#define TR_SYMBOLS_ELFSYM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symtab.h"

#define TR_ELF_MAX_LOADS 16

struct tr_elf_load {
	uint64_t off, filesz, vaddr;
};

struct tr_elf {
	struct tr_elf_load loads[TR_ELF_MAX_LOADS];
	size_t n_loads;
	unsigned char build_id[64];
	size_t build_id_len;
	const char *symbols_from; /* "symtab", "debug file", "dynsym" or "none" */
	struct tr_symtab syms;
};

/* Reads the object open on fd.  Separate debug files are searched only in
 * the root of process root_pid (what its maps path means; ours for 0), and
 * used only when their build id, or the CRC its .gnu_debuglink holds,
 * matches.  Names go to arena.  0 or a negative errno (-ENOEXEC: not ELF;
 * -EMFILE or -ENFILE: a debug file could not be opened for want of
 * descriptors, and what e holds is to be freed and read again later;
 * -ESRCH: process root_pid is gone, its root with it, so its debug files
 * could not be looked for: free e, and read the object another way). */
int tr_elf_read(struct tr_elf *e, int fd, pid_t root_pid, const char *path,
		struct tr_arena *arena);
/* The same for an image in memory (the vDSO); image must stay valid only
 * during the call. */
int tr_elf_read_memory(struct tr_elf *e, void *image, size_t size, struct tr_arena *arena);
/* The ELF virtual address of byte `off` of the file. */
uint64_t tr_elf_vaddr(const struct tr_elf *e, uint64_t off);
void tr_elf_free(struct tr_elf *e);

#endif

/* libelf set up once per process (elf_version), for every reader of ELF
 * files in the tree; in libtrelf.la. */
#ifndef TR_LIB_ELFOPEN_H
#define TR_LIB_ELFOPEN_H

#include <libelf.h>

/* 0, or -ENOTSUP when this libelf cannot work with the current ELF
 * version. */
int tr_libelf_ready(void);

/* A read-only (mapped) handle on the file at `fd`, to elf_end(); NULL with
 * *err set: -ENOTSUP as above, -ENOEXEC when libelf cannot read it. */
Elf *tr_elf_open_fd(int fd, int *err);

#endif

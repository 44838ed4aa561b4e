/* GNU build ids (NT_GNU_BUILD_ID), the key perf and debuginfo lookups use
 * to find the exact object a sample hit, whatever path it has on the
 * analysing machine.  Read with libelf: this file is in libtrelf.la, the
 * part of the internal library for those that link libelf. */
#ifndef TR_LIB_BUILDID_H
#define TR_LIB_BUILDID_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/* What perf keeps of an id (SHA-1); it cuts longer ones to this, too. */
#define TR_BUILDID_PERF_MAX 20

/* Each reader stores at most `cap` bytes of the id in `id` (cutting a
 * longer one) and its length in *len, and returns 0, -ENOENT when there is
 * no build id, or another negative errno. */

/* From an ELF handle: note sections when there are section headers, else
 * PT_NOTE segments (stripped objects keep only those). */
int tr_buildid_from_elf(Elf *elf, uint8_t *id, size_t cap, size_t *len);
/* An open file (it stays open; its offset is unused); -ENOEXEC when it is
 * not ELF. */
int tr_buildid_read_fd(int fd, uint8_t *id, size_t cap, size_t *len);
int tr_buildid_read(const char *path, uint8_t *id, size_t cap, size_t *len);
/* A raw block of 4-byte aligned notes (a note section or segment image). */
int tr_buildid_from_notes(const void *notes, size_t size, uint8_t *id, size_t cap,
			  size_t *len);
/* The running kernel's, from /sys/kernel/notes (what perf checks before it
 * trusts /proc/kallsyms for "[kernel.kallsyms]"). */
int tr_buildid_read_kernel(uint8_t *id, size_t cap, size_t *len);

/* An object without a build id names its debug file in .gnu_debuglink:
 * a file name and the CRC-32 of that file's whole content, which is all
 * that tells the right file from any other of that name.  Points *name
 * into elf's data; 0, -ENOENT (no such section) or -EINVAL (malformed, or
 * a name with a '/', which gdb does not follow either). */
int tr_debuglink_from_elf(Elf *elf, const char **name, uint32_t *crc);
/* The CRC-32 (zlib's, gdb's) of the whole file open on fd, read with
 * pread: 0 or -errno. */
int tr_debuglink_crc_fd(int fd, uint32_t *crc);

/* Lower-case hex of an id into `out` (2 * len + 1 bytes). */
void tr_buildid_hex(const uint8_t *id, size_t len, char *out);

#endif

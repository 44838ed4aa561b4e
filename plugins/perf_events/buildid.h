/* GNU build ids (NT_GNU_BUILD_ID), the key perf uses to find the exact
 * object a sample hit, whatever path it has on the analysing machine. */
#ifndef TR_PERF_BUILDID_H
#define TR_PERF_BUILDID_H

#include <stdint.h>

#define BUILDID_MAX 20

/* The build id of the ELF file at `path`: 0, -ENOENT when it has none,
 * -ENOEXEC when it is not ELF, or another negative errno. */
int buildid_read(const char *path, uint8_t id[BUILDID_MAX], uint8_t *size);
/* The same for an open file; `fd` stays open and its offset is unused. */
int buildid_read_fd(int fd, uint8_t id[BUILDID_MAX], uint8_t *size);
/* The running kernel's build id, from /sys/kernel/notes (what perf checks
 * before it trusts /proc/kallsyms for "[kernel.kallsyms]"). */
int buildid_read_kernel(uint8_t id[BUILDID_MAX], uint8_t *size);
/* Lower-case hex of a build id into `out` (2 * size + 1 bytes). */
void buildid_hex(const uint8_t *id, uint8_t size, char *out);

#endif

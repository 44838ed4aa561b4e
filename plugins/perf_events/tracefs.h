/* Where tracefs is mounted, and reading its files (whose st_size is 0). */
#ifndef TR_PERF_TRACEFS_H
#define TR_PERF_TRACEFS_H

#include <stddef.h>

/* "/sys/kernel/tracing", else "/sys/kernel/debug/tracing": the first with
 * a readable events/header_page; NULL when tracefs is not mounted. */
const char *tracefs_root(void);
/* Reads a whole file to EOF into a malloc'd, NUL-terminated buffer (at
 * most 64 MiB).  0 or -errno. */
int tracefs_read(const char *path, char **buf, size_t *len);

#endif

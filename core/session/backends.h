/* The backends tracerig ships and the distribution package of each, for
 * the hint a profile naming a missing one gets ("apt install ...") and the
 * "did you mean" of a misspelt one.  A split install lacks some of them, so
 * this cannot come from the plugins themselves: the build reads the
 * descriptors' `.name` and `.package` in plugins/X/plugin.c into
 * core/session/backends.inc (scripts/backends-index.sh), one place for both. */
#ifndef TR_BACKENDS_H
#define TR_BACKENDS_H

#include <stddef.h>

/* The package of in-tree backend `name`, or NULL for a name tracerig does
 * not ship. */
const char *tr_backend_package(const char *name);

/* The in-tree backend closest to `name` (a typo, a prefix), or NULL. */
const char *tr_backend_closest(const char *name);

#endif

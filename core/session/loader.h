/* Finding and loading plugins with libltdl. */
#ifndef TR_LOADER_H
#define TR_LOADER_H

#include <stddef.h>
#include "tracerig-private/ext.h"

struct tr_loaded {
	const struct tracerig_plugin *plugin;
	char *file; /* what was loaded */
	void *handle;
};

/* Search path: --plugin-dir entries, TRACERIG_PLUGIN_PATH, the build tree
 * when running from it, then the installed plugin directory. */
int tr_loader_init(const char *const *extra_dirs, size_t n_extra);
void tr_loader_exit(void);
size_t tr_loader_path(const char *const **dirs);

/* Loads plugin `name`.  On failure returns -errno and fills `why` with the
 * file, the versions or libltdl's reason, and what to do. */
int tr_loader_load(const char *name, struct tr_loaded *out, char *why, size_t why_len);
void tr_loader_unload(struct tr_loaded *l);

/* Every loadable plugin name along the path, first hit wins.  Returns the
 * count; *names is malloc'd (free each and the array). */
size_t tr_loader_list(char ***names);

#endif

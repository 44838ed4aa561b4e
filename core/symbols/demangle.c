/* Demangling: libiberty's cplus_demangle tries Rust names first (legacy
 * ones overlap with the Itanium scheme), then C++. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#ifdef HAVE_CPLUS_DEMANGLE
#if defined(HAVE_LIBIBERTY_DEMANGLE_H)
#include <libiberty/demangle.h>
#else
#include <demangle.h>
#endif
#endif

#include "demangle.h"

char *tr_demangle(const char *name)
{
#ifdef HAVE_CPLUS_DEMANGLE
	/* Only mangled names: "_Z..." (C++, Rust legacy), "_R..." (Rust v0),
	 * and the "__Z" some toolchains emit. */
	if (name[0] != '_' || !(name[1] == 'Z' || name[1] == 'R' || (name[1] == '_' && name[2] == 'Z')))
		return NULL;
	/* Without parameter lists, as perf shows names by default (its -v adds
	 * them): perf.data.txt must read like `perf script`. */
	return cplus_demangle(name, DMGL_NO_OPTS);
#else
	(void)name;
	return NULL;
#endif
}

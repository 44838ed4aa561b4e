/* C++ (Itanium ABI) and Rust legacy name demangling through libiberty. */
#ifndef TR_SYMBOLS_DEMANGLE_H
#define TR_SYMBOLS_DEMANGLE_H

/* A malloc'ed demangled name, or NULL when `name` is not mangled (or
 * demangling is not available in this build). */
char *tr_demangle(const char *name);

#endif

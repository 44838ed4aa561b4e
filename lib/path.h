/* File names. */
#ifndef TR_LIB_PATH_H
#define TR_LIB_PATH_H

#include <stddef.h>

/* The base name of `path` (what follows its last '/') without the first
 * of `suffixes` (NULL-terminated) that it ends with, into `buf` (cut to
 * len - 1 bytes): "dir/web.trace.zip" with { ".trace.zip", ".zip" } is
 * "web".  A name that is nothing but the suffix keeps it (".zip"). */
void tr_path_stem(const char *path, const char *const *suffixes, char *buf, size_t len);

#endif

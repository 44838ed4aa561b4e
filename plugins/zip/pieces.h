/* An archive entry put together from deflated pieces (the zip packager,
 * and its unit test). */
#ifndef TR_ZIP_PIECES_H
#define TR_ZIP_PIECES_H

#include <zip.h>

#include "tracerig-private/ext.h"

/* A libzip source for the staged file at `path`, which the core deflated
 * while it grew as `sd` says (archive_streamed): [0, from) and [to, end)
 * are deflated now at `level` (the first ending with a sync flush, the
 * second with the final block) around the first comp_size bytes of
 * sd->path, and the CRC-32 is combined.  Its ZIP_SOURCE_STAT says deflate
 * with size, compressed size and CRC, so that zip_close() copies the
 * bytes as they are: add it with the entry's compression left at the
 * default.  Checks first that the file is sd's (dev, inode) and no
 * shorter than sd->to.  With `sd` NULL, the whole file is deflated now
 * (a large entry the core did not follow).  NULL with *why set (a static
 * string) when it cannot: then compress the file the plain way. */
zip_source_t *zp_pieces_source(zip_t *za, int level, const char *path,
			       const struct tracerig_streamed *sd, const char **why);

#endif

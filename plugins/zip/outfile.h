/* The archive's own file as libzip's destination (the zip packager). */
#ifndef TR_ZIP_OUTFILE_H
#define TR_ZIP_OUTFILE_H

#include <zip.h>

/* A libzip source that writes a new archive straight into `fd`, a
 * regular file the caller created and keeps (it is not closed here).
 * Opened with zip_open_from_source(ZIP_CREATE | ZIP_TRUNCATE), zip_close()
 * writes into it in place: no temporary file of libzip's beside it, no
 * rename, and none of the random name libzip would draw for one (its
 * first draw loads and initializes OpenSSL, milliseconds at the stop).
 * Writes are gathered into large ones.  NULL with *err set when it cannot
 * be made. */
zip_source_t *zo_file_source(int fd, zip_error_t *err);

#endif

/* A gzip stream written into a stdio FILE: ISA-L's level 1 where tracerig
 * is built with it, zlib's level 1 otherwise.  pprof readers expect gzip;
 * the .pb.gz entries are written at the end of a session, on the way to
 * the archive, where ISA-L took a .NET server's 1.6 MB profile in a
 * fraction of zlib's 11-14 ms. */
#ifndef TR_GZFILE_H
#define TR_GZFILE_H

#include <stddef.h>
#include <stdio.h>

struct tr_gzfile;

/* NULL when out of memory. */
struct tr_gzfile *tr_gzfile_open(FILE *out);
/* Compresses buf[0..len) into the stream; `last` ends it (header and
 * trailer included).  0 or -EIO (deflating or writing failed). */
int tr_gzfile_write(struct tr_gzfile *g, const void *buf, size_t len, int last);
/* Frees the stream (the FILE stays open), ended or not. */
void tr_gzfile_free(struct tr_gzfile *g);

#endif

/* Raw deflate in pieces that concatenate into one deflate stream.
 *
 * Deflate is a sequence of blocks.  A piece that ends with Z_SYNC_FLUSH
 * ends on a byte boundary with a non-final block (pigz's trick), so
 * independent pieces written one after the other decode as one stream, of
 * the pieces' inputs one after the other; the last piece ends with
 * Z_FINISH (a final block, empty when it has no input).  The CRC-32 of
 * the whole is zlib's crc32_combine() of the pieces'.  A piece may also
 * go on across several sync points (one z_stream, so later input still
 * refers back to earlier input): what it wrote up to any sync point is a
 * piece of its own.
 *
 * Memory: the z_stream (deflateInit2 with windowBits 15, memLevel 8:
 * 2^17 + 2^17 bytes plus about 6 KiB, at any level, as zlib's zconf.h
 * reckons it) and the two buffers below: under 600 KiB per piece being
 * written. */
#ifndef TR_ZPIECE_H
#define TR_ZPIECE_H

#include <stdint.h>
#include <zlib.h>

#define TR_ZPIECE_IN_SIZE (256 * 1024)
#define TR_ZPIECE_OUT_SIZE (64 * 1024)

struct tr_zpiece {
	z_stream zs;
	int out_fd;
	uint64_t in;       /* input bytes taken */
	uint64_t out;      /* output bytes written to out_fd */
	uint32_t crc;      /* CRC-32 of the input taken */
	unsigned char *ibuf, *obuf;
	int started;
};

/* Begins a piece at deflate `level` (1..9) whose output is appended to
 * `out_fd` (written with write(2) at its position).  0 or -ENOMEM. */
int tr_zpiece_begin(struct tr_zpiece *z, int level, int out_fd);
/* Deflates `len` bytes of `in_fd` from offset `off` (pread) into the
 * piece, without flushing.  Returns the bytes taken (fewer at the file's
 * end) or a negative errno (a read or write error). */
int64_t tr_zpiece_feed_fd(struct tr_zpiece *z, int in_fd, uint64_t off, uint64_t len);
/* The same for a buffer.  0 or a negative errno. */
int tr_zpiece_feed(struct tr_zpiece *z, const void *buf, size_t len);
/* Ends what was fed so far: `final` 0 with a sync flush (byte aligned, not
 * final: more pieces may follow, and this one may be fed on), 1 with the
 * final block.  Everything is written to out_fd on return.  0 or a
 * negative errno. */
int tr_zpiece_flush(struct tr_zpiece *z, int final);
/* Frees the piece (whatever state it is in). */
void tr_zpiece_end(struct tr_zpiece *z);

#endif

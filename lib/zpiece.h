/* Raw deflate in pieces that concatenate into one deflate stream.
 *
 * Deflate is a sequence of blocks.  A piece that ends with a sync flush
 * ends on a byte boundary with a non-final block (pigz's trick), so
 * independent pieces written one after the other decode as one stream, of
 * the pieces' inputs one after the other; the last piece ends with
 * the final block (empty when it has no input).  The CRC-32 of the whole
 * is zlib's crc32_combine() of the pieces'.  A piece may also go on
 * across several sync points (one stream, so later input still refers
 * back to earlier input): what it wrote up to any sync point is a piece
 * of its own.  Pieces never refer back into one another, so pieces of
 * either encoder below may follow each other.
 *
 * Two encoders write the same format.  zlib, at its levels 1..9; and,
 * when built with it, Intel's ISA-L (igzip), asked for with
 * TR_ZPIECE_FAST or-ed into the level: its level 1 for 1..6, 2 for 7..8,
 * 3 for 9.  Measured on perf.data and perf.data.txt (docs/PERFORMANCE.md,
 * bench:deflate): ISA-L's level 1 deflates 5 to 10 times faster than
 * zlib's 6, into pieces about a quarter larger; its level 2 made them no
 * smaller.
 *
 * Memory per piece being written: the two buffers below (320 KiB) and
 * zlib's z_stream (deflateInit2 with windowBits 15, memLevel 8: 2^17 +
 * 2^17 bytes plus about 6 KiB, at any level, as zlib's zconf.h reckons
 * it), or ISA-L's isal_zstream (about 80 KiB) and its level buffer
 * (ISAL_DEF_LVLx_DEFAULT: 276, 324 or 340 KiB): under 800 KiB either
 * way. */
#ifndef TR_ZPIECE_H
#define TR_ZPIECE_H

#include <stdint.h>
#include <zlib.h>

#define TR_ZPIECE_IN_SIZE (256 * 1024)
#define TR_ZPIECE_OUT_SIZE (64 * 1024)

/* Or-ed into a level: ISA-L's encoder (see above). */
#define TR_ZPIECE_FAST 0x100

struct isal_zstream;

struct tr_zpiece {
	z_stream zs;                /* zlib's */
	struct isal_zstream *isal;  /* or ISA-L's */
	unsigned char *isal_level_buf;
	int out_fd;
	uint64_t in;       /* input bytes taken */
	uint64_t out;      /* output bytes written to out_fd */
	uint32_t crc;      /* CRC-32 of the input taken */
	unsigned char *ibuf, *obuf;
	int started;
};

/* Whether `level` (1..9, with TR_ZPIECE_FAST or not) is one this build
 * can write: 0 or -EINVAL (out of range), -ENOTSUP (TR_ZPIECE_FAST in a
 * build without ISA-L). */
int tr_zpiece_level_ok(int level);
/* Begins a piece at `level` whose output is appended to `out_fd`
 * (written with write(2) at its position).  0, -EINVAL, -ENOTSUP (see
 * tr_zpiece_level_ok) or -ENOMEM. */
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

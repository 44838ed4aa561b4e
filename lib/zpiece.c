/* Raw deflate in concatenable pieces (see zpiece.h). */
#include "config.h"

#include "fdio.h"
#include "zpiece.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

int tr_zpiece_level_ok(int level)
{
	int plain = level & ~TR_ZPIECE_FAST;

	if (plain < 1 || plain > 9)
		return -EINVAL;
#ifndef HAVE_ISAL
	if (level & TR_ZPIECE_FAST)
		return -ENOTSUP;
#endif
	return 0;
}

#ifdef HAVE_ISAL
/* ISA-L's level for a zlib-like one, and the level buffer it asks for. */
static int isal_begin(struct tr_zpiece *z, int level)
{
	int plain = level & ~TR_ZPIECE_FAST;
	int isal_level = plain <= 6 ? 1 : plain <= 8 ? 2 : 3;
	uint32_t buf_size = isal_level == 1   ? ISAL_DEF_LVL1_DEFAULT
			    : isal_level == 2 ? ISAL_DEF_LVL2_DEFAULT
					      : ISAL_DEF_LVL3_DEFAULT;

	z->isal = malloc(sizeof(*z->isal));
	z->isal_level_buf = malloc(buf_size);
	if (!z->isal || !z->isal_level_buf)
		return -ENOMEM;
	/* Raw deflate (gzip_flag IGZIP_DEFLATE, the default), as a zip
	 * entry holds it. */
	isal_deflate_init(z->isal);
	z->isal->level = (uint32_t)isal_level;
	z->isal->level_buf = z->isal_level_buf;
	z->isal->level_buf_size = buf_size;
	return 0;
}
#endif

int tr_zpiece_begin(struct tr_zpiece *z, int level, int out_fd)
{
	int ret = tr_zpiece_level_ok(level);

	memset(z, 0, sizeof(*z));
	if (ret)
		return ret;
	z->out_fd = out_fd;
	z->crc = (uint32_t)crc32(0, Z_NULL, 0);
	z->ibuf = malloc(TR_ZPIECE_IN_SIZE);
	z->obuf = malloc(TR_ZPIECE_OUT_SIZE);
	ret = z->ibuf && z->obuf ? 0 : -ENOMEM;
#ifdef HAVE_ISAL
	if (!ret && (level & TR_ZPIECE_FAST))
		ret = isal_begin(z, level);
	else
#endif
	/* Raw deflate (negative windowBits): no zlib header or trailer, as
	 * a zip entry holds it. */
	if (!ret && deflateInit2(&z->zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		ret = -ENOMEM;
	if (ret) {
		free(z->isal);
		free(z->isal_level_buf);
		free(z->ibuf);
		free(z->obuf);
		memset(z, 0, sizeof(*z));
		return ret;
	}
	z->started = 1;
	return 0;
}

enum flush { FLUSH_NONE, FLUSH_SYNC, FLUSH_FINAL };

static int write_out(struct tr_zpiece *z, size_t len)
{
	int err = tr_write_all(z->out_fd, z->obuf, len);

	if (!err)
		z->out += len;
	return err;
}

#ifdef HAVE_ISAL
/* Runs ISA-L's deflate over what is in next_in.  Its sync flush happens
 * once all input is taken (and, like zlib's, is done when it leaves room
 * in the buffer); the final block is done at ZSTATE_END. */
static int run_isal(struct tr_zpiece *z, enum flush flush)
{
	struct isal_zstream *s = z->isal;
	int err;

	s->flush = flush == FLUSH_SYNC ? SYNC_FLUSH : NO_FLUSH;
	s->end_of_stream = flush == FLUSH_FINAL;
	for (;;) {
		s->next_out = z->obuf;
		s->avail_out = TR_ZPIECE_OUT_SIZE;
		if (isal_deflate(s) != COMP_OK)
			return -EINVAL;
		err = write_out(z, TR_ZPIECE_OUT_SIZE - s->avail_out);
		if (err)
			return err;
		if (s->avail_in)
			continue;
		if (flush == FLUSH_FINAL ? s->internal_state.state == ZSTATE_END
					 : flush == FLUSH_NONE || s->avail_out)
			return 0;
	}
}
#endif

/* Runs deflate over what is in next_in with `flush`, writing out. */
static int run(struct tr_zpiece *z, enum flush flush)
{
	static const int zflush[] = { Z_NO_FLUSH, Z_SYNC_FLUSH, Z_FINISH };
	int zret, err;

#ifdef HAVE_ISAL
	if (z->isal)
		return run_isal(z, flush);
#endif
	do {
		z->zs.next_out = z->obuf;
		z->zs.avail_out = TR_ZPIECE_OUT_SIZE;
		zret = deflate(&z->zs, zflush[flush]);
		if (zret == Z_STREAM_ERROR)
			return -EINVAL;
		err = write_out(z, TR_ZPIECE_OUT_SIZE - z->zs.avail_out);
		if (err)
			return err;
		/* A flush is complete once deflate leaves room in the buffer. */
	} while (z->zs.avail_in || (flush != FLUSH_NONE && z->zs.avail_out == 0));
	return 0;
}

int tr_zpiece_feed(struct tr_zpiece *z, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (!z->started)
		return -EINVAL;
	while (len) {
		uInt n = len > TR_ZPIECE_IN_SIZE ? TR_ZPIECE_IN_SIZE : (uInt)len;
		int err;

#ifdef HAVE_ISAL
		if (z->isal) {
			/* The same CRC-32 as zlib's, several times faster. */
			z->crc = crc32_gzip_refl(z->crc, p, n);
			z->isal->next_in = (uint8_t *)p;
			z->isal->avail_in = n;
		} else
#endif
		{
			z->crc = (uint32_t)crc32(z->crc, p, n);
			z->zs.next_in = (Bytef *)p;
			z->zs.avail_in = n;
		}
		err = run(z, FLUSH_NONE);
		if (err)
			return err;
		z->in += n;
		p += n;
		len -= n;
	}
	return 0;
}

int64_t tr_zpiece_feed_fd(struct tr_zpiece *z, int in_fd, uint64_t off, uint64_t len)
{
	uint64_t done = 0;

	if (!z->started)
		return -EINVAL;
	while (done < len) {
		size_t want = len - done > TR_ZPIECE_IN_SIZE ? TR_ZPIECE_IN_SIZE
							     : (size_t)(len - done);
		ssize_t n = pread(in_fd, z->ibuf, want, (off_t)(off + done));
		int err;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		err = tr_zpiece_feed(z, z->ibuf, (size_t)n);
		if (err)
			return err;
		done += (uint64_t)n;
	}
	return (int64_t)done;
}

int tr_zpiece_flush(struct tr_zpiece *z, int final)
{
	if (!z->started)
		return -EINVAL;
#ifdef HAVE_ISAL
	if (z->isal) {
		z->isal->next_in = NULL;
		z->isal->avail_in = 0;
	}
#endif
	z->zs.next_in = Z_NULL;
	z->zs.avail_in = 0;
	return run(z, final ? FLUSH_FINAL : FLUSH_SYNC);
}

void tr_zpiece_end(struct tr_zpiece *z)
{
	if (z->started && !z->isal)
		deflateEnd(&z->zs);
	free(z->isal);
	free(z->isal_level_buf);
	free(z->ibuf);
	free(z->obuf);
	z->isal = NULL;
	z->isal_level_buf = z->ibuf = z->obuf = NULL;
	z->started = 0;
}

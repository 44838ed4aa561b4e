/* Raw deflate in concatenable pieces (see zpiece.h). */
#include "zpiece.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int tr_zpiece_begin(struct tr_zpiece *z, int level, int out_fd)
{
	memset(z, 0, sizeof(*z));
	z->out_fd = out_fd;
	z->crc = (uint32_t)crc32(0, Z_NULL, 0);
	z->ibuf = malloc(TR_ZPIECE_IN_SIZE);
	z->obuf = malloc(TR_ZPIECE_OUT_SIZE);
	/* Raw deflate (negative windowBits): no zlib header or trailer, as
	 * a zip entry holds it. */
	if (!z->ibuf || !z->obuf ||
	    deflateInit2(&z->zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(z->ibuf);
		free(z->obuf);
		z->ibuf = z->obuf = NULL;
		return -ENOMEM;
	}
	z->started = 1;
	return 0;
}

/* Runs deflate over what is in zs.next_in with `flush`, writing out. */
static int run(struct tr_zpiece *z, int flush)
{
	int zret, err;

	do {
		z->zs.next_out = z->obuf;
		z->zs.avail_out = TR_ZPIECE_OUT_SIZE;
		zret = deflate(&z->zs, flush);
		if (zret == Z_STREAM_ERROR)
			return -EINVAL;
		err = write_all(z->out_fd, z->obuf, TR_ZPIECE_OUT_SIZE - z->zs.avail_out);
		if (err)
			return err;
		z->out += TR_ZPIECE_OUT_SIZE - z->zs.avail_out;
		/* A flush is complete once deflate leaves room in the buffer. */
	} while (z->zs.avail_in || (flush != Z_NO_FLUSH && z->zs.avail_out == 0));
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

		z->crc = (uint32_t)crc32(z->crc, p, n);
		z->zs.next_in = (Bytef *)p;
		z->zs.avail_in = n;
		err = run(z, Z_NO_FLUSH);
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
	z->zs.next_in = Z_NULL;
	z->zs.avail_in = 0;
	return run(z, final ? Z_FINISH : Z_SYNC_FLUSH);
}

void tr_zpiece_end(struct tr_zpiece *z)
{
	if (z->started)
		deflateEnd(&z->zs);
	free(z->ibuf);
	free(z->obuf);
	z->ibuf = z->obuf = NULL;
	z->started = 0;
}

/* gzip into a FILE (gzfile.h). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include "gzfile.h"

#define OUT_SIZE 65536

struct tr_gzfile {
	FILE *out;
#ifdef HAVE_ISAL
	struct isal_zstream isal;
	uint8_t level_buf[ISAL_DEF_LVL1_DEFAULT];
#else
	z_stream z;
#endif
	uint8_t obuf[OUT_SIZE];
};

struct tr_gzfile *tr_gzfile_open(FILE *out)
{
	struct tr_gzfile *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->out = out;
#ifdef HAVE_ISAL
	isal_deflate_init(&g->isal);
	g->isal.level = 1;
	g->isal.level_buf = g->level_buf;
	g->isal.level_buf_size = sizeof(g->level_buf);
	g->isal.gzip_flag = IGZIP_GZIP;
#else
	/* 15 + 16: a gzip header and trailer.  Level 1: level 6 took three
	 * times as long for files a sixth smaller. */
	if (deflateInit2(&g->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return NULL;
	}
#endif
	return g;
}

static int put(struct tr_gzfile *g, size_t have)
{
	return have && fwrite(g->obuf, 1, have, g->out) != have ? -EIO : 0;
}

#ifdef HAVE_ISAL
static int write_isal(struct tr_gzfile *g, const void *buf, size_t len, int last)
{
	struct isal_zstream *s = &g->isal;

	s->next_in = (uint8_t *)buf;
	s->avail_in = (uint32_t)len;
	s->end_of_stream = last;
	s->flush = NO_FLUSH;
	for (;;) {
		s->next_out = g->obuf;
		s->avail_out = OUT_SIZE;
		if (isal_deflate(s) != COMP_OK || put(g, OUT_SIZE - s->avail_out) < 0)
			return -EIO;
		if (s->avail_in)
			continue;
		if (last ? s->internal_state.state == ZSTATE_END : s->avail_out != 0)
			return 0;
	}
}
#else
/* Deflates what is in next_in with `flush`, writing it out. */
static int run_zlib(struct tr_gzfile *g, int flush)
{
	int ret;

	do {
		g->z.next_out = g->obuf;
		g->z.avail_out = OUT_SIZE;
		ret = deflate(&g->z, flush);
		if (ret == Z_STREAM_ERROR || put(g, OUT_SIZE - g->z.avail_out) < 0)
			return -EIO;
	} while (flush == Z_FINISH ? ret != Z_STREAM_END
				   : g->z.avail_in > 0 || g->z.avail_out == 0);
	return 0;
}
#endif

int tr_gzfile_write(struct tr_gzfile *g, const void *buf, size_t len, int last)
{
	/* Both count input in 32 bits: larger buffers go in parts. */
	while (len > UINT32_MAX) {
#ifdef HAVE_ISAL
		if (write_isal(g, buf, UINT32_MAX, 0) < 0)
			return -EIO;
#else
		g->z.next_in = (Bytef *)buf;
		g->z.avail_in = UINT32_MAX;
		if (run_zlib(g, Z_NO_FLUSH) < 0)
			return -EIO;
#endif
		buf = (const uint8_t *)buf + UINT32_MAX;
		len -= UINT32_MAX;
	}
#ifdef HAVE_ISAL
	return write_isal(g, buf, len, last);
#else
	g->z.next_in = (Bytef *)buf;
	g->z.avail_in = (uInt)len;
	return run_zlib(g, last ? Z_FINISH : Z_NO_FLUSH);
#endif
}

void tr_gzfile_free(struct tr_gzfile *g)
{
	if (!g)
		return;
#ifndef HAVE_ISAL
	deflateEnd(&g->z);
#endif
	free(g);
}

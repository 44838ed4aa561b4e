/* An archive entry put together from deflated pieces (see pieces.h and
 * lib/zpiece.h).  zip_close() (libzip 1.7.3, add_data) copies a source
 * whose stat says it is deflated already, with its size and CRC, as it is:
 * no decompression, no CRC pass, no recompression. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/zpiece.h"
#include "pieces.h"

/* One entry put together from pieces: what zip_close() reads.  `ends`
 * holds the deflated head, then the deflated tail (ending with the final
 * block); the middle is the first mid_len bytes of the core's file. */
struct pieces {
	int ends_fd, mid_fd;
	uint64_t head_len, tail_len, mid_len;
	uint64_t size, comp_size;
	uint32_t crc;
	time_t mtime;
	uint64_t pos;
	zip_error_t error;
};

static void pieces_free(struct pieces *p)
{
	if (p->ends_fd >= 0)
		close(p->ends_fd);
	if (p->mid_fd >= 0)
		close(p->mid_fd);
	zip_error_fini(&p->error);
	free(p);
}

/* Reads comp bytes [pos, pos + len) of the pieces. */
static zip_int64_t pieces_read(struct pieces *p, void *data, zip_uint64_t len)
{
	uint64_t left = p->comp_size - p->pos, at;
	int fd;
	ssize_t n;

	if (len > left)
		len = left;
	if (!len)
		return 0;
	if (p->pos < p->head_len) {
		fd = p->ends_fd;
		at = p->pos;
		if (len > p->head_len - p->pos)
			len = p->head_len - p->pos;
	} else if (p->pos < p->head_len + p->mid_len) {
		fd = p->mid_fd;
		at = p->pos - p->head_len;
		if (len > p->head_len + p->mid_len - p->pos)
			len = p->head_len + p->mid_len - p->pos;
	} else {
		fd = p->ends_fd;
		at = p->pos - p->mid_len;
	}
	do
		n = pread(fd, data, len, (off_t)at);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		/* Short: a piece shorter than it said is an error, not EOF. */
		zip_error_set(&p->error, ZIP_ER_READ, n < 0 ? errno : EIO);
		return -1;
	}
	p->pos += (uint64_t)n;
	return n;
}

static zip_int64_t pieces_cb(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
	struct pieces *p = ud;

	switch (cmd) {
	case ZIP_SOURCE_OPEN:
		p->pos = 0;
		return 0;
	case ZIP_SOURCE_READ:
		return pieces_read(p, data, len);
	case ZIP_SOURCE_CLOSE:
		return 0;
	case ZIP_SOURCE_STAT: {
		zip_stat_t *st = data;

		if (len < sizeof(*st))
			return -1;
		zip_stat_init(st);
		st->size = p->size;
		st->comp_size = p->comp_size;
		st->comp_method = ZIP_CM_DEFLATE;
		st->crc = p->crc;
		st->mtime = p->mtime;
		st->valid |= ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD |
			     ZIP_STAT_CRC | ZIP_STAT_MTIME;
		return sizeof(*st);
	}
	case ZIP_SOURCE_ERROR:
		return zip_error_to_data(&p->error, data, len);
	case ZIP_SOURCE_FREE:
		pieces_free(p);
		return 0;
	case ZIP_SOURCE_SUPPORTS:
		return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ,
						      ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
						      ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
	default:
		zip_error_set(&p->error, ZIP_ER_OPNOTSUPP, 0);
		return -1;
	}
}

/* Deflates [off, off + len) of in_fd (all of it: a short read means the
 * file changed) into the pieces' `ends` file; `final` ends the stream. */
static int deflate_range(int level, int in_fd, uint64_t off, uint64_t len, int out_fd,
			 int final, uint64_t *comp, uint32_t *crc)
{
	struct tr_zpiece zp;
	int64_t n;
	int ret;

	/* No input and no final block: no piece at all (an entry deflated
	 * whole, or streamed from its first byte, has no head). */
	if (!len && !final) {
		*comp = 0;
		*crc = (uint32_t)crc32(0, Z_NULL, 0);
		return 0;
	}
	ret = tr_zpiece_begin(&zp, level, out_fd);
	if (ret < 0)
		return ret;
	n = tr_zpiece_feed_fd(&zp, in_fd, off, len);
	ret = n < 0 ? (int)n : (uint64_t)n != len ? -ESPIPE : tr_zpiece_flush(&zp, final);
	*comp = zp.out;
	*crc = zp.crc;
	tr_zpiece_end(&zp);
	return ret;
}

/* Opens the staged file (into *in_fd), the deflated middle if there is one,
 * and the file for the head and tail; NULL, or why not. */
static const char *open_pieces(struct pieces *p, const char *path,
			       const struct tracerig_streamed *sd, int *in_fd)
{
	char dir[PATH_MAX];
	const char *slash, *beside;

	beside = sd ? sd->path : path;
	slash = strrchr(beside, '/');
	if (!slash || (size_t)(slash - beside) >= sizeof(dir))
		return "bad file name";
	memcpy(dir, beside, (size_t)(slash - beside));
	dir[slash - beside] = '\0';
	/* O_NONBLOCK: a FIFO put in its place must not hang the packaging. */
	*in_fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (sd)
		p->mid_fd = open(sd->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	/* The head and tail next to the middle (or the file); unnamed, gone
	 * when closed. */
	p->ends_fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (*in_fd < 0 || (sd && p->mid_fd < 0) || p->ends_fd < 0)
		return strerror(errno);
	return NULL;
}

/* Checks the staged file is still the one the middle was deflated from
 * (without a middle, *sd becomes the whole file) and takes its size and
 * mtime; NULL, or why not. */
static const char *check_staged(struct pieces *p, int in_fd, const struct tracerig_streamed **sd)
{
	static const struct tracerig_streamed whole = { .path = NULL };
	struct stat st, ms = { .st_size = 0 };

	if (fstat(in_fd, &st) < 0 || (*sd && fstat(p->mid_fd, &ms) < 0))
		return strerror(errno);
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (!*sd)
		*sd = &whole;
	else if ((uint64_t)st.st_dev != (*sd)->dev || (uint64_t)st.st_ino != (*sd)->ino)
		return "the staged file was replaced";
	if ((uint64_t)st.st_size < (*sd)->to || (*sd)->from > (*sd)->to)
		return "the staged file shrank";
	if ((uint64_t)ms.st_size < (*sd)->comp_size)
		return "the deflated part is short";
	p->size = (uint64_t)st.st_size;
	p->mtime = st.st_mtime;
	return NULL;
}

/* Deflates the head and tail around the middle and works out the entry's
 * CRC and deflated size; 0 or -errno. */
static int deflate_ends(struct pieces *p, int level, int in_fd, const struct tracerig_streamed *sd)
{
	uint32_t head_crc, tail_crc;
	int ret;

	p->mid_len = sd->comp_size;
	ret = deflate_range(level, in_fd, 0, sd->from, p->ends_fd, 0, &p->head_len, &head_crc);
	if (!ret)
		ret = deflate_range(level, in_fd, sd->to, p->size - sd->to, p->ends_fd, 1,
				    &p->tail_len, &tail_crc);
	if (ret < 0)
		return ret;
	p->crc = (uint32_t)crc32_combine(head_crc, sd->crc, (z_off_t)(sd->to - sd->from));
	p->crc = (uint32_t)crc32_combine(p->crc, tail_crc, (z_off_t)(p->size - sd->to));
	p->comp_size = p->head_len + p->mid_len + p->tail_len;
	return 0;
}

zip_source_t *zp_pieces_source(zip_t *za, int level, const char *path,
			       const struct tracerig_streamed *sd, const char **why)
{
	struct pieces *p = calloc(1, sizeof(*p));
	const char *err;
	zip_source_t *src;
	int in_fd = -1, ret;

	*why = "out of memory";
	if (!p)
		return NULL;
	zip_error_init(&p->error);
	p->ends_fd = p->mid_fd = -1;
	err = open_pieces(p, path, sd, &in_fd);
	if (!err)
		err = check_staged(p, in_fd, &sd);
	if (err) {
		*why = err;
		goto fail;
	}
	ret = deflate_ends(p, level, in_fd, sd);
	if (ret < 0) {
		*why = strerror(-ret);
		goto fail;
	}
	close(in_fd);
	src = zip_source_function(za, pieces_cb, p);
	if (!src) {
		*why = zip_strerror(za);
		pieces_free(p);
	}
	return src;
fail:
	if (in_fd >= 0)
		close(in_fd);
	pieces_free(p);
	return NULL;
}

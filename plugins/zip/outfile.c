/* zip_close() writes a file archive through a temporary file it names
 * with zip_secure_random() and renames over the target (libzip 1.7.3,
 * zip_source_file_common.c).  The core hands the packager a temporary
 * file of its own already (O_EXCL, 0600, renamed into place once
 * written), so libzip's second temporary file only costs: the random
 * draw initializes OpenSSL (loading its configuration and providers),
 * and the extra rename.  This source writes into the core's file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "outfile.h"

#define GATHER (256 * 1024)

struct outfile {
	int fd;
	zip_error_t err;
	zip_uint64_t pos;  /* where libzip writes next */
	zip_uint64_t size; /* the file's length so far, gathered bytes included */
	unsigned char *buf;
	size_t buffered;   /* bytes in buf, for the file at pos - buffered */
};

static int drain(struct outfile *o)
{
	int ret;

	if (!o->buffered)
		return 0;
	ret = tr_pwrite_all(o->fd, o->buf, o->buffered, (off_t)(o->pos - o->buffered));
	if (ret < 0) {
		zip_error_set(&o->err, ZIP_ER_WRITE, -ret);
		return -1;
	}
	o->buffered = 0;
	return 0;
}

static zip_int64_t put(struct outfile *o, const void *data, zip_uint64_t len)
{
	if (o->buffered + len > GATHER && drain(o) < 0)
		return -1;
	if (len >= GATHER) {
		int ret = tr_pwrite_all(o->fd, data, len, (off_t)o->pos);

		if (ret < 0) {
			zip_error_set(&o->err, ZIP_ER_WRITE, -ret);
			return -1;
		}
	} else {
		memcpy(o->buf + o->buffered, data, len);
		o->buffered += len;
	}
	o->pos += len;
	if (o->pos > o->size)
		o->size = o->pos;
	return (zip_int64_t)len;
}

static zip_int64_t truncate_to_zero(struct outfile *o)
{
	o->pos = o->size = 0;
	o->buffered = 0;
	if (ftruncate(o->fd, 0) < 0) {
		zip_error_set(&o->err, ZIP_ER_WRITE, errno);
		return -1;
	}
	return 0;
}

static zip_int64_t outfile_cb(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
	struct outfile *o = ud;

	switch (cmd) {
	case ZIP_SOURCE_SUPPORTS:
		/* Seekable is what zip_open_from_source asks of any source;
		 * a new archive is never read. */
		return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ,
						      ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
						      ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL,
						      ZIP_SOURCE_SUPPORTS,
						      ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE,
						      ZIP_SOURCE_BEGIN_WRITE, ZIP_SOURCE_WRITE,
						      ZIP_SOURCE_COMMIT_WRITE,
						      ZIP_SOURCE_ROLLBACK_WRITE, ZIP_SOURCE_SEEK_WRITE,
						      ZIP_SOURCE_TELL_WRITE, ZIP_SOURCE_REMOVE, -1);
	case ZIP_SOURCE_STAT:
		/* "Not there": zip_open_from_source makes a new archive. */
		zip_error_set(&o->err, ZIP_ER_READ, ENOENT);
		return -1;
	case ZIP_SOURCE_OPEN:
	case ZIP_SOURCE_READ:
	case ZIP_SOURCE_SEEK:
	case ZIP_SOURCE_TELL:
		zip_error_set(&o->err, ZIP_ER_OPNOTSUPP, 0);
		return -1;
	case ZIP_SOURCE_CLOSE:
		return 0;
	case ZIP_SOURCE_ERROR:
		return zip_error_to_data(&o->err, data, len);
	case ZIP_SOURCE_BEGIN_WRITE:
	case ZIP_SOURCE_ROLLBACK_WRITE:
	case ZIP_SOURCE_REMOVE:
		return truncate_to_zero(o);
	case ZIP_SOURCE_WRITE:
		return put(o, data, len);
	case ZIP_SOURCE_TELL_WRITE:
		return (zip_int64_t)o->pos;
	case ZIP_SOURCE_SEEK_WRITE: {
		zip_int64_t to = zip_source_seek_compute_offset(o->pos, o->size, data, len,
								&o->err);

		if (to < 0 || drain(o) < 0)
			return -1;
		o->pos = (zip_uint64_t)to;
		return 0;
	}
	case ZIP_SOURCE_COMMIT_WRITE:
		return drain(o);
	case ZIP_SOURCE_FREE:
		zip_error_fini(&o->err);
		free(o->buf);
		free(o);
		return 0;
	default:
		zip_error_set(&o->err, ZIP_ER_OPNOTSUPP, 0);
		return -1;
	}
}

zip_source_t *zo_file_source(int fd, zip_error_t *err)
{
	struct outfile *o = calloc(1, sizeof(*o));
	zip_source_t *src;

	if (o)
		o->buf = malloc(GATHER);
	if (!o || !o->buf) {
		if (o)
			free(o);
		zip_error_set(err, ZIP_ER_MEMORY, 0);
		return NULL;
	}
	o->fd = fd;
	zip_error_init(&o->err);
	src = zip_source_function_create(outfile_cb, o, err);
	if (!src) {
		free(o->buf);
		free(o);
	}
	return src;
}

#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/vec.h"
#include "lines.h"

struct rp_lines {
	struct rp_archive *ar;
	zip_file_t *zf;
	uint64_t inflated; /* bytes read so far, held to ar->max_size */
	char *entry;     /* for the warning */
	const char *who; /* the command, for the warning */
	char buf[65536];
	size_t pos, len;
	int eof;
	char *line;
	size_t cap;
	uint64_t skipped; /* lines longer than RP_LINE_MAX */
};

static int lines_open(struct rp_archive *ar, const char *entry, struct rp_lines **out)
{
	struct rp_lines *r;
	uint64_t size;
	int err = 0;

	if (!rp_archive_has(ar, entry))
		return -ENOENT;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->ar = ar;
	r->who = ar->who ? ar->who : "report";
	r->entry = strdup(entry);
	if (!r->entry) {
		free(r);
		return -ENOMEM;
	}
	r->zf = rp_archive_fopen(ar, entry, &size, &err);
	if (!r->zf) {
		free(r->entry);
		free(r);
		return err < 0 ? err : -EIO;
	}
	*out = r;
	return 0;
}

/* More of the entry in buf when all of it was used: 1 when there is some
 * to read, 0 at the end, -EIO or -EFBIG. */
static int lines_fill(struct rp_lines *r)
{
	zip_int64_t got;

	if (r->pos < r->len)
		return 1;
	if (r->eof)
		return 0;
	got = zip_fread(r->zf, r->buf, sizeof(r->buf));
	if (got < 0) {
		rp_archive_set_zip_error(r->ar, r->entry, zip_file_get_error(r->zf));
		return -EIO;
	}
	/* The stated size was checked: this is for one that lies. */
	r->inflated += (uint64_t)got;
	if (r->inflated > r->ar->max_size) {
		rp_archive_set_too_big(r->ar, r->entry, 0);
		return -EFBIG;
	}
	if (got == 0) {
		r->eof = 1;
		return 0;
	}
	r->pos = 0;
	r->len = (size_t)got;
	return 1;
}

/* 1 with *line set, 0 at the end, -EIO, -EFBIG or -ENOMEM. */
static int lines_next(struct rp_lines *r, char **line)
{
	size_t n = 0;
	int too_long = 0, ret;

	while ((ret = lines_fill(r)) > 0) {
		char *nl = memchr(r->buf + r->pos, '\n', r->len - r->pos), *grown;
		size_t chunk = (nl ? (size_t)(nl - r->buf) : r->len) - r->pos;

		if (too_long || n + chunk > RP_LINE_MAX) {
			/* Read on to its end without keeping it. */
			too_long = 1;
			r->pos += chunk;
			if (nl) {
				r->pos++;
				r->skipped++;
				too_long = 0;
				n = 0;
			}
			continue;
		}
		grown = tr_vec_grow(r->line, &r->cap, n + chunk + 1, 1, 256);
		if (!grown)
			return -ENOMEM;
		r->line = grown;
		memcpy(r->line + n, r->buf + r->pos, chunk);
		n += chunk;
		r->pos += chunk;
		if (nl) {
			r->pos++;
			break;
		}
	}
	if (ret < 0)
		return ret;
	/* At the end: a last line without its newline is a line. */
	if (ret == 0) {
		if (too_long)
			r->skipped++;
		if (n == 0 || too_long)
			return 0;
	}
	r->line[n] = '\0';
	if (n && r->line[n - 1] == '\r')
		r->line[n - 1] = '\0';
	*line = r->line;
	return 1;
}

static void lines_close(struct rp_lines *r)
{
	if (r->skipped)
		fprintf(stderr, "tracerig: %s: %s: %" PRIu64 " line(s) longer than %u MiB "
			"skipped (tracerig never writes such lines: the archive was altered)\n",
			r->who, r->entry, r->skipped, RP_LINE_MAX >> 20);
	zip_fclose(r->zf);
	free(r->entry);
	free(r->line);
	free(r);
}

int rp_lines_each(struct rp_archive *ar, const char *entry,
		  int (*each)(void *arg, char *line), void *arg)
{
	struct rp_lines *r;
	char *line;
	int ret;

	ret = lines_open(ar, entry, &r);
	if (ret < 0)
		return ret;
	while ((ret = lines_next(r, &line)) > 0) {
		ret = each(arg, line);
		if (ret < 0)
			break;
	}
	lines_close(r);
	return ret;
}

/* Lines of an archive entry, read as they inflate. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zipline.h"

int tr_zipline_open(struct tr_zipline *r, zip_t *za, const char *name)
{
	memset(r, 0, sizeof(*r));
	if (zip_name_locate(za, name, 0) < 0)
		return -ENOENT;
	r->zf = zip_fopen(za, name, 0);
	return r->zf ? 0 : -EIO;
}

int tr_zipline_next(struct tr_zipline *r)
{
	size_t n = 0;
	int too_long = 0;

	for (;;) {
		char *nl;
		size_t chunk;

		if (r->pos == r->len) {
			zip_int64_t got;

			if (r->eof)
				break;
			got = zip_fread(r->zf, r->buf, sizeof(r->buf));
			if (got < 0)
				return -EIO;
			if (got == 0) {
				r->eof = 1;
				break;
			}
			r->pos = 0;
			r->len = (size_t)got;
		}
		nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
		chunk = (nl ? (size_t)(nl - r->buf) : r->len) - r->pos;
		if (too_long || n + chunk > TR_ZIPLINE_MAX) {
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
		if (n + chunk + 1 > r->cap) {
			size_t ncap = (n + chunk + 1) * 2;
			char *grown = realloc(r->line, ncap);

			if (!grown)
				return -ENOMEM;
			r->line = grown;
			r->cap = ncap;
		}
		memcpy(r->line + n, r->buf + r->pos, chunk);
		n += chunk;
		r->pos += chunk;
		if (nl) {
			r->pos++;
			r->line[n] = '\0';
			goto done;
		}
	}
	if (too_long)
		r->skipped++;
	if (n == 0 || too_long)
		return 0;
	r->line[n] = '\0';
done:
	if (n && r->line[n - 1] == '\r')
		r->line[n - 1] = '\0';
	return 1;
}

void tr_zipline_warn_skipped(const struct tr_zipline *r, const char *who, const char *entry)
{
	if (r->skipped)
		fprintf(stderr, "tracerig: %s: %s: %" PRIu64 " line(s) longer than %u MiB "
			"skipped (tracerig never writes such lines: the archive was altered)\n",
			who, entry, r->skipped, TR_ZIPLINE_MAX >> 20);
}

void tr_zipline_close(struct tr_zipline *r)
{
	if (r->zf)
		zip_fclose(r->zf);
	free(r->line);
	memset(r, 0, sizeof(*r));
}

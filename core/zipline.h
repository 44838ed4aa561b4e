/* Lines of an archive entry, read as they inflate: perf.data.txt can be
 * far bigger than memory should hold at once. */
#ifndef TR_ZIPLINE_H
#define TR_ZIPLINE_H

#include <stdint.h>
#include <zip.h>

/* Longer lines are skipped: a small archive can hold a huge compressed
 * line, and no real frame list comes near this. */
#define TR_ZIPLINE_MAX (16u << 20)

struct tr_zipline {
	zip_file_t *zf;
	char buf[65536];
	size_t pos, len;
	int eof;
	char *line;
	size_t cap;
	uint64_t skipped; /* lines longer than TR_ZIPLINE_MAX */
};

/* Opens entry `name`; 0 or a negative errno (-ENOENT: no such entry). */
int tr_zipline_open(struct tr_zipline *r, zip_t *za, const char *name);
/* 1 with r->line set (no newline), 0 at the end, negative errno on error. */
int tr_zipline_next(struct tr_zipline *r);
/* Says on stderr how many lines were skipped, if any. */
void tr_zipline_warn_skipped(const struct tr_zipline *r, const char *who, const char *entry);
void tr_zipline_close(struct tr_zipline *r);

#endif

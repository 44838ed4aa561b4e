#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "lib/sanitize.h"
#include "textbuf.h"

int textbuf_init(struct textbuf *b, FILE *out, size_t cap)
{
	*b = (struct textbuf){ .out = out };
	b->p = malloc(cap);
	if (!b->p)
		return b->err = -ENOMEM;
	b->cap = cap;
	return 0;
}

static void write_out(struct textbuf *b, const void *s, size_t n)
{
	if (!b->err && n && fwrite_unlocked(s, 1, n, b->out) != n)
		b->err = -EIO;
}

int textbuf_flush(struct textbuf *b)
{
	write_out(b, b->p, b->len);
	b->len = 0;
	return b->err;
}

int textbuf_fini(struct textbuf *b)
{
	int ret = textbuf_flush(b);

	free(b->p);
	b->p = NULL;
	b->cap = 0;
	return ret;
}

char *textbuf_make_room(struct textbuf *b, size_t n)
{
	if (textbuf_flush(b) < 0 || n > b->cap)
		return NULL;
	return b->p;
}

void textbuf_put_long(struct textbuf *b, const void *s, size_t n)
{
	char *room = textbuf_room(b, n);

	if (room) {
		memcpy(room, s, n);
		b->len += n;
		return;
	}
	if (textbuf_flush(b) == 0)
		write_out(b, s, n);
}

void textbuf_put_sanitized(struct textbuf *b, const char *s)
{
	size_t len = strlen(s);
	char *room = textbuf_room(b, len + 1);

	if (room) {
		b->len += tr_sanitize_name(room, len + 1, s);
		return;
	}
	if (textbuf_flush(b) == 0 && tr_sanitize_fputs(s, b->out) == EOF)
		b->err = -EIO;
}

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

static size_t digits10(uint64_t v)
{
	size_t n = 1;

	for (;;) {
		if (v < 10)
			return n;
		if (v < 100)
			return n + 1;
		if (v < 1000)
			return n + 2;
		if (v < 10000)
			return n + 3;
		v /= 10000;
		n += 4;
	}
}

/* v's decimal digits ending just before `end`, two at a time. */
static void dec_before(char *end, uint64_t v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";

	while (v >= 100) {
		end -= 2;
		memcpy(end, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, pairs + 2 * v, 2);
	} else {
		end[-1] = (char)('0' + v);
	}
}

size_t textbuf_format_dec(char *dst, uint64_t v)
{
	size_t n = digits10(v);

	dec_before(dst + n, v);
	return n;
}

void textbuf_dec(struct textbuf *b, uint64_t v, int width, int left, char pad)
{
	size_t n = digits10(v), w = width > (int)n ? (size_t)width : n;
	char *room = textbuf_room(b, w);

	if (!room)
		return;
	if (left) {
		dec_before(room + n, v);
		for (size_t i = n; i < w; i++)
			room[i] = ' ';
	} else {
		for (size_t i = 0; i < w - n; i++)
			room[i] = pad;
		dec_before(room + w, v);
	}
	b->len += w;
}

void textbuf_int(struct textbuf *b, int v, int width, int left)
{
	if (v < 0) {
		/* The sign leads, before any padding (as this text always had it). */
		textbuf_putc(b, '-');
		textbuf_dec(b, (uint64_t)-(int64_t)v, width - 1, left, ' ');
	} else {
		textbuf_dec(b, (uint64_t)v, width, left, ' ');
	}
}

void textbuf_format_hex16(char *dst, uint64_t v)
{
	static const char xdigits[] = "0123456789abcdef";
	int n = 0;

	/* Right-aligned: written from the right, spaces in front. */
	do {
		dst[15 - n++] = xdigits[v & 15];
		v >>= 4;
	} while (v);
	while (n < 16)
		dst[15 - n++] = ' ';
}

void textbuf_hex16(struct textbuf *b, uint64_t v)
{
	char *room = textbuf_room(b, 16);

	if (!room)
		return;
	textbuf_format_hex16(room, v);
	b->len += 16;
}

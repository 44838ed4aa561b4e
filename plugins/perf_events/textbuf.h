/* Text written to a FILE in big blocks.  perf.data.txt is millions of
 * short pieces (numbers, frame lines): put in a buffer of our own with
 * plain stores and handed to stdio a block at a time, they cost a copy
 * each rather than a stdio call each. */
#ifndef TR_PERF_TEXTBUF_H
#define TR_PERF_TEXTBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct textbuf {
	FILE *out;
	char *p;
	size_t len, cap;
	int err; /* 0, or the first -errno: later writes are dropped */
};

/* 0 or -ENOMEM. */
int textbuf_init(struct textbuf *b, FILE *out, size_t cap);
/* Hands what is buffered to the FILE (it still has to be flushed there).
 * 0 or the first error of any write so far. */
int textbuf_flush(struct textbuf *b);
/* Flushes and frees the buffer: 0 or the first error. */
int textbuf_fini(struct textbuf *b);
/* The slow path of textbuf_room: flushes to make the room. */
char *textbuf_make_room(struct textbuf *b, size_t n);
/* Any length, passing big ones straight to the FILE. */
void textbuf_put_long(struct textbuf *b, const void *s, size_t n);
/* Names and text from the traced program under the sanitize rule
 * (lib/sanitize.h), which keeps the length. */
void textbuf_put_sanitized(struct textbuf *b, const char *s);

/* Room for n more bytes at b->p + b->len (the caller adds what it used to
 * b->len), or NULL when n is more than the buffer holds or the FILE failed. */
static inline char *textbuf_room(struct textbuf *b, size_t n)
{
	return n <= b->cap - b->len ? b->p + b->len : textbuf_make_room(b, n);
}

static inline void textbuf_put(struct textbuf *b, const void *s, size_t n)
{
	char *room = textbuf_room(b, n);

	if (room) {
		memcpy(room, s, n);
		b->len += n;
	} else {
		textbuf_put_long(b, s, n);
	}
}

static inline void textbuf_putc(struct textbuf *b, char c)
{
	char *room = textbuf_room(b, 1);

	if (room) {
		*room = c;
		b->len++;
	}
}

/* ---- numbers, formatted at p (with room for them); each returns the end */

static inline size_t fmt_digits10(uint64_t v)
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
static inline void fmt_digits_before(char *end, uint64_t v)
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

/* Unsigned decimal right-aligned in `width` with `pad` in front, or
 * left-aligned (`left`) with spaces after: at most 20 bytes or `width`. */
static inline char *fmt_dec(char *p, uint64_t v, int width, int left, char pad)
{
	size_t n = fmt_digits10(v), w = width > (int)n ? (size_t)width : n;

	if (left) {
		fmt_digits_before(p + n, v);
		for (size_t i = n; i < w; i++)
			p[i] = ' ';
	} else {
		for (size_t i = 0; i < w - n; i++)
			p[i] = pad;
		fmt_digits_before(p + w, v);
	}
	return p + w;
}

/* Signed, as printf's %5d and %-5d: right-aligned, the padding goes before
 * the sign ("   -1"), as perf writes it.  PerfView's parser reads a '-'
 * only when a digit follows it: "-   1" (the sign first, which this text
 * once wrote for the PID -1 of samples taken in do_exit) made it take the
 * TID for the time and fail on the whole file. */
static inline char *fmt_int(char *p, int v, int width, int left)
{
	uint64_t mag;
	size_t n, w;

	if (v >= 0)
		return fmt_dec(p, (uint64_t)v, width, left, ' ');
	mag = (uint64_t)-(int64_t)v;
	if (left) {
		*p++ = '-';
		return fmt_dec(p, mag, width - 1, 1, ' ');
	}
	n = fmt_digits10(mag) + 1;
	w = width > (int)n ? (size_t)width : n;
	for (size_t i = 0; i < w - n; i++)
		*p++ = ' ';
	*p++ = '-';
	return fmt_dec(p, mag, 0, 0, ' ');
}

/* As printf's "%16llx". */
static inline char *fmt_hex16(char *p, uint64_t v)
{
	static const char xdigits[] = "0123456789abcdef";
	int n = 0;

	/* Right-aligned: written from the right, spaces in front. */
	do {
		p[15 - n++] = xdigits[v & 15];
		v >>= 4;
	} while (v);
	while (n < 16)
		p[15 - n++] = ' ';
	return p + 16;
}

#endif

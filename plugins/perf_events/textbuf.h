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
/* Unsigned decimal right-aligned in `width` with `pad` in front, or
 * left-aligned (`left`) with spaces after. */
void textbuf_dec(struct textbuf *b, uint64_t v, int width, int left, char pad);
/* Signed, as printf's %5d and %-5d. */
void textbuf_int(struct textbuf *b, int v, int width, int left);
/* As printf's "%16llx". */
void textbuf_hex16(struct textbuf *b, uint64_t v);
/* The same formats into memory: v's decimal digits at dst (room for 20),
 * returning how many; v as "%16llx" in dst[0..16). */
size_t textbuf_format_dec(char *dst, uint64_t v);
void textbuf_format_hex16(char *dst, uint64_t v);

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

static inline void textbuf_puts(struct textbuf *b, const char *s)
{
	textbuf_put(b, s, strlen(s));
}

#endif

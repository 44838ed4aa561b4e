/* The one rule for text from traced processes (see sanitize.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sanitize.h"

/* Length of the valid, printable UTF-8 sequence at s (1-4), or 0 for a byte
 * that must be replaced.  Overlong forms, surrogates and code points past
 * U+10FFFF are invalid; U+0080-U+009F are C1 controls. */
static size_t ok_len(const unsigned char *s, int keep_semicolon)
{
	unsigned c = s[0];

	if (c < 0x20 || c == 0x7f || (c == ';' && !keep_semicolon))
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		if ((s[1] & 0xc0) != 0x80)
			return 0;
		return c == 0xc2 && s[1] < 0xa0 ? 0 : 2; /* C1 controls */
	}
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))
			return 0; /* overlong, surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

/* Printable ASCII that stays as it is: nearly every byte of every name,
 * decided without a call. */
static int plain_byte(unsigned c, int keep_semicolon)
{
	return c >= 0x20 && c < 0x7f && (c != ';' || keep_semicolon);
}

static char replacement(unsigned char c)
{
	return c == ';' ? ':' : '?';
}

static size_t sanitize(char *dst, size_t size, const char *src, int keep_semicolon)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t pos = 0;

	if (!size)
		return 0;
	while (*s) {
		size_t n;

		if (plain_byte(*s, keep_semicolon)) {
			if (pos + 1 >= size)
				break;
			dst[pos++] = (char)*s++;
			continue;
		}
		n = ok_len(s, keep_semicolon);
		if (n == 0) {
			if (pos + 1 >= size)
				break;
			dst[pos++] = replacement(*s++);
			continue;
		}
		if (pos + n >= size)
			break;
		/* memmove: in place, dst never runs ahead of src. */
		memmove(dst + pos, s, n);
		pos += n;
		s += n;
	}
	dst[pos] = '\0';
	return pos;
}

size_t tr_sanitize_name(char *dst, size_t size, const char *src)
{
	return sanitize(dst, size, src, 0);
}

size_t tr_sanitize_text(char *dst, size_t size, const char *src)
{
	return sanitize(dst, size, src, 1);
}

int tr_name_needs_sanitizing(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = plain_byte(*p, 0) ? 1 : ok_len(p, 0);

		if (n == 0)
			return 1;
		p += n;
	}
	return 0;
}

int tr_sanitize_fputs(const char *s, FILE *f)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = ok_len(p, 0);

		if (n == 0) {
			if (putc_unlocked(replacement(*p), f) == EOF)
				return EOF;
			p++;
			continue;
		}
		/* Runs of clean text go out in one call. */
		{
			const unsigned char *start = p;

			while (*p && (n = ok_len(p, 0)) != 0)
				p += n;
			if (fwrite_unlocked(start, 1, (size_t)(p - start), f) != (size_t)(p - start))
				return EOF;
		}
	}
	return 0;
}

#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"
#include "lib/vec.h"

#define MAX_DEPTH 64

struct jparser {
	const char *p, *end;
	int depth;
};

void tr_jv_free(struct tr_jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		tr_jv_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->string);
	memset(v, 0, sizeof(*v));
}

static void jskip(struct jparser *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' ||
				   *jp->p == '\r'))
		jp->p++;
}

static int jlit(struct jparser *jp, const char *word)
{
	size_t len = strlen(word);

	if ((size_t)(jp->end - jp->p) < len || memcmp(jp->p, word, len) != 0)
		return -EINVAL;
	jp->p += len;
	return 0;
}

static void put_utf8(char **o, unsigned int c)
{
	if (c < 0x80) {
		*(*o)++ = (char)c;
	} else if (c < 0x800) {
		*(*o)++ = (char)(0xc0 | (c >> 6));
		*(*o)++ = (char)(0x80 | (c & 0x3f));
	} else {
		*(*o)++ = (char)(0xe0 | (c >> 12));
		*(*o)++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*(*o)++ = (char)(0x80 | (c & 0x3f));
	}
}

static int jstring(struct jparser *jp, char **out)
{
	const char *start = ++jp->p; /* after the quote */
	char *s, *o;

	while (jp->p < jp->end && *jp->p != '"') {
		if (*jp->p == '\\')
			jp->p++;
		jp->p++;
	}
	if (jp->p >= jp->end)
		return -EINVAL;
	/* Escapes only shrink: the raw length is enough. */
	s = o = malloc((size_t)(jp->p - start) + 1);
	if (!s)
		return -ENOMEM;
	for (const char *c = start; c < jp->p; c++) {
		unsigned int u = 0;

		if (*c != '\\') {
			*o++ = *c;
			continue;
		}
		switch (*++c) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			for (int i = 0; i < 4; i++) {
				if (++c >= jp->p || !isxdigit((unsigned char)*c))
					goto bad;
				u = u * 16 + (unsigned int)(isdigit((unsigned char)*c)
							    ? *c - '0'
							    : (tolower((unsigned char)*c) - 'a' + 10));
			}
			put_utf8(&o, u ? u : '?'); /* surrogates are kept as is */
			break;
		default: /* \" \\ \/ */
			*o++ = *c;
		}
	}
	*o = '\0';
	jp->p++;
	*out = s;
	return 0;
bad:
	free(s);
	return -EINVAL;
}

static int jvalue(struct jparser *jp, struct tr_jv *v);

/* An object member's `"key":`, the key in *key (free() it). */
static int jmember_key(struct jparser *jp, char **key)
{
	int ret;

	if (jp->p >= jp->end || *jp->p != '"')
		return -EINVAL;
	ret = jstring(jp, key);
	if (ret < 0)
		return ret;
	jskip(jp);
	if (jp->p >= jp->end || *jp->p != ':') {
		free(*key);
		*key = NULL;
		return -EINVAL;
	}
	jp->p++;
	return 0;
}

/* A new zeroed item at the end of v (its key the object's from now on):
 * NULL when out of memory, the key then freed. */
static struct tr_jv *jappend(struct tr_jv *v, char *key, int object, size_t *items_cap,
			     size_t *keys_cap)
{
	if (v->n == *items_cap) {
		struct tr_jv *items = tr_vec_grow(v->items, items_cap, v->n + 1, sizeof(*items), 8);
		char **keys = NULL;

		if (items) {
			v->items = items;
			if (object)
				keys = tr_vec_grow(v->keys, keys_cap, v->n + 1, sizeof(*keys), 8);
			if (keys)
				v->keys = keys;
		}
		if (!items || (object && !keys)) {
			free(key);
			return NULL;
		}
	}
	memset(&v->items[v->n], 0, sizeof(v->items[v->n]));
	if (object)
		v->keys[v->n] = key;
	return &v->items[v->n++];
}

static int jcontainer(struct jparser *jp, struct tr_jv *v, int object)
{
	char close = object ? '}' : ']';
	size_t items_cap = 0, keys_cap = 0;
	int ret;

	v->type = object ? TR_JV_OBJECT : TR_JV_ARRAY;
	jp->p++;
	jskip(jp);
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		struct tr_jv *item;

		jskip(jp);
		if (object && (ret = jmember_key(jp, &key)) < 0)
			return ret;
		item = jappend(v, key, object, &items_cap, &keys_cap);
		if (!item)
			return -ENOMEM;
		ret = jvalue(jp, item);
		if (ret < 0)
			return ret;
		jskip(jp);
		if (jp->p < jp->end && *jp->p == ',') {
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == close) {
			jp->p++;
			return 0;
		}
		return -EINVAL;
	}
}

static int jvalue(struct jparser *jp, struct tr_jv *v)
{
	char *end;
	int ret;

	jskip(jp);
	if (jp->p >= jp->end)
		return -EINVAL;
	switch (*jp->p) {
	case '{':
	case '[':
		if (++jp->depth > MAX_DEPTH)
			return -EINVAL;
		ret = jcontainer(jp, v, *jp->p == '{');
		jp->depth--;
		return ret;
	case '"':
		v->type = TR_JV_STRING;
		return jstring(jp, &v->string);
	case 't':
		v->type = TR_JV_BOOL;
		v->boolean = 1;
		return jlit(jp, "true");
	case 'f':
		v->type = TR_JV_BOOL;
		return jlit(jp, "false");
	case 'n':
		v->type = TR_JV_NULL;
		return jlit(jp, "null");
	default:
		/* The buffer is NUL-terminated, so strtod stops in time. */
		v->type = TR_JV_NUMBER;
		v->number = strtod(jp->p, &end);
		if (end == jp->p || end > jp->end)
			return -EINVAL;
		jp->p = end;
		return 0;
	}
}

int tr_jv_parse(const char *text, size_t len, struct tr_jv *v)
{
	struct jparser jp = { .p = text, .end = text + len };
	int ret;

	memset(v, 0, sizeof(*v));
	ret = jvalue(&jp, v);
	jskip(&jp);
	if (ret == 0 && jp.p != jp.end)
		ret = -EINVAL;
	if (ret < 0)
		tr_jv_free(v);
	return ret;
}

const struct tr_jv *tr_jv_get(const struct tr_jv *v, ...)
{
	const char *key;
	va_list ap;

	va_start(ap, v);
	while (v && (key = va_arg(ap, const char *))) {
		const struct tr_jv *found = NULL;

		if (v->type == TR_JV_OBJECT)
			for (size_t i = 0; i < v->n && !found; i++)
				if (strcmp(v->keys[i], key) == 0)
					found = &v->items[i];
		v = found;
	}
	va_end(ap);
	return v;
}

const char *tr_jv_str(const struct tr_jv *v)
{
	return v && v->type == TR_JV_STRING ? v->string : NULL;
}

int tr_jv_num(const struct tr_jv *v, double *out)
{
	if (!v || v->type != TR_JV_NUMBER)
		return 0;
	*out = v->number;
	return 1;
}

int tr_jv_true(const struct tr_jv *v)
{
	return v && v->type == TR_JV_BOOL && v->boolean;
}

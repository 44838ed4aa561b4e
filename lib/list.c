#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "list.h"

static int is_blank(char c)
{
	return isspace((unsigned char)c);
}

static int next(const char **cursor, const char **item, size_t *len, int blanks_separate)
{
	const char *p = *cursor;

	while (p && *p) {
		const char *start, *end;

		while (is_blank(*p))
			p++;
		start = p;
		while (*p && *p != ',' && !(blanks_separate && is_blank(*p)))
			p++;
		end = p;
		while (end > start && is_blank(end[-1]))
			end--;
		if (*p == ',')
			p++;
		if (end > start) {
			*item = start;
			*len = (size_t)(end - start);
			*cursor = p;
			return 1;
		}
	}
	*cursor = p;
	return 0;
}

int tr_list_next(const char **cursor, const char **item, size_t *len)
{
	return next(cursor, item, len, 0);
}

int tr_words_next(const char **cursor, const char **item, size_t *len)
{
	return next(cursor, item, len, 1);
}

int tr_list_has(const char *list, const char *name)
{
	size_t name_len = strlen(name), len;
	const char *item;

	while (tr_list_next(&list, &item, &len))
		if (len == name_len && memcmp(item, name, len) == 0)
			return 1;
	return 0;
}

int tr_list_item(char *buf, size_t size, const char *item, size_t len)
{
	if (!size)
		return -ENAMETOOLONG;
	if (len >= size) {
		memcpy(buf, item, size - 1);
		buf[size - 1] = '\0';
		return -ENAMETOOLONG;
	}
	memcpy(buf, item, len);
	buf[len] = '\0';
	return 0;
}

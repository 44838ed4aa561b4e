/* The one rule for list values, in a profile or on the command line:
 *
 *   Items are separated by commas.  White space around an item is not part
 *   of it.  Empty items (",,", a trailing comma, an empty value) are
 *   skipped: "a, b,,c " is the three items "a", "b" and "c".
 *
 * Lists of single words (PIDs, thread states) also split at white space,
 * so "$(pidof a b)", which gives "12 34", is two items: tr_words_next. */
#ifndef TR_LIB_LIST_H
#define TR_LIB_LIST_H

#include <stddef.h>

/* The next item of the list at *cursor (NULL is an empty list): 1 with
 * item[0..len) set (not NUL-terminated) and *cursor moved past it, 0 when
 * there is none left.
 *   for (const char *c = value, *item; tr_list_next(&c, &item, &len);) */
int tr_list_next(const char **cursor, const char **item, size_t *len);

/* The same where white space separates items as commas do. */
int tr_words_next(const char **cursor, const char **item, size_t *len);

/* 1 when `name` is an item of `list`. */
int tr_list_has(const char *list, const char *name);

/* item[0..len) as a NUL-terminated string in buf (cut to size - 1 bytes);
 * 0, or -ENAMETOOLONG when it did not fit. */
int tr_list_item(char *buf, size_t size, const char *item, size_t len);

#endif

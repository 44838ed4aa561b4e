/* Typed profile values, checked against a key table (the core's own
 * [tracerig] keys and every plugin's). */
#ifndef TR_KEYS_H
#define TR_KEYS_H

#include <stddef.h>
#include "tracerig-private/ext.h"

const struct tracerig_key *tr_key_find(const struct tracerig_key *keys, const char *name);
/* Parses `text` for `key`: 0 and *num set (INT, SIZE, DURATION in ms, BOOL
 * as 0/1), or -EINVAL with `err` saying what is wrong and what is allowed. */
int tr_key_parse(const struct tracerig_key *key, const char *text, long long *num, char *err,
		 size_t err_len);
const char *tr_key_suggest(const struct tracerig_key *keys, const char *name);
const char *tr_key_type_name(enum tracerig_key_type type);
/* The index of `value` in the comma-separated `choices`, or -1. */
int tr_key_choice(const char *choices, const char *value);
/* Splits a LIST value by the list rule (lib/list.h) into out->items: one
 * allocation, freed with free((void *)out->items).  0 or -ENOMEM. */
int tr_key_split(const char *value, struct tracerig_list *out);
/* The next item of a LIST value (from *cursor on, by the list rule) that
 * is not among key->choices: 1 with *item and *len set, 0 when none is
 * left.  A key without choices takes any item. */
int tr_key_next_wrong_item(const struct tracerig_key *key, const char **cursor, const char **item,
			   size_t *len);
/* 0 when a plugin's key table is sound (known types, choices for each
 * choice key, bound fields of the size their type needs); -EINVAL with
 * `why` naming the key and what its field must be. */
int tr_key_check_table(const struct tracerig_key *keys, char *why, size_t why_len);

#endif

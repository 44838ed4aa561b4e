/* A small JSON reader: the whole text into a tree, for manifest.json (what
 * core/archive/json.c writes, read back by `tracerig report`).  Depth is bounded,
 * \u escapes become UTF-8 (surrogates as they are), numbers are doubles. */
#ifndef TR_JSONREAD_H
#define TR_JSONREAD_H

#include <stddef.h>

enum tr_jv_type { TR_JV_NULL, TR_JV_BOOL, TR_JV_NUMBER, TR_JV_STRING, TR_JV_ARRAY, TR_JV_OBJECT };

struct tr_jv {
	enum tr_jv_type type;
	double number;
	int boolean;
	char *string;	     /* TR_JV_STRING */
	char **keys;	     /* TR_JV_OBJECT: n keys, parallel to items */
	struct tr_jv *items; /* TR_JV_ARRAY, TR_JV_OBJECT */
	size_t n;
};

/* text must be NUL-terminated at text[len].  0, or -EINVAL (not JSON, or
 * nested deeper than 64) or -ENOMEM, with *v left empty. */
int tr_jv_parse(const char *text, size_t len, struct tr_jv *v);

void tr_jv_free(struct tr_jv *v);

/* tr_jv_get(v, "a", "b", NULL): v.a.b (the first of equal keys), or NULL. */
const struct tr_jv *tr_jv_get(const struct tr_jv *v, ...);

/* The string, or NULL when v is NULL or not a string. */
const char *tr_jv_str(const struct tr_jv *v);

/* 1 with *out set when v is a number, else 0. */
int tr_jv_num(const struct tr_jv *v, double *out);

/* 1 when v is true, else 0 (NULL, false, anything else). */
int tr_jv_true(const struct tr_jv *v);

#endif

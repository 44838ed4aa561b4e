#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "keys.h"
#include "lib/closest.h"
#include "lib/list.h"

const struct tracerig_key *tr_key_find(const struct tracerig_key *keys, const char *name)
{
	for (; keys && keys->name; keys++)
		if (strcmp(keys->name, name) == 0)
			return keys;
	return NULL;
}

const char *tr_key_type_name(enum tracerig_key_type type)
{
	switch (type) {
	case TRACERIG_KEY_STRING: return "string";
	case TRACERIG_KEY_INT: return "integer";
	case TRACERIG_KEY_BOOL: return "boolean";
	case TRACERIG_KEY_SIZE: return "size";
	case TRACERIG_KEY_DURATION: return "duration";
	case TRACERIG_KEY_ENUM: return "choice";
	case TRACERIG_KEY_LIST: return "list";
	}
	return "?";
}

static int parse_bool(const char *text, long long *num)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(text, yes[i]) == 0) {
			*num = 1;
			return 0;
		}
		if (strcasecmp(text, no[i]) == 0) {
			*num = 0;
			return 0;
		}
	}
	return -EINVAL;
}

/* A number followed by one of `units` (multipliers); an empty suffix uses
 * `bare`.  Fractions are allowed so "1.5s" and "0.5M" work.  Only plain
 * decimal: strtold would also take "0x2", "inf", "1e3", a sign or leading
 * blanks, each of which reads as something other than what was meant. */
struct unit {
	const char *suffix;
	long double factor;
};

static int parse_with_units(const char *text, const struct unit *units, long double bare,
			    long double *value)
{
	const char *p = text;
	long double v = 0, scale = 1;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++)
		v = v * 10 + (*p - '0');
	if (*p == '.') {
		if (!isdigit((unsigned char)p[1]))
			return -EINVAL;
		for (p++; isdigit((unsigned char)*p); p++) {
			scale /= 10;
			v += (*p - '0') * scale;
		}
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0') {
		v *= bare;
	} else {
		const struct unit *u;

		for (u = units; u->suffix; u++)
			if (strcasecmp(p, u->suffix) == 0)
				break;
		if (!u->suffix)
			return -EINVAL;
		v *= u->factor;
	}
	if (v >= (long double)LLONG_MAX)
		return -ERANGE;
	*value = v;
	return 0;
}

/* Decimal integers only: an optional '-' and digits (no "0x", no '+', no
 * blanks), so that what is written is what is meant. */
static int parse_integer(const char *text, long long *num)
{
	const char *p = text + (text[0] == '-');
	char *end;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	*num = strtoll(text, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	return errno == ERANGE ? -ERANGE : 0;
}

static int too_large(const char *text, char *err, size_t err_len)
{
	snprintf(err, err_len, "'%s' is too large", text);
	return -ERANGE;
}

/* A size in bytes, rounded; 0, or -EINVAL or -ERANGE said in err. */
static int parse_size(const char *text, long long *num, char *err, size_t err_len)
{
	static const struct unit size_units[] = {
		{ "b", 1 }, { "k", 1024.0L }, { "kb", 1024.0L }, { "kib", 1024.0L },
		{ "m", 1048576.0L }, { "mb", 1048576.0L }, { "mib", 1048576.0L },
		{ "g", 1073741824.0L }, { "gb", 1073741824.0L }, { "gib", 1073741824.0L },
		{ NULL, 0 },
	};
	long double value = 0;
	int ret = parse_with_units(text, size_units, 1, &value);

	if (ret == -EINVAL) {
		snprintf(err, err_len, "'%s' is not a size (a number of bytes, or with K, M or G)",
			 text);
		return -EINVAL;
	}
	if (ret == -ERANGE)
		return too_large(text, err, err_len);
	*num = (long long)(value + 0.5L);
	return 0;
}

/* A duration in ms (a bare number is seconds), rounded; 0, or -EINVAL or
 * -ERANGE said in err. */
static int parse_duration(const char *text, long long *num, char *err, size_t err_len)
{
	static const struct unit time_units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "sec", 1000 }, { "m", 60000 }, { "min", 60000 },
		{ "h", 3600000 }, { NULL, 0 },
	};
	long double value = 0;
	int ret = parse_with_units(text, time_units, 1000, &value);

	if (ret == -EINVAL) {
		snprintf(err, err_len,
			 "'%s' is not a duration (seconds, or a number with ms, s, m or h)", text);
		return -EINVAL;
	}
	if (ret == -ERANGE)
		return too_large(text, err, err_len);
	/* Rounding 0.4ms down to 0 would turn it into "no limit". */
	if (value > 0 && value + 1e-9L < 1) {
		snprintf(err, err_len,
			 "'%s' is shorter than 1 ms, the smallest duration "
			 "(use at least 1ms, or 0 for no limit)",
			 text);
		return -ERANGE;
	}
	*num = (long long)(value + 0.5L);
	return 0;
}

static int check_range(const struct tracerig_key *key, const char *text, long long num, char *err,
		       size_t err_len)
{
	if (key->min >= key->max || (num >= key->min && num <= key->max))
		return 0;
	if (key->type == TRACERIG_KEY_DURATION)
		snprintf(err, err_len, "'%s' is out of range (%lld ms to %lld ms)", text, key->min,
			 key->max);
	else
		snprintf(err, err_len, "'%s' is out of range (%lld to %lld)", text, key->min,
			 key->max);
	return -ERANGE;
}

int tr_key_parse(const struct tracerig_key *key, const char *text, long long *num, char *err,
		 size_t err_len)
{
	int ret = 0;

	*num = 0;
	switch (key->type) {
	case TRACERIG_KEY_STRING:
	case TRACERIG_KEY_LIST:
		return 0;
	case TRACERIG_KEY_BOOL:
		if (parse_bool(text, num) < 0) {
			snprintf(err, err_len, "'%s' is not a boolean (use yes or no)", text);
			return -EINVAL;
		}
		return 0;
	case TRACERIG_KEY_ENUM:
		if (!tr_list_has(key->choices, text)) {
			snprintf(err, err_len, "'%s' is not one of: %s", text,
				 key->choices ? key->choices : "");
			return -EINVAL;
		}
		return 0;
	case TRACERIG_KEY_INT:
		ret = parse_integer(text, num);
		if (ret == -EINVAL) {
			snprintf(err, err_len, "'%s' is not an integer (decimal digits only)", text);
			return -EINVAL;
		}
		if (ret == -ERANGE)
			return too_large(text, err, err_len);
		break;
	case TRACERIG_KEY_SIZE: ret = parse_size(text, num, err, err_len); break;
	case TRACERIG_KEY_DURATION: ret = parse_duration(text, num, err, err_len); break;
	}
	return ret < 0 ? ret : check_range(key, text, *num, err, err_len);
}

const char *tr_key_suggest(const struct tracerig_key *keys, const char *name)
{
	const char *names[128];
	size_t n = 0;

	for (; keys && keys->name && n < 128; keys++)
		names[n++] = keys->name;
	return tr_closest(name, names, n);
}

int tr_key_choice(const char *choices, const char *value)
{
	size_t value_len, len;
	const char *item;
	int index = 0;

	if (!value)
		return -1;
	value_len = strlen(value);
	while (tr_list_next(&choices, &item, &len)) {
		if (len == value_len && memcmp(item, value, len) == 0)
			return index;
		index++;
	}
	return -1;
}

int tr_key_next_wrong_item(const struct tracerig_key *key, const char **cursor, const char **item,
			   size_t *len)
{
	while (tr_list_next(cursor, item, len)) {
		const char *choices = key->choices, *choice;
		size_t choice_len;
		int found = !choices;

		while (!found && tr_list_next(&choices, &choice, &choice_len))
			found = choice_len == *len && memcmp(choice, *item, *len) == 0;
		if (!found)
			return 1;
	}
	return 0;
}

int tr_key_split(const char *value, struct tracerig_list *out)
{
	const char *cursor = value, *item;
	size_t n = 0, bytes = 0, len;
	const char **items;
	char *text;

	out->n = 0;
	out->items = NULL;
	while (tr_list_next(&cursor, &item, &len)) {
		n++;
		bytes += len + 1;
	}
	if (!n)
		return 0;
	/* One block, the pointers then the strings: freed with one free(). */
	items = malloc(n * sizeof(*items) + bytes);
	if (!items)
		return -ENOMEM;
	text = (char *)(items + n);
	cursor = value;
	for (size_t i = 0; tr_list_next(&cursor, &item, &len); i++) {
		memcpy(text, item, len);
		text[len] = '\0';
		items[i] = text;
		text += len + 1;
	}
	out->n = n;
	out->items = items;
	return 0;
}

/* The field sizes a key of this type may bind. */
static int binding_fits(const struct tracerig_key *k)
{
	switch (k->type) {
	case TRACERIG_KEY_STRING:
		return k->bind_size == sizeof(const char *);
	case TRACERIG_KEY_INT:
	case TRACERIG_KEY_SIZE:
	case TRACERIG_KEY_DURATION:
		/* An int only where the range keeps every value inside one. */
		return k->bind_size == sizeof(long long) ||
		       (k->bind_size == sizeof(int) && k->min < k->max && k->min >= INT_MIN &&
			k->max <= INT_MAX);
	case TRACERIG_KEY_BOOL:
	case TRACERIG_KEY_ENUM:
		return k->bind_size == sizeof(int);
	case TRACERIG_KEY_LIST:
		return k->bind_size == sizeof(struct tracerig_list);
	}
	return 0;
}

static const char *binding_wanted(enum tracerig_key_type type)
{
	switch (type) {
	case TRACERIG_KEY_STRING: return "a const char *";
	case TRACERIG_KEY_INT:
	case TRACERIG_KEY_SIZE:
	case TRACERIG_KEY_DURATION: return "a long long (an int only with a [min, max] that fits one)";
	case TRACERIG_KEY_BOOL: return "an int";
	case TRACERIG_KEY_ENUM: return "an int (the index of the choice)";
	case TRACERIG_KEY_LIST: return "a struct tracerig_list";
	}
	return "nothing: the type is unknown";
}

int tr_key_check_table(const struct tracerig_key *keys, char *why, size_t why_len)
{
	for (const struct tracerig_key *k = keys; k && k->name; k++) {
		if (k->type < TRACERIG_KEY_STRING || k->type > TRACERIG_KEY_LIST) {
			snprintf(why, why_len, "key '%s' has an unknown type %d", k->name,
				 (int)k->type);
			return -EINVAL;
		}
		if (k->type == TRACERIG_KEY_ENUM && (!k->choices || !*k->choices)) {
			snprintf(why, why_len, "key '%s' is a choice without choices", k->name);
			return -EINVAL;
		}
		if (k->type == TRACERIG_KEY_LIST && k->choices && k->default_value) {
			const char *cursor = k->default_value, *item;
			size_t len;

			if (tr_key_next_wrong_item(k, &cursor, &item, &len)) {
				snprintf(why, why_len,
					 "key '%s' defaults to '%.*s', not one of its "
					 "choices",
					 k->name, (int)len, item);
				return -EINVAL;
			}
		}
		if (k->bind_size && !binding_fits(k)) {
			snprintf(why, why_len, "key '%s' (%s) is bound to a field of %zu bytes; it "
				 "needs %s", k->name, tr_key_type_name(k->type), k->bind_size,
				 binding_wanted(k->type));
			return -EINVAL;
		}
	}
	return 0;
}

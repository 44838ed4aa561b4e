#include "config.h"

#include <inttypes.h>

#include "json.h"

void tr_json_init(struct tr_json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	j->first[0] = 1;
}

static void put_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

static void member(struct tr_json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->out);
	j->first[j->depth] = 0;
	if (j->depth > 0) {
		fputc('\n', j->out);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->out);
	}
	if (key) {
		put_string(j->out, key);
		fputs(": ", j->out);
	}
}

static void open_(struct tr_json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->out);
	if (j->depth < 31)
		j->depth++;
	j->first[j->depth] = 1;
}

static void close_(struct tr_json *j, char c)
{
	int empty = j->first[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (!empty) {
		fputc('\n', j->out);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->out);
	}
	fputc(c, j->out);
}

void tr_json_object(struct tr_json *j, const char *key) { open_(j, key, '{'); }
void tr_json_array(struct tr_json *j, const char *key) { open_(j, key, '['); }
void tr_json_end_object(struct tr_json *j) { close_(j, '}'); }
void tr_json_end_array(struct tr_json *j) { close_(j, ']'); }

void tr_json_string(struct tr_json *j, const char *key, const char *value)
{
	member(j, key);
	if (value)
		put_string(j->out, value);
	else
		fputs("null", j->out);
}

void tr_json_u64(struct tr_json *j, const char *key, uint64_t value)
{
	member(j, key);
	fprintf(j->out, "%" PRIu64, value);
}

void tr_json_i64(struct tr_json *j, const char *key, int64_t value)
{
	member(j, key);
	fprintf(j->out, "%" PRId64, value);
}

void tr_json_bool(struct tr_json *j, const char *key, int value)
{
	member(j, key);
	fputs(value ? "true" : "false", j->out);
}

void tr_json_finish(struct tr_json *j)
{
	fputc('\n', j->out);
}

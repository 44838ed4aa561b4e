/* A small streaming JSON writer for manifest.json. */
#ifndef TR_JSON_H
#define TR_JSON_H

#include <stdint.h>
#include <stdio.h>

struct tr_json {
	FILE *out;
	int depth;
	int first[32]; /* no member written yet at this depth */
};

void tr_json_init(struct tr_json *j, FILE *out);
void tr_json_object(struct tr_json *j, const char *key); /* key NULL inside arrays / at top */
void tr_json_array(struct tr_json *j, const char *key);
void tr_json_end_object(struct tr_json *j);
void tr_json_end_array(struct tr_json *j);
void tr_json_string(struct tr_json *j, const char *key, const char *value); /* NULL -> null */
void tr_json_u64(struct tr_json *j, const char *key, uint64_t value);
void tr_json_i64(struct tr_json *j, const char *key, int64_t value);
void tr_json_bool(struct tr_json *j, const char *key, int value);
void tr_json_finish(struct tr_json *j);

#endif

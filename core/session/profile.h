/* A profile as written: sections and keys in file order, each remembering
 * where it came from so that errors can say file:line. */
#ifndef TR_PROFILE_H
#define TR_PROFILE_H

#include <stddef.h>

/* The longest profile line accepted (documented in tracerig.ini(5)). */
#define TR_PROFILE_MAX_LINE 16384

struct tr_entry {
	char *key;
	char *value;
	const char *origin; /* file path or "--set" */
	int line;           /* 0 for command-line values */
	long long num;      /* parsed value, once validated */
};

struct tr_section {
	char *name;
	const char *origin;
	int line;
	struct tr_entry *entries;
	size_t n_entries;
};

struct tr_profile {
	char *path;
	struct tr_section *sections;
	size_t n_sections;
	char *origins[8]; /* owned copies of the file paths entries point to */
	size_t n_origins;
};

/* Parses `path` and appends its sections.  Errors are logged as
 * "path:line: message"; returns the number of errors, or -errno when the
 * file cannot be read. */
int tr_profile_load(struct tr_profile *p, const char *path);
/* Applies one "SECTION.KEY=VALUE" (from --set); returns 0 or logs and
 * returns -EINVAL. */
int tr_profile_set(struct tr_profile *p, const char *assignment);
struct tr_section *tr_profile_section(const struct tr_profile *p, const char *name);
struct tr_entry *tr_section_entry(const struct tr_section *s, const char *key);
/* Where an entry was set, as messages name it: "FILE:LINE", or its origin
 * alone ("--set", "-d"). */
void tr_entry_where(const struct tr_entry *e, char *buf, size_t len);
/* Adds a value unless the key is already there (defaults from tracerig.conf). */
int tr_profile_default(struct tr_profile *p, const char *section, const char *key,
		       const char *value, const char *origin, int line);
void tr_profile_free(struct tr_profile *p);

#endif

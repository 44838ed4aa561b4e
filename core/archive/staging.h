/* The staging directory: the archive's content before it is packaged. */
#ifndef TR_STAGING_H
#define TR_STAGING_H

#include <stdint.h>
#include "tracerig-private/ext.h"

struct tracerig_archive {
	char *dir;    /* staging directory, the archive root */
	char *output; /* temporary archive path handed to the packager, next to the output */
};

/* Creates a fresh staging directory (mode 0700) under tr_staging_parent(),
 * and names (without creating) a temporary archive next to `output`. */
int tr_staging_create(struct tracerig_archive *ar, const char *output);
/* $TMPDIR if it is absolute, else /var/tmp. */
const char *tr_staging_parent(void);
/* Removes entry `name` (a partial file that must not be taken for whole). */
int tr_staging_remove_entry(struct tracerig_archive *ar, const char *name);
/* Creates entry `name` (relative, no "..") and its parents; returns an fd. */
int tr_staging_create_entry(struct tracerig_archive *ar, const char *name);
/* The same entry as a stdio stream for writing, or NULL with errno set. */
FILE *tr_staging_fopen_entry(struct tracerig_archive *ar, const char *name);
/* Every regular file below the staging dir, sorted by name. */
int tr_staging_foreach(struct tracerig_archive *ar, tracerig_entry_cb cb, void *arg);
int tr_staging_remove(struct tracerig_archive *ar);
void tr_staging_free(struct tracerig_archive *ar);
/* Checks an entry name: relative, no "..", no empty components. */
int tr_entry_name_ok(const char *name);

#endif

/* The archive `tracerig report` reads: a zip opened read-only with libzip.
 * tracerig's archives hold their entries at the root; perfcollect's
 * (NAME.trace.zip) hold the same kind under one directory, NAME.trace/
 * (perf.data.txt, perfinfo-PID.map, lttngTrace/, ...): entries are named
 * here as at the root, and found under that directory in such archives. */
#ifndef TR_REPORT_ARCHIVE_H
#define TR_REPORT_ARCHIVE_H

#include <stddef.h>
#include <zip.h>

struct rp_archive {
	zip_t *za;
	const char *path; /* as given, for messages */
	const char *who;  /* the command, for messages: "report", "convert" */
	char *prefix;	  /* "NAME.trace/" in perfcollect's layout, else NULL */
};

/* 0, or a negative errno once the reason is printed on stderr (as said by
 * `tracerig WHO`). */
int rp_archive_open(const char *path, const char *who, struct rp_archive *ar);
void rp_archive_close(struct rp_archive *ar);

/* 1 when the archive has the entry `name` (under the prefix, if any). */
int rp_archive_has(const struct rp_archive *ar, const char *name);

/* The entry opened for streaming (zip_fclose it), or NULL. */
zip_file_t *rp_archive_fopen(struct rp_archive *ar, const char *name);

/* The whole entry, NUL-terminated, in *out to free().  0, -ENOENT,
 * -EFBIG (over `max` bytes), -EIO or -ENOMEM. */
int rp_archive_read(struct rp_archive *ar, const char *name, size_t max, char **out,
		    size_t *out_len);

/* Why reading an entry failed with `err`: libzip's reason for -EIO. */
const char *rp_archive_strerror(struct rp_archive *ar, int err);

#endif

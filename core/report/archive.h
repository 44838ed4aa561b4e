/* The archive `tracerig report` reads: a zip opened read-only with libzip.
 * tracerig's archives hold their entries at the root; perfcollect's
 * (NAME.trace.zip) hold the same kind under one directory, NAME.trace/
 * (perf.data.txt, perfinfo-PID.map, lttngTrace/, ...): entries are named
 * here as at the root, and found under that directory in such archives. */
#ifndef TR_REPORT_ARCHIVE_H
#define TR_REPORT_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>
#include <zip.h>

/* The most an entry may inflate to unless --max-size says otherwise: a few
 * MB of zip can hold GBs of zeros, and tracerig's own entries of a long
 * session stay well below it. */
#define RP_MAX_SIZE_DEFAULT (1ull << 30)

struct rp_archive {
	zip_t *za;
	const char *path; /* as given, for messages */
	const char *who;  /* the command, for messages: "report", "convert" */
	char *prefix;	  /* "NAME.trace/" in perfcollect's layout, else NULL */
	uint64_t max_size; /* the cap on what one entry inflates to */
	char why[256];	   /* why the last read failed (-EIO, -EFBIG) */
};

/* 0, or a negative errno once the reason is printed on stderr (as said by
 * `tracerig WHO`).  ar->max_size starts at RP_MAX_SIZE_DEFAULT. */
int rp_archive_open(const char *path, const char *who, struct rp_archive *ar);
void rp_archive_close(struct rp_archive *ar);

/* 1 when the archive has the entry `name` (under the prefix, if any). */
int rp_archive_has(const struct rp_archive *ar, const char *name);

/* The entry opened for streaming (zip_fclose it) with its size as the
 * archive states it (0 when it states none), or NULL with ar->why set:
 * -ENOENT, -EIO, or -EFBIG when the stated size is over ar->max_size. */
zip_file_t *rp_archive_fopen(struct rp_archive *ar, const char *name, uint64_t *size, int *err);

/* The whole entry, NUL-terminated, in *out to free().  0, -ENOENT,
 * -EFBIG (over `max` bytes or ar->max_size), -EIO or -ENOMEM. */
int rp_archive_read(struct rp_archive *ar, const char *name, size_t max, char **out,
		    size_t *out_len);

/* Records in ar->why what libzip says of a failed read of `name` (a
 * damaged entry), never "No error". */
void rp_archive_set_zip_error(struct rp_archive *ar, const char *name, zip_error_t *ze);
/* Records that `name` inflates past ar->max_size (`size`: how far, 0 when
 * unknown). */
void rp_archive_set_too_big(struct rp_archive *ar, const char *name, uint64_t size);

/* Why reading an entry failed with `err`: ar->why for -EIO and -EFBIG. */
const char *rp_archive_strerror(struct rp_archive *ar, int err);

/* Says on stderr that reading `entry` failed with `err`, why and what to
 * do: "tracerig: WHO: cannot read ENTRY in PATH: WHY (HINT)". */
void rp_archive_perror(struct rp_archive *ar, const char *entry, int err);

/* "1G", "512M", "4096": a --max-size in bytes (K, M, G, T are powers of
 * 1024).  0, or -EINVAL for anything else or 0. */
int rp_archive_parse_size(const char *arg, uint64_t *bytes);
/* "1.0 GiB" */
const char *rp_archive_size_str(uint64_t bytes, char *buf, size_t len);

#endif

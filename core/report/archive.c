#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive.h"

#define PERFCOLLECT_DIR ".trace/"

/* perfcollect zips its NAME.trace directory whole: an archive with no
 * manifest.json at the root, whose entries are under "NAME.trace/", reads
 * from there.  0 or -ENOMEM. */
static int find_prefix(struct rp_archive *ar)
{
	zip_int64_t n = zip_get_num_entries(ar->za, 0);
	size_t tail = strlen(PERFCOLLECT_DIR);

	if (zip_name_locate(ar->za, "manifest.json", 0) >= 0)
		return 0;
	for (zip_int64_t i = 0; i < n; i++) {
		const char *name = zip_get_name(ar->za, (zip_uint64_t)i, 0);
		const char *slash = name ? strchr(name, '/') : NULL;
		size_t len = slash ? (size_t)(slash + 1 - name) : 0;

		if (len > tail && memcmp(slash + 1 - tail, PERFCOLLECT_DIR, tail) == 0) {
			ar->prefix = strndup(name, len);
			return ar->prefix ? 0 : -ENOMEM;
		}
	}
	return 0;
}

/* The index of entry `name` (under the prefix), or -1. */
static zip_int64_t locate(const struct rp_archive *ar, const char *name)
{
	zip_int64_t i;
	char *full;

	if (!ar->prefix)
		return zip_name_locate(ar->za, name, 0);
	if (asprintf(&full, "%s%s", ar->prefix, name) < 0)
		return -1;
	i = zip_name_locate(ar->za, full, 0);
	free(full);
	return i;
}

int rp_archive_open(const char *path, const char *who, struct rp_archive *ar)
{
	struct stat st;
	zip_error_t ze;
	int err = 0;

	memset(ar, 0, sizeof(*ar));
	ar->path = path;
	ar->who = who;
	if (stat(path, &st) < 0)
		err = errno;
	else if (S_ISDIR(st.st_mode))
		err = EISDIR;
	if (err) {
		fprintf(stderr, "tracerig: %s: cannot open %s: %s (give the path of a "
			".trace.zip written by tracerig)\n", who, path, strerror(err));
		return -err;
	}
	ar->za = zip_open(path, ZIP_RDONLY, &err);
	if (!ar->za) {
		zip_error_init_with_code(&ze, err);
		fprintf(stderr, "tracerig: %s: cannot open %s: %s (%s)\n", who, path,
			zip_error_strerror(&ze),
			err == ZIP_ER_NOZIP || err == ZIP_ER_INCONS
				? "give a .trace.zip written by tracerig"
				: "check the path and the permissions");
		zip_error_fini(&ze);
		return -EINVAL;
	}
	err = -find_prefix(ar);
	if (err) {
		fprintf(stderr, "tracerig: %s: cannot read %s: %s\n", who, path, strerror(err));
		rp_archive_close(ar);
		return -err;
	}
	return 0;
}

void rp_archive_close(struct rp_archive *ar)
{
	if (ar->za)
		zip_discard(ar->za);
	free(ar->prefix);
	memset(ar, 0, sizeof(*ar));
}

int rp_archive_has(const struct rp_archive *ar, const char *name)
{
	return locate(ar, name) >= 0;
}

zip_file_t *rp_archive_fopen(struct rp_archive *ar, const char *name)
{
	zip_int64_t i = locate(ar, name);

	return i < 0 ? NULL : zip_fopen_index(ar->za, (zip_uint64_t)i, 0);
}

int rp_archive_read(struct rp_archive *ar, const char *name, size_t max, char **out,
		    size_t *out_len)
{
	zip_int64_t i = locate(ar, name);
	zip_stat_t st;
	zip_file_t *zf;
	zip_int64_t got;
	char *buf;

	zip_stat_init(&st);
	if (i < 0 || zip_stat_index(ar->za, (zip_uint64_t)i, 0, &st) < 0)
		return -ENOENT;
	if (!(st.valid & ZIP_STAT_SIZE) || st.size > max)
		return -EFBIG;
	zf = zip_fopen_index(ar->za, (zip_uint64_t)i, 0);
	if (!zf)
		return -EIO;
	buf = malloc(st.size + 1);
	if (!buf) {
		zip_fclose(zf);
		return -ENOMEM;
	}
	got = zip_fread(zf, buf, st.size);
	zip_fclose(zf);
	if (got < 0 || (zip_uint64_t)got != st.size) {
		free(buf);
		return -EIO;
	}
	buf[st.size] = '\0';
	*out = buf;
	*out_len = st.size;
	return 0;
}

const char *rp_archive_strerror(struct rp_archive *ar, int err)
{
	return err == -EIO ? zip_strerror(ar->za) : strerror(-err);
}

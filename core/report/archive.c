#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive.h"

int rp_archive_open(const char *path, struct rp_archive *ar)
{
	struct stat st;
	zip_error_t ze;
	int err = 0;

	memset(ar, 0, sizeof(*ar));
	ar->path = path;
	if (stat(path, &st) < 0)
		err = errno;
	else if (S_ISDIR(st.st_mode))
		err = EISDIR;
	if (err) {
		fprintf(stderr, "tracerig: report: cannot open %s: %s (give the path of a "
			".trace.zip written by tracerig)\n", path, strerror(err));
		return -err;
	}
	ar->za = zip_open(path, ZIP_RDONLY, &err);
	if (!ar->za) {
		zip_error_init_with_code(&ze, err);
		fprintf(stderr, "tracerig: report: cannot open %s: %s (%s)\n", path,
			zip_error_strerror(&ze),
			err == ZIP_ER_NOZIP || err == ZIP_ER_INCONS
				? "give a .trace.zip written by tracerig"
				: "check the path and the permissions");
		zip_error_fini(&ze);
		return -EINVAL;
	}
	return 0;
}

void rp_archive_close(struct rp_archive *ar)
{
	if (ar->za)
		zip_discard(ar->za);
	memset(ar, 0, sizeof(*ar));
}

int rp_archive_has(const struct rp_archive *ar, const char *name)
{
	return zip_name_locate(ar->za, name, 0) >= 0;
}

zip_file_t *rp_archive_fopen(struct rp_archive *ar, const char *name)
{
	return zip_fopen(ar->za, name, 0);
}

int rp_archive_read(struct rp_archive *ar, const char *name, size_t max, char **out,
		    size_t *out_len)
{
	zip_stat_t st;
	zip_file_t *zf;
	zip_int64_t got;
	char *buf;

	zip_stat_init(&st);
	if (zip_stat(ar->za, name, 0, &st) < 0)
		return -ENOENT;
	if (!(st.valid & ZIP_STAT_SIZE) || st.size > max)
		return -EFBIG;
	zf = rp_archive_fopen(ar, name);
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

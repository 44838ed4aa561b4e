#include "config.h"

#include <ctype.h>
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
	ar->max_size = RP_MAX_SIZE_DEFAULT;
	if (stat(path, &st) < 0)
		err = errno;
	else if (S_ISDIR(st.st_mode))
		err = EISDIR;
	if (err) {
		fprintf(stderr, "tracerig: %s: cannot open %s: %s (give the path of a "
			".trace.zip written by tracerig)\n", who, path, strerror(err));
		return -err;
	}
	errno = 0;
	ar->za = zip_open(path, ZIP_RDONLY, &err);
	if (!ar->za) {
		/* zip_open gives a code only: the system's reason is errno. */
		int sys = errno;

		zip_error_init_with_code(&ze, err);
		/* With no errno, "Read error: Success" would say nothing. */
		if (zip_error_system_type(&ze) == ZIP_ET_SYS)
			zip_error_set(&ze, err, sys ? sys : EIO);
		fprintf(stderr, "tracerig: %s: cannot open %s: %s (%s)\n", who, path,
			err == ZIP_ER_OK ? "unreadable" : zip_error_strerror(&ze),
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

const char *rp_archive_size_str(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

int rp_archive_parse_size(const char *arg, uint64_t *bytes)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *unit;
	char *end;

	if (!isdigit((unsigned char)*arg))
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || v == 0)
		return -EINVAL;
	if (*end) {
		unit = strchr(units, toupper((unsigned char)*end));
		if (!unit || (end[1] && strcmp(end + 1, "iB") != 0 && strcmp(end + 1, "B") != 0))
			return -EINVAL;
		for (const char *u = units; u <= unit; u++) {
			if (v > UINT64_MAX / 1024)
				return -EINVAL;
			v *= 1024;
		}
	}
	*bytes = v;
	return 0;
}

void rp_archive_set_zip_error(struct rp_archive *ar, const char *name, zip_error_t *ze)
{
	/* A code of 0 is libzip's "No error": the read failed all the same. */
	if (!ze || zip_error_code_zip(ze) == ZIP_ER_OK)
		snprintf(ar->why, sizeof(ar->why), "%s cannot be read (its data is damaged)", name);
	else
		snprintf(ar->why, sizeof(ar->why), "%s: %s", name, zip_error_strerror(ze));
}

void rp_archive_set_too_big(struct rp_archive *ar, const char *name, uint64_t size)
{
	char cap[32], got[32];

	if (size)
		snprintf(ar->why, sizeof(ar->why), "%s inflates to %s, over the %s cap", name,
			 rp_archive_size_str(size, got, sizeof(got)),
			 rp_archive_size_str(ar->max_size, cap, sizeof(cap)));
	else
		snprintf(ar->why, sizeof(ar->why), "%s inflates to more than the %s cap", name,
			 rp_archive_size_str(ar->max_size, cap, sizeof(cap)));
}

zip_file_t *rp_archive_fopen(struct rp_archive *ar, const char *name, uint64_t *size, int *err)
{
	zip_int64_t i = locate(ar, name);
	zip_file_t *zf;
	zip_stat_t st;

	*size = 0;
	ar->why[0] = '\0';
	zip_stat_init(&st);
	if (i < 0 || zip_stat_index(ar->za, (zip_uint64_t)i, 0, &st) < 0) {
		*err = -ENOENT;
		return NULL;
	}
	if (st.valid & ZIP_STAT_SIZE) {
		*size = st.size;
		/* Refused before a byte is inflated: the header may tell the
		 * truth, and then the time is saved. */
		if (st.size > ar->max_size) {
			rp_archive_set_too_big(ar, name, st.size);
			*err = -EFBIG;
			return NULL;
		}
	}
	zf = zip_fopen_index(ar->za, (zip_uint64_t)i, 0);
	if (!zf) {
		rp_archive_set_zip_error(ar, name, zip_get_error(ar->za));
		*err = -EIO;
	}
	return zf;
}

int rp_archive_read(struct rp_archive *ar, const char *name, size_t max, char **out,
		    size_t *out_len)
{
	uint64_t size;
	zip_file_t *zf;
	zip_int64_t got;
	int err = 0;
	char *buf;

	zf = rp_archive_fopen(ar, name, &size, &err);
	if (!zf)
		return err;
	if (size > max) {
		char stated[32], cap[32];

		snprintf(ar->why, sizeof(ar->why), "%s inflates to %s, more than such an entry "
			 "ever holds (%s)", name, rp_archive_size_str(size, stated, sizeof(stated)),
			 rp_archive_size_str(max, cap, sizeof(cap)));
		zip_fclose(zf);
		return -EFBIG;
	}
	buf = malloc(size + 1);
	if (!buf) {
		zip_fclose(zf);
		return -ENOMEM;
	}
	/* One byte more than stated: an entry longer than its header says
	 * is damaged, not silently cut. */
	got = zip_fread(zf, buf, size + 1);
	if (got < 0 || (zip_uint64_t)got != size) {
		if (got < 0)
			rp_archive_set_zip_error(ar, name, zip_file_get_error(zf));
		else
			snprintf(ar->why, sizeof(ar->why), "%s holds %s bytes than its header "
				 "states", name, (zip_uint64_t)got < size ? "fewer" : "more");
		zip_fclose(zf);
		free(buf);
		return -EIO;
	}
	zip_fclose(zf);
	buf[size] = '\0';
	*out = buf;
	*out_len = size;
	return 0;
}

const char *rp_archive_strerror(struct rp_archive *ar, int err)
{
	return (err == -EIO || err == -EFBIG) && ar->why[0] ? ar->why : strerror(-err);
}

void rp_archive_perror(struct rp_archive *ar, const char *entry, int err)
{
	char cap[32];
	const char *hint;

	switch (-err) {
	case EIO:
		hint = "the archive is damaged: check it with `unzip -t`";
		break;
	case EFBIG:
		hint = "give a larger --max-size to read it anyway, if you trust the archive";
		break;
	case E2BIG:
		snprintf(ar->why, sizeof(ar->why), "its distinct stacks take more memory than the "
			 "%s cap", rp_archive_size_str(ar->max_size, cap, sizeof(cap)));
		hint = "give a larger --max-size to read it anyway, if you trust the archive";
		break;
	default:
		hint = "the archive may be damaged: check it with `unzip -t`";
	}
	fprintf(stderr, "tracerig: %s: cannot read %s in %s: %s (%s)\n", ar->who, entry, ar->path,
		err == -E2BIG ? ar->why : rp_archive_strerror(ar, err), hint);
}

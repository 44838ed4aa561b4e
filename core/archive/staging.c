#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/vec.h"
#include "staging.h"
#include "stream.h"

/* Where staging directories live: $TMPDIR, else /var/tmp.  Not next to the
 * output: a full output disk must not also truncate what was collected, and
 * a kept staging directory must survive a reboot (/tmp is often a tmpfs). */
const char *tr_staging_parent(void)
{
	const char *tmp = getenv("TMPDIR");

	return tmp && tmp[0] == '/' ? tmp : "/var/tmp";
}

static void random_suffix(char *end6)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[6] = { 0 };

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		for (size_t i = 0; i < sizeof(rnd); i++)
			rnd[i] = (unsigned char)(rand() ^ getpid());
	for (size_t i = 0; i < 6; i++)
		end6[i] = letters[rnd[i] % (sizeof(letters) - 1)];
}

int tr_staging_create(struct tracerig_archive *ar, const char *output)
{
	char *copy = strdup(output), *dir, path[PATH_MAX];
	const char *base;

	memset(ar, 0, sizeof(*ar));
	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	base = strrchr(output, '/') ? strrchr(output, '/') + 1 : output;
	/* mkdtemp: a new directory, mode 0700, at a name nobody could guess. */
	if (snprintf(path, sizeof(path), "%s/tracerig-%s.staging-XXXXXX", tr_staging_parent(),
		     base) >= (int)sizeof(path)) {
		free(copy);
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(path)) {
		int err = -errno;

		free(copy);
		return err;
	}
	ar->dir = strdup(path);
	/* The temporary archive goes next to the output (the final rename
	 * stays on one file system); it is only named here, and created with
	 * O_EXCL when packaging starts (tr_output_create_temp). */
	snprintf(path, sizeof(path), "%s/.%s.tmp-XXXXXX", dir, base);
	random_suffix(path + strlen(path) - 6);
	ar->output = strdup(path);
	free(copy);
	if (!ar->dir || !ar->output) {
		if (ar->dir)
			rmdir(ar->dir);
		tr_staging_free(ar);
		return -ENOMEM;
	}
	return 0;
}

int tr_staging_remove_entry(struct tracerig_archive *ar, const char *name)
{
	char path[PATH_MAX];

	if (!tr_entry_name_ok(name))
		return -EINVAL;
	if (snprintf(path, sizeof(path), "%s/%s", ar->dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int tr_entry_name_ok(const char *name)
{
	const char *p = name;

	if (!name || !*name || name[0] == '/')
		return 0;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);

		if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (!slash)
			break;
		p = slash + 1;
		if (!*p)
			return 0;
	}
	return 1;
}

int tr_staging_create_entry(struct tracerig_archive *ar, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (!tr_entry_name_ok(name))
		return -EINVAL;
	if (snprintf(path, sizeof(path), "%s/%s", ar->dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (char *slash = strchr(path + strlen(ar->dir) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return -errno;
		*slash = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

struct walk {
	char **names;
	size_t n, cap;
};

static int walk_dir(const char *root, const char *rel, struct walk *w)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!ret && (de = readdir(d))) {
		char child[PATH_MAX], full[PATH_MAX];
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(child, sizeof(child), "%s%s%s", rel, *rel ? "/" : "", de->d_name) >=
			    (int)sizeof(child) ||
		    snprintf(full, sizeof(full), "%s/%s", root, child) >= (int)sizeof(full) ||
		    lstat(full, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			/* The core's deflated side files (stream.h) are
			 * never entries. */
			if (!*rel && strcmp(de->d_name, TR_STREAM_DIR) == 0)
				continue;
			ret = walk_dir(root, child, w);
		} else if (S_ISREG(st.st_mode)) {
			char **grown = tr_vec_grow(w->names, &w->cap, w->n + 1, sizeof(*grown), 64);

			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			w->names = grown;
			if (!(w->names[w->n] = strdup(child)))
				ret = -ENOMEM;
			else
				w->n++;
		}
	}
	closedir(d);
	return ret;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

FILE *tr_staging_fopen_entry(struct tracerig_archive *ar, const char *name)
{
	int fd = tr_staging_create_entry(ar, name);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		int saved = errno;

		close(fd);
		errno = saved;
	}
	return f;
}

int tr_staging_foreach(struct tracerig_archive *ar, tracerig_entry_cb cb, void *arg)
{
	struct walk w = { 0 };
	int ret = walk_dir(ar->dir, "", &w);

	if (ret == 0)
		qsort(w.names, w.n, sizeof(*w.names), by_name);
	for (size_t i = 0; i < w.n; i++) {
		char full[PATH_MAX];
		struct stat st;

		if (ret == 0) {
			snprintf(full, sizeof(full), "%s/%s", ar->dir, w.names[i]);
			if (stat(full, &st) == 0)
				ret = cb(arg, w.names[i], full, (uint64_t)st.st_size);
		}
		free(w.names[i]);
	}
	free(w.names);
	return ret;
}

static int remove_tree(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, de->d_name, 0) < 0 && errno == EISDIR)
			remove_tree(fd, de->d_name);
	}
	closedir(d);
	return unlinkat(parent, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

int tr_staging_remove(struct tracerig_archive *ar)
{
	return ar->dir ? remove_tree(AT_FDCWD, ar->dir) : 0;
}

void tr_staging_free(struct tracerig_archive *ar)
{
	free(ar->dir);
	free(ar->output);
	memset(ar, 0, sizeof(*ar));
}

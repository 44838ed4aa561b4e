#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "output.h"

struct tr_output {
	char *dir;       /* the directory the archive goes to, as given */
	char *stem;      /* numbered names: NAME of NAME-N.trace.zip, else NULL */
	unsigned number; /* numbered names: the current N (1: no suffix) */
	char *lock_path;
	int lock_fd;
	char *path;    /* the archive, as the user named it (or its directory) */
	char *abs_dir; /* `dir` resolved, once: what other directories are told */
	char *abs;     /* `path` in abs_dir */
};

struct tr_output *tr_output_new(void)
{
	struct tr_output *o = calloc(1, sizeof(*o));

	if (o)
		o->lock_fd = -1;
	return o;
}

const char *tr_output_strerror(int err, char *buf, size_t len)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ENOSPC:
		snprintf(buf, len, "%s (the file system is full)", strerror(err));
		break;
	case EDQUOT:
		snprintf(buf, len, "%s (your disk quota is used up)", strerror(err));
		break;
	case EIO:
		snprintf(buf, len, "%s (the device reported an error: see dmesg)", strerror(err));
		break;
	default:
		snprintf(buf, len, "%s", strerror(err));
	}
	return buf;
}

static const char *kind_of(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return "a directory";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	case S_IFLNK: return "a symbolic link";
	case S_IFREG: return "a regular file";
	}
	return "not a regular file";
}

static char *join(const char *dir, const char *name)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	char *path = malloc(len);

	if (path)
		snprintf(path, len, "%s/%s", dir, name);
	return path;
}

/* The file name of the current numbered candidate. */
static char *numbered_name(const struct tr_output *o)
{
	size_t len = strlen(o->stem) + 32;
	char *name = malloc(len);

	if (!name)
		return NULL;
	if (o->number <= 1)
		snprintf(name, len, "%s.trace.zip", o->stem);
	else
		snprintf(name, len, "%s-%u.trace.zip", o->stem, o->number);
	return name;
}

/* The PID a lock file holds, or 0. */
static long lock_owner(int fd)
{
	char buf[32] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/* Takes (or, check_only, probes) the lock of archive `base` in o->dir:
 * 0 taken or free, -EBUSY with *owner set when another session holds it,
 * other -errno when the lock file cannot be used. */
static int lock_output(struct tr_output *o, const char *base, int check_only, long *owner,
		       char **lock_path)
{
	size_t len = strlen(base) + 8;
	char *name = malloc(len);
	int ret;

	*owner = 0;
	if (!name)
		return -ENOMEM;
	snprintf(name, len, ".%s.lock", base);
	*lock_path = join(o->dir, name);
	free(name);
	if (!*lock_path)
		return -ENOMEM;
	for (int attempt = 0; attempt < 10; attempt++) {
		struct stat st, now;
		int fd;

		fd = open(*lock_path, (check_only ? O_RDONLY : O_RDWR | O_CREAT) | O_NOFOLLOW |
					      O_NONBLOCK | O_CLOEXEC, 0600);
		if (fd < 0)
			return check_only && errno == ENOENT ? 0 : -errno;
		/* In a directory others can write to, the name may be theirs. */
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
			ret = fstat(fd, &st) < 0 ? -errno : -EPERM;
			close(fd);
			return ret;
		}
		if (flock(fd, (check_only ? LOCK_SH : LOCK_EX) | LOCK_NB) < 0) {
			ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
			if (ret == -EBUSY)
				*owner = lock_owner(fd);
			close(fd);
			return ret;
		}
		if (check_only) {
			close(fd);
			return 0;
		}
		/* A session that just finished unlinks its lock file after we
		 * opened it: ours would then lock nothing anyone else sees. */
		if (stat(*lock_path, &now) < 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
			close(fd);
			continue;
		}
		if (ftruncate(fd, 0) < 0 || dprintf(fd, "%ld\n", (long)getpid()) < 0) {
			ret = -errno;
			unlink(*lock_path);
			close(fd);
			return ret;
		}
		o->lock_fd = fd;
		return 0;
	}
	return -EAGAIN;
}

static int refuse(const char *given, const char *what, const char *hint)
{
	tr_err("output %s: %s (%s)", given, what, hint);
	return -EINVAL;
}

/* Splits an explicit -o into o->dir and the file name, or makes it a
 * directory to number names in.  Returns the file name (malloc'd, NULL for
 * a directory) through *base. */
static int resolve_given(struct tr_output *o, const char *given, const char *name, char **base)
{
	char why[PATH_MAX + 128];
	size_t len = strlen(given);
	const char *slash;
	struct stat st;

	*base = NULL;
	if (len == 0)
		return refuse("''", "an empty path", "give a file name, or a directory to write "
			      "<name>.trace.zip in");
	if (given[len - 1] == '/' || (stat(given, &st) == 0 && S_ISDIR(st.st_mode))) {
		while (len > 1 && given[len - 1] == '/')
			len--;
		o->dir = strndup(given, len);
		o->stem = strdup(name);
		return o->dir && o->stem ? 0 : -ENOMEM;
	}
	if (lstat(given, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(why, sizeof(why), "is %s, not a regular file; tracerig never replaces one",
			 kind_of(st.st_mode));
		return refuse(given, why, S_ISLNK(st.st_mode)
				  ? "give the path the link points to, or remove the link"
				  : "give a file name, or a directory to write <name>.trace.zip in");
	}
	slash = strrchr(given, '/');
	o->dir = slash ? strndup(given, slash == given ? 1 : (size_t)(slash - given)) : strdup(".");
	*base = strdup(slash ? slash + 1 : given);
	return o->dir && *base ? 0 : -ENOMEM;
}

/* The directory must exist and take new files: checked now, not after the
 * whole collection. */
static int check_dir(const struct tr_output *o, const char *given)
{
	char why[PATH_MAX + 128];
	struct stat st;

	if (stat(o->dir, &st) < 0) {
		snprintf(why, sizeof(why), "directory %s: %s", o->dir, strerror(errno));
		return refuse(given, why, errno == ENOENT ? "create it first, or choose another "
			      "place with -o" : "choose another place with -o");
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, sizeof(why), "%s is %s, not a directory", o->dir,
			 kind_of(st.st_mode));
		return refuse(given, why, "choose another place with -o");
	}
	if (access(o->dir, W_OK | X_OK) < 0) {
		snprintf(why, sizeof(why), "cannot write in directory %s: %s", o->dir,
			 strerror(errno));
		return refuse(given, why, "choose a writable place with -o");
	}
	return 0;
}

/* The archive named with -o: locked against other sessions. */
static int lock_given(struct tr_output *o, const char *given, const char *base, int check_only,
		      char **lock_path, char **path)
{
	long owner;
	int ret = lock_output(o, base, check_only, &owner, lock_path);

	if (ret == -EBUSY) {
		tr_err("output %s: another tracerig session (PID %ld) is writing it now (wait "
		       "for it to finish, or choose another name with -o)", given, owner);
		return ret;
	}
	if (ret < 0) {
		tr_err("output %s: cannot lock it against other sessions (%s: %s): choose "
		       "another place with -o", given, *lock_path, strerror(-ret));
		return ret;
	}
	*path = strdup(given);
	return *path ? 0 : -ENOMEM;
}

/* The default archive: NAME.trace.zip, else NAME-2.trace.zip and on, the
 * first that nobody has and nobody is writing, so never another run's. */
static int pick_numbered(struct tr_output *o, const char *shown, int check_only, char **base,
			 char **lock_path, char **path)
{
	long owner;
	int ret;

	for (o->number = 1;; o->number++) {
		struct stat st;

		if (o->number > 9999) {
			tr_err("output %s: %s.trace.zip to %s-9999.trace.zip are all taken "
			       "(move old archives away, or choose a name with -o)",
			       shown, o->stem, o->stem);
			return -EEXIST;
		}
		free(*base);
		free(*lock_path);
		*lock_path = NULL;
		*base = numbered_name(o);
		if (!*base)
			return -ENOMEM;
		free(*path);
		*path = strcmp(o->dir, ".") == 0 ? strdup(*base) : join(o->dir, *base);
		if (!*path)
			return -ENOMEM;
		if (lstat(*path, &st) == 0)
			continue;
		ret = lock_output(o, *base, check_only, &owner, lock_path);
		if (ret == -EBUSY)
			continue;
		if (ret < 0) {
			tr_err("output %s: cannot lock %s against other sessions (%s: %s): "
			       "choose another place with -o", shown, *path, *lock_path,
			       strerror(-ret));
			return ret;
		}
		break;
	}
	if (o->number > 1)
		tr_warn("%s%s%s.trace.zip exists or is being written: this run writes %s",
			strcmp(o->dir, ".") == 0 ? "" : o->dir, strcmp(o->dir, ".") == 0 ? "" : "/",
			o->stem, *path);
	return 0;
}

/* o->abs from o->path: the directory resolved once, for whoever asks from
 * another directory (`tracerig stop`, `status`, flight mode's answers). */
static int resolve_absolute(struct tr_output *o)
{
	const char *base = strrchr(o->path, '/');

	free(o->abs);
	o->abs = NULL;
	if (!o->abs_dir && !(o->abs_dir = realpath(o->dir, NULL)))
		return -errno;
	o->abs = join(o->abs_dir, base ? base + 1 : o->path);
	return o->abs ? 0 : -ENOMEM;
}

int tr_output_prepare(struct tr_output *o, const char *given, const char *name, int check_only)
{
	const char *shown = given ? given : "(default)";
	char *base = NULL, *lock_path = NULL;
	int ret;

	tr_output_release(o);
	if (given)
		ret = resolve_given(o, given, name, &base);
	else
		ret = (o->dir = strdup(".")) && (o->stem = strdup(name)) ? 0 : -ENOMEM;
	if (ret == 0)
		ret = check_dir(o, shown);
	if (ret == 0 && base)
		ret = lock_given(o, given, base, check_only, &lock_path, &o->path);
	else if (ret == 0)
		ret = pick_numbered(o, shown, check_only, &base, &lock_path, &o->path);
	if (ret == 0 && (ret = resolve_absolute(o)) < 0)
		tr_err("output %s: cannot resolve %s: %s", shown, o->dir, strerror(-ret));
	if (ret < 0)
		goto fail;
	if (!check_only) {
		o->lock_path = lock_path;
		lock_path = NULL;
	}
	free(lock_path);
	free(base);
	return 0;

fail:
	if (ret == -ENOMEM)
		tr_err("output %s: %s", shown, strerror(ENOMEM));
	free(lock_path);
	free(base);
	free(o->path);
	o->path = NULL;
	tr_output_release(o);
	return ret;
}

/* Six random letters over the six before the end of `path`. */
static void randomize(char *path)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[6];
	size_t len = strlen(path);

	if (len < 6)
		return;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		for (size_t i = 0; i < sizeof(rnd); i++)
			rnd[i] = (unsigned char)(rand() ^ getpid());
	for (size_t i = 0; i < 6; i++)
		path[len - 6 + i] = letters[rnd[i] % (sizeof(letters) - 1)];
}

int tr_output_create_temp(struct tracerig_archive *ar)
{
	char why[256];
	int fd = -1;

	for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
		/* O_EXCL|O_NOFOLLOW: a link or file planted at a guessed name is
		 * never opened, let alone truncated. */
		fd = open(ar->output, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
		if (fd < 0)
			randomize(ar->output);
	}
	if (fd < 0) {
		int err = -errno;

		tr_err("cannot create the temporary archive %s: %s", ar->output,
		       tr_output_strerror(err, why, sizeof(why)));
		return err;
	}
	close(fd);
	return 0;
}

int tr_output_commit(struct tr_output *o, struct tracerig_archive *ar)
{
	char **path = &o->path;
	char why[256];
	struct stat st;
	int ret = 0;

	for (;;) {
		if (!o->stem) {
			/* Named explicitly: replace a regular file, nothing else. */
			if (lstat(*path, &st) == 0 && !S_ISREG(st.st_mode)) {
				tr_err("cannot move the archive to %s: it is now %s, which tracerig "
				       "never replaces", *path, kind_of(st.st_mode));
				ret = -EEXIST;
			} else if (rename(ar->output, *path) < 0) {
				ret = -errno;
				tr_err("cannot move the archive to %s: %s", *path,
				       tr_output_strerror(ret, why, sizeof(why)));
			}
			break;
		}
		/* Numbered: never over an archive that appeared meanwhile. */
		if (renameat2(AT_FDCWD, ar->output, AT_FDCWD, *path, RENAME_NOREPLACE) == 0)
			break;
		if (errno == EINVAL) {
			/* A file system without RENAME_NOREPLACE: link() fails
			 * on an existing name just the same. */
			if (link(ar->output, *path) == 0) {
				unlink(ar->output);
				break;
			}
		}
		if (errno != EEXIST) {
			ret = -errno;
			tr_err("cannot move the archive to %s: %s", *path,
			       tr_output_strerror(ret, why, sizeof(why)));
			break;
		}
		o->number++;
		char *name = numbered_name(o),
		     *next = name ? (strcmp(o->dir, ".") == 0 ? strdup(name) : join(o->dir, name))
				  : NULL;
		free(name);
		if (!next) {
			ret = -ENOMEM;
			break;
		}
		tr_warn("%s appeared during the session: writing %s instead", *path, next);
		free(*path);
		*path = next;
	}
	if (ret == 0)
		ret = resolve_absolute(o);
	if (ret < 0)
		unlink(ar->output);
	return ret;
}

void tr_output_release(struct tr_output *o)
{
	if (!o)
		return;
	if (o->lock_fd >= 0) {
		/* Unlinked while still locked: a session waiting on this inode
		 * sees it is gone (lock_output checks). */
		if (o->lock_path)
			unlink(o->lock_path);
		close(o->lock_fd);
	}
	free(o->lock_path);
	free(o->dir);
	free(o->stem);
	o->lock_path = o->dir = o->stem = NULL;
	o->lock_fd = -1;
	o->number = 0;
}

void tr_output_free(struct tr_output *o)
{
	if (!o)
		return;
	tr_output_release(o);
	free(o->path);
	free(o->abs_dir);
	free(o->abs);
	free(o);
}

const char *tr_output_path(const struct tr_output *o)
{
	return o ? o->path : NULL;
}

const char *tr_output_absolute(const struct tr_output *o)
{
	return o ? o->abs : NULL;
}

const char *tr_output_absolute_dir(const struct tr_output *o)
{
	return o ? o->abs_dir : NULL;
}

int tr_output_written(struct tr_output *o, const char *path)
{
	char *copy, *abs;

	/* Snapshots are named in the absolute directory resolved once: a
	 * relative name here would be resolved against a working directory
	 * that plays no part. */
	if (path[0] != '/')
		return -EINVAL;
	copy = strdup(path);
	abs = strdup(path);
	if (!copy || !abs) {
		free(copy);
		free(abs);
		return -ENOMEM;
	}
	free(o->path);
	o->path = copy;
	free(o->abs);
	o->abs = abs;
	return 0;
}

const char *tr_output_what_is(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? kind_of(st.st_mode) : NULL;
}

int tr_output_open_temp(const char *dir, const char *name, mode_t mode, char **tmp)
{
	size_t len = strlen(dir) + strlen(name) + 16;
	int fd = -1;

	*tmp = malloc(len);
	if (!*tmp)
		return -ENOMEM;
	snprintf(*tmp, len, "%s/.%s.XXXXXX", dir, name);
	for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
		randomize(*tmp);
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int err = -errno;

		free(*tmp);
		*tmp = NULL;
		return err;
	}
	return fd;
}

int tr_output_place(const char *tmp, const char *final, int replace, const char **what)
{
	struct stat st;

	*what = NULL;
	if (replace) {
		if (lstat(final, &st) == 0 && !S_ISREG(st.st_mode)) {
			*what = kind_of(st.st_mode);
			return -EEXIST;
		}
		return rename(tmp, final) < 0 ? -errno : 0;
	}
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EINVAL && link(tmp, final) == 0) {
		unlink(tmp);
		return 0;
	}
	{
		int err = -errno;

		if (err == -EEXIST)
			*what = tr_output_what_is(final);
		return err;
	}
}

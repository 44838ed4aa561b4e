#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "core/log.h"
#include "ctx.h"
#include "flight.h"
#include "lib/fdio.h"
#include "lib/vec.h"

/* Waiting control connections beyond this many are answered at once. */
#define MAX_WAITERS 16

struct tr_flight {
	uint64_t window_ns;
	long long keep;
	const char *dir; /* the output's absolute directory, which it keeps
	                  * for the session: resolved once, never copied */
	char name[256];
	enum tr_trigger pending;
	char pending_why[256];
	const struct tr_snapshot *current; /* being written */
	int waiters[MAX_WAITERS];
	size_t n_waiters;
	unsigned seq;
};

struct tr_flight *tr_flight_new(void)
{
	return calloc(1, sizeof(struct tr_flight));
}

const char *tr_trigger_name(enum tr_trigger t)
{
	switch (t) {
	case TR_TRIGGER_NONE: return "none";
	case TR_TRIGGER_SIGUSR1: return "SIGUSR1";
	case TR_TRIGGER_CONTROL: return "tracerig snapshot";
	case TR_TRIGGER_STOP: return "stop";
	case TR_TRIGGER_CPU: return "cpu";
	case TR_TRIGGER_CRASH: return "crash";
	}
	return "?";
}

int tr_flight_configure(struct tr_flight *f, long long window_ms, long long keep, const char *given,
			const char *dir, const char *name)
{
	struct stat st;

	if (given && (stat(given, &st) < 0 || !S_ISDIR(st.st_mode))) {
		tr_err("[tracerig] mode = flight writes one archive per snapshot: output (-o) must "
		       "name an existing directory, and %s is not one",
		       given);
		return -ENOTDIR;
	}
	/* Resolved (and checked writable) once, with the output: answers go
	 * to `tracerig snapshot` callers in other directories. */
	if (!dir)
		return -EINVAL;
	f->dir = dir;
	snprintf(f->name, sizeof(f->name), "%s", name ? name : "tracerig");
	f->window_ns = (uint64_t)window_ms * 1000000ull;
	f->keep = keep;
	return 0;
}

uint64_t tr_flight_window_ns(const struct tr_flight *f)
{
	return f->window_ns;
}

const char *tr_flight_dir(const struct tr_flight *f)
{
	return f->dir;
}

int tr_flight_supported(const struct tracerig_ctx *ctx)
{
	return (ctx->plugin->caps & TRACERIG_CAP_FLIGHT) && ctx->plugin->snapshot;
}

void tr_flight_request(struct tr_flight *f, enum tr_trigger t, int reply_fd)
{
	/* Triggers that come while one waits make one snapshot: the window
	 * is the same moment's. */
	if (f->pending == TR_TRIGGER_NONE)
		f->pending = t;
	if (reply_fd < 0)
		return;
	if (f->n_waiters == MAX_WAITERS) {
		(void)tr_control_send(reply_fd, "failed: too many snapshots asked at once; ask again");
		close(reply_fd);
		return;
	}
	f->waiters[f->n_waiters++] = reply_fd;
}

void tr_flight_request_why(struct tr_flight *f, enum tr_trigger t, const char *why)
{
	if (f->pending == TR_TRIGGER_NONE)
		snprintf(f->pending_why, sizeof(f->pending_why), "%s", why ? why : "");
	tr_flight_request(f, t, -1);
}

enum tr_trigger tr_flight_pending(const struct tr_flight *f)
{
	return f->pending;
}

/* ---- one snapshot ---- */

int tr_snapshot_begin(struct tr_flight *f, struct tr_snapshot *snap, enum tr_trigger t,
		      uint64_t from_ns, uint64_t to_ns)
{
	struct timespec real, mono;
	uint64_t real_ns, mono_ns;
	char where[PATH_MAX];
	int ret;

	memset(snap, 0, sizeof(*snap));
	snap->flight = f;
	f->current = snap;
	snap->trigger = t;
	if (t == f->pending)
		snprintf(snap->why, sizeof(snap->why), "%s", f->pending_why);
	snap->seq = ++f->seq;
	snap->from_ns = from_ns;
	snap->to_ns = to_ns;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	real_ns = (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec;
	mono_ns = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
	snap->to_real_ns = real_ns - (mono_ns - to_ns);
	snap->from_real_ns = snap->to_real_ns - (to_ns - from_ns);
	/* Whoever waits now is answered by this snapshot; later requests make
	 * the next one. */
	f->pending = TR_TRIGGER_NONE;
	f->pending_why[0] = '\0';
	snap->waiters = malloc(sizeof(int) * (f->n_waiters ? f->n_waiters : 1));
	if (snap->waiters) {
		memcpy(snap->waiters, f->waiters, sizeof(int) * f->n_waiters);
		snap->n_waiters = f->n_waiters;
		f->n_waiters = 0;
	}
	if (snprintf(where, sizeof(where), "%s/%s.trace.zip", f->dir, f->name) >=
	    (int)sizeof(where))
		ret = -ENAMETOOLONG;
	else
		ret = tr_staging_create(&snap->ar, where);
	if (ret < 0)
		tr_err("snapshot: cannot create a staging directory in %s: %s", tr_staging_parent(),
		       strerror(-ret));
	return ret;
}

void tr_snapshot_copy_log(struct tr_snapshot *snap, const char *log_path)
{
	int in = open(log_path, O_RDONLY | O_CLOEXEC), out, ret;

	if (in < 0)
		return;
	out = tr_staging_create_entry(&snap->ar, "tracerig.log");
	if (out < 0) {
		close(in);
		return;
	}
	if ((ret = tr_copy_fd(in, out)) < 0)
		tr_warn("snapshot: cannot copy the run log: %s", strerror(-ret));
	close(in);
	if (close(out) < 0)
		tr_warn("snapshot: cannot copy the run log: %s", strerror(errno));
}

int tr_snapshot_temp(struct tr_snapshot *snap)
{
	int fd = open(snap->ar.output, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0) {
		int err = -errno;

		tr_err("snapshot: cannot create %s: %s", snap->ar.output, strerror(-err));
		return err;
	}
	close(fd);
	return 0;
}

/* <name>-YYYYmmddTHHMMSSZ.trace.zip, or ...Z-N.trace.zip after a clash. */
static int archive_name_matches(const struct tr_flight *f, const char *file)
{
	size_t nl = strlen(f->name), len = strlen(file);
	const char *p = file + nl + 1;

	if (len < nl + 1 + 16 + 10 || strncmp(file, f->name, nl) != 0 || file[nl] != '-' ||
	    strcmp(file + len - 10, ".trace.zip") != 0)
		return 0;
	for (int i = 0; i < 16; i++) {
		char c = p[i];

		if (i == 8 ? c != 'T' : i == 15 ? c != 'Z' : (c < '0' || c > '9'))
			return 0;
	}
	p += 16;
	if (*p == '-')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	return strcmp(p, ".trace.zip") == 0;
}

struct archive_file {
	char *name;
	struct timespec mtime;
};

static int older_first(const void *a, const void *b)
{
	const struct archive_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	/* Same instant: "...Z" before "...Z-2". */
	if (strlen(x->name) != strlen(y->name))
		return strlen(x->name) < strlen(y->name) ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Whether apply_keep may count and remove an archive found in the output
 * directory.  Only our own: a regular file (not a link: what it points to
 * is no archive of ours), owned by the uid the session runs as.  That
 * takes in the archives of a previous run of the same service (a service
 * restarted keeps its bound), and never a file of another user's, which
 * in a shared directory (mode 1777, /tmp) anyone can name like ours.  Not
 * counting those matters as much as not removing them: newer ones would
 * otherwise push every archive of ours out of the bound.  The sticky bit
 * keeps others from replacing a file of ours between this check and the
 * removal (they can neither rename over nor remove it); without it, whoever
 * can write there can remove any file anyway. */
static int ours(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid();
}

/* keep = N: the oldest archives of this name (and ours, see ours()) beyond
 * N go. */
static void apply_keep(const struct tr_flight *f)
{
	struct archive_file *files = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int dfd;

	if (f->keep <= 0 || !(d = opendir(f->dir)))
		return;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		struct archive_file *grown;
		struct stat st;

		if (!archive_name_matches(f, de->d_name) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !ours(&st))
			continue;
		grown = tr_vec_grow(files, &cap, n + 1, sizeof(*files), 16);
		if (!grown)
			break;
		files = grown;
		files[n].name = strdup(de->d_name);
		files[n].mtime = st.st_mtim;
		if (files[n].name)
			n++;
	}
	qsort(files, n, sizeof(*files), older_first);
	for (size_t i = 0; n > (size_t)f->keep && i < n - (size_t)f->keep; i++) {
		if (unlinkat(dfd, files[i].name, 0) < 0)
			tr_warn("keep = %lld: cannot remove %s/%s: %s", f->keep, f->dir,
				files[i].name, strerror(errno));
		else
			tr_info("keep = %lld: removed the older archive %s/%s", f->keep, f->dir,
				files[i].name);
	}
	for (size_t i = 0; i < n; i++)
		free(files[i].name);
	free(files);
	closedir(d);
}

/* Never replaces a file: renameat2's RENAME_NOREPLACE, else link. */
static int move_no_replace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (link(from, to) < 0)
		return -errno;
	unlink(from);
	return 0;
}

int tr_snapshot_commit(struct tr_snapshot *snap)
{
	const struct tr_flight *f = snap->flight;
	time_t t = (time_t)(snap->to_real_ns / 1000000000ull);
	char stamp[32], path[PATH_MAX];
	struct tm tm;
	int ret = -EEXIST;

	if (!gmtime_r(&t, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		snprintf(stamp, sizeof(stamp), "%lld", (long long)t);
	for (unsigned n = 1; n < 1000 && ret == -EEXIST; n++) {
		int len;

		if (n == 1)
			len = snprintf(path, sizeof(path), "%s/%s-%s.trace.zip", f->dir, f->name,
				       stamp);
		else
			len = snprintf(path, sizeof(path), "%s/%s-%s-%u.trace.zip", f->dir, f->name,
				       stamp, n);
		ret = len < 0 || len >= (int)sizeof(path) ? -ENAMETOOLONG
							   : move_no_replace(snap->ar.output, path);
	}
	if (ret < 0) {
		tr_err("snapshot: cannot move the archive to %s: %s", path, strerror(-ret));
		unlink(snap->ar.output);
		return ret;
	}
	snap->path = strdup(path);
	if (!snap->path)
		return -ENOMEM;
	apply_keep(snap->flight);
	return 0;
}

int tr_flight_archive_window(const struct tr_flight *f, const struct tracerig_archive *ar,
			     struct tracerig_window *out)
{
	const struct tr_snapshot *snap = f->current;

	if (!snap || ar != &snap->ar)
		return -ENOENT;
	out->start_ns = snap->from_ns;
	out->end_ns = snap->to_ns;
	out->start_real_ns = (int64_t)snap->from_real_ns;
	return 0;
}

void tr_snapshot_end(struct tr_snapshot *snap, int ok, int keep_staging, char **path_out)
{
	char line[PATH_MAX + 32];

	if (snap->flight->current == snap)
		snap->flight->current = NULL;

	for (size_t i = 0; i < snap->n_waiters; i++) {
		if (ok && snap->path)
			snprintf(line, sizeof(line), "archive: %s", snap->path);
		else
			snprintf(line, sizeof(line), "failed: the snapshot could not be written "
				 "(see the session's log)");
		if (tr_control_send(snap->waiters[i], line) < 0)
			tr_log(TRACERIG_LOG_DEBUG, NULL, "a snapshot's caller left before its answer");
		close(snap->waiters[i]);
	}
	free(snap->waiters);
	snap->waiters = NULL;
	snap->n_waiters = 0;
	if (snap->ar.dir) {
		if (keep_staging)
			tr_info("snapshot staging kept in %s", snap->ar.dir);
		else
			tr_staging_remove(&snap->ar);
	}
	if (snap->ar.output && !ok)
		unlink(snap->ar.output);
	tr_staging_free(&snap->ar);
	if (path_out)
		*path_out = snap->path;
	else
		free(snap->path);
	snap->path = NULL;
}

/* ---- the thread that runs the callbacks ---- */

struct tr_flight_job {
	struct tracerig_ctx **ctxs;
	size_t n;
	int *rets;
	struct tr_snapshot *snap;
	int done_fd;
	pthread_t thread;
	atomic_int current; /* index of the callback running, -1 when none */
	atomic_int done;
};

static void *job_main(void *arg)
{
	struct tr_flight_job *job = arg;
	uint64_t one = 1;

	for (size_t i = 0; i < job->n; i++) {
		const struct tracerig_ctx *ctx = job->ctxs[i];

		if (!tr_flight_supported(ctx) || !ctx->state) {
			job->rets[i] = -ENOTSUP;
			continue;
		}
		atomic_store(&job->current, (int)i);
		job->rets[i] = ctx->plugin->snapshot(ctx->state, &job->snap->ar, job->snap->from_ns,
						     job->snap->to_ns);
	}
	atomic_store(&job->current, -1);
	atomic_store(&job->done, 1);
	if (write(job->done_fd, &one, sizeof(one)) < 0) {
		/* the session polls `done` on its timeout too */
	}
	return NULL;
}

int tr_flight_job_start(struct tracerig_ctx *const *ctxs, size_t n, struct tr_snapshot *snap,
			struct tr_flight_job **out)
{
	struct tr_flight_job *job = calloc(1, sizeof(*job));
	int ret;

	*out = NULL;
	if (!job)
		return -ENOMEM;
	job->ctxs = calloc(n ? n : 1, sizeof(*job->ctxs));
	job->rets = calloc(n ? n : 1, sizeof(*job->rets));
	job->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!job->ctxs || !job->rets || job->done_fd < 0) {
		ret = job->done_fd < 0 && job->ctxs && job->rets ? -errno : -ENOMEM;
		goto fail;
	}
	memcpy(job->ctxs, ctxs, n * sizeof(*ctxs));
	job->n = n;
	job->snap = snap;
	atomic_init(&job->current, -1);
	atomic_init(&job->done, 0);
	ret = -pthread_create(&job->thread, NULL, job_main, job);
	if (ret < 0)
		goto fail;
	(void)pthread_setname_np(job->thread, "tr-snapshot");
	*out = job;
	return 0;
fail:
	if (job->done_fd >= 0)
		close(job->done_fd);
	free(job->ctxs);
	free(job->rets);
	free(job);
	return ret;
}

int tr_flight_job_fd(const struct tr_flight_job *job)
{
	return job->done_fd;
}

int tr_flight_job_done(struct tr_flight_job *job, int *rets)
{
	if (!atomic_load(&job->done))
		return 0;
	memcpy(rets, job->rets, job->n * sizeof(*rets));
	return 1;
}

struct tracerig_ctx *tr_flight_job_current(struct tr_flight_job *job)
{
	int i = atomic_load(&job->current);

	return i >= 0 ? job->ctxs[i] : NULL;
}

void tr_flight_job_end(struct tr_flight_job *job)
{
	if (!job || !atomic_load(&job->done))
		return; /* its thread may be frozen in a plugin: leave it be */
	pthread_join(job->thread, NULL);
	close(job->done_fd);
	free(job->ctxs);
	free(job->rets);
	free(job);
}

void tr_flight_free(struct tr_flight *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_waiters; i++) {
		(void)tr_control_send(f->waiters[i], "failed: the session ended before the "
						     "snapshot was taken");
		close(f->waiters[i]);
	}
	free(f);
}

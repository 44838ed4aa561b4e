/* Staged entries deflated while they grow (see stream.h).
 *
 * One thread follows every declared entry: each round (TR_STREAM_POLL_MS
 * apart, or at once when a round found much to do) it deflates what was
 * appended to each file since the last round, up to the file's current
 * size (at most ROUND_MAX of it while collecting), into that entry's
 * side file, then ends the round's input with a sync flush.  Only then
 * does the entry's `to` (and the CRC and the side file's length that go
 * with it) advance, under the lock: what the packager reads is always
 * whole sync-flushed pieces, byte aligned and not final.  Bytes on disk
 * below the file's size are final, since the source only appends past
 * `from`.  The thread checks for the stop between reads of
 * TR_ZPIECE_IN_SIZE, so stopping it takes at most one read's deflate (a
 * few milliseconds); what it did not get to is the tail the packager
 * deflates.
 *
 * It runs at nice 19 while collecting: deflate is the work that may wait.
 * Once collection ends it goes back to the session's priority (within the
 * round in hand), as what it has not done is then on the way to the
 * archive, and follows the files more closely
 * (sources also write entries in their flush, e.g. perf.data.txt, which it
 * deflates on the other CPU while they are written).  It never waits for
 * a source, and a source never waits for it; if it falls behind, the tail
 * is longer, never wrong.  A read or write error breaks that
 * entry's stream (the packager deflates the whole entry, as without
 * streaming) and nothing else. */
#include "config.h"

#include "core/log.h"
#include "lib/priority.h"
#include "lib/zpiece.h"
#include "stream.h"
#include "writeback.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracerig-private/ext.h"

_Static_assert(TRACERIG_DEFLATE_FAST == TR_ZPIECE_FAST,
	       "the ABI's and lib/zpiece's flags for ISA-L are one");

#define TR_STREAM_POLL_MS 1000
#define TR_STREAM_ENDED_POLL_MS 50
/* Freed at most this much at a time (save_and_free). */
#define PUNCH_STEP (256u << 10)
/* Deflated bytes left to the kernel's flusher before the thread writes
 * them back itself to free them: the staging's bound, beside what is not
 * deflated yet. */
#define FORCE_WRITEBACK_ABOVE (64ull << 20)
/* A round takes at most this much of one entry while collecting.  An
 * encoder slower than the source (zlib at nice 19 beside a busy workload
 * deflates a few MiB/s of a dwarf recording's 16) would otherwise make
 * each round take all that piled up while the last one ran: pieces of
 * hundreds of MiB, nothing freed until each ends, and the other entries
 * not followed for minutes. */
#define ROUND_MAX (64ull << 20)

/* What the rounds made of an entry, rewritten after each one beside the
 * side file (NAME.state): the watchdog packaging a collector that died
 * uses the pieces too, as it must once the staged file's deflated range
 * was freed (tr_stream_release).  Never ahead of the side file. */
#define STATE_MAGIC "trstrm1"

struct state_rec {
	char magic[8];
	uint64_t from, to, comp_size, pieces, dev, ino;
	uint32_t crc, level;
	char name[256];
	uint32_t check; /* CRC-32 of the bytes before it: not torn, not stale */
};

struct entry {
	char *name;            /* staged name */
	char path[PATH_MAX];   /* the staged file */
	char side[PATH_MAX];   /* its deflated middle */
	char state[PATH_MAX];  /* its state_rec */
	int in_fd, out_fd, state_fd;
	int punch_fd;          /* the staged file for writing, once freeing; -1 */
	dev_t dev;
	ino_t ino;
	struct tr_zpiece z;    /* the thread's; `taken` is z.in past `from` */
	uint64_t from;
	/* Under the lock: the last sync point. */
	uint64_t to, comp_size;
	uint32_t crc;
	uint64_t pieces;
	int broken;            /* an error: the packager does it all */
	int err;
	/* Freeing the staged file's deflated bytes: the source reads none
	 * below `released` again (under the lock); the thread's own: bytes
	 * below `freed` are gone, `saved` is the `to` the state file has. */
	uint64_t released, freed, saved;
	int no_freeing;        /* said once: the file system cannot, or no state */
	struct tr_stream *st;  /* whose entry it is */
};

struct tr_stream {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int level;
	int stopping, running, stopped;
	int ended; /* collection ended: the thread is on the way to the archive */
	/* The thread's alone: 1 at nice 19, 2 back at session_nice. */
	int niced, session_nice;
	pid_t tid;
	pthread_t thread;
	struct entry *e[TR_STREAM_MAX];
	size_t n;
	/* The test hook, TRACERIG_TEST_STREAM: "drain" deflates whatever is
	 * there when stopped (so that a test does not depend on how much the
	 * thread got to under load); "fault" also makes every stream's
	 * first piece fail as a write error would; "force" (with either)
	 * frees what was deflated without waiting for the kernel's flusher
	 * to write it back, as on a kernel without cachestat. */
	int test_drain, test_fault, test_force;
	int may_free; /* tr_stream_may_free */
};

struct tr_stream *tr_stream_new(void)
{
	struct tr_stream *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->wake, NULL);
	return st;
}

int tr_stream_set_level(struct tr_stream *st, int level)
{
	int ret = level ? tr_zpiece_level_ok(level) : 0;

	if (ret)
		return ret;
	pthread_mutex_lock(&st->lock);
	st->level = level;
	pthread_mutex_unlock(&st->lock);
	return 0;
}

/* Low priority while collecting: the traced work and the collector come
 * first.  Once collection ended, what the thread has not deflated is on
 * the way to the archive: back to the session's priority at once, within
 * the round in hand (allowed with CAP_SYS_NICE or RLIMIT_NICE; else it
 * stays). */
static void follow_priority(struct tr_stream *st, int ended)
{
	if (!st->niced && !ended) {
		st->tid = tr_priority_background(&st->session_nice);
		st->niced = 1;
	} else if (st->niced == 1 && ended) {
		(void)tr_priority_restore(st->tid, st->session_nice);
		st->niced = 2;
	}
}

static void fill_state(struct state_rec *r, const struct entry *e)
{
	const struct tr_stream *st = e->st;
	memset(r, 0, sizeof(*r));
	memcpy(r->magic, STATE_MAGIC, sizeof(STATE_MAGIC));
	r->from = e->from;
	r->to = e->to;
	r->comp_size = e->comp_size;
	r->pieces = e->pieces;
	r->dev = (uint64_t)e->dev;
	r->ino = (uint64_t)e->ino;
	r->crc = e->crc;
	r->level = (uint32_t)st->level;
	snprintf(r->name, sizeof(r->name), "%s", e->name);
	r->check = (uint32_t)crc32(0, (const Bytef *)r, offsetof(struct state_rec, check));
}

/* Freeing failed (errno says why): what is left stays until packaging. */
static void stop_freeing(struct entry *e)
{
	tr_log(TRACERIG_LOG_DEBUG, NULL, "%s: its deflated part stays on disk until packaging: %s",
	       e->name, strerror(errno));
	e->no_freeing = 1;
}

/* The side file to punch, opened once: the file followed, not one put in
 * its place since.  -1 (errno set) when it cannot be. */
static int punch_fd_of(struct entry *e)
{
	struct stat sb;

	if (e->punch_fd >= 0)
		return e->punch_fd;
	e->punch_fd = open(e->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (e->punch_fd >= 0 &&
	    (fstat(e->punch_fd, &sb) < 0 || sb.st_dev != e->dev || sb.st_ino != e->ino)) {
		close(e->punch_fd);
		e->punch_fd = -1;
		errno = ESTALE;
	}
	return e->punch_fd;
}

/* Punches [start, end) out of the side file, as far as it was written
 * back.  ext4 writes a dirty range back before punching it, holding the
 * inode's lock, which the source's next write() waits for.  So a
 * range is punched once the kernel's flusher has written it back
 * (dirty_expire_centisecs after it was written, 30 s by default):
 * forcing the writeback here would only make this thread pay for
 * the disk writes the flusher makes for any recorder.  Past
 * FORCE_WRITEBACK_ABOVE of deflated bytes waiting (a dwarf recording
 * writes 16 MiB/s), or where the kernel cannot tell (no cachestat),
 * the thread forces the oldest, waiting for it without the lock.
 * 256 KiB at a time, at the session's priority: at nice 19 beside a
 * busy workload it was preempted for long while it held the file's
 * lock or a journal handle, and perf_events' rings' thread, writing
 * perf.data, waited behind it (a dwarf recording at 16 MiB/s beside
 * two spinning threads lost 806 and 1837 samples in 120 s; none so).
 * Where it may not come back from nice 19, nothing is freed. */
static void punch_released(struct entry *e, uint64_t start, uint64_t end)
{
	struct tr_stream *st = e->st;
	int raised = 0;

	for (uint64_t at = start; at < end; at += PUNCH_STEP) {
		uint64_t n = end - at < PUNCH_STEP ? end - at : PUNCH_STEP;
		int64_t unwritten =
			st->test_force ? -ENOSYS : tr_unwritten_pages(e->punch_fd, at, n);

		if (unwritten > 0 && end - at <= FORCE_WRITEBACK_ABOVE)
			break;
		if (!raised) {
			int ret =
				st->niced == 1 ? tr_priority_restore(st->tid, st->session_nice) : 0;

			if (ret < 0) {
				tr_log(TRACERIG_LOG_INFO, NULL, "%s: its deflated part stays on disk "
				       "until packaging: freeing it needs the thread back at the "
				       "session's priority (CAP_SYS_NICE): %s", e->name, strerror(-ret));
				e->no_freeing = 1;
				return;
			}
			raised = 1;
		}
		if (unwritten != 0)
			(void)sync_file_range(e->punch_fd, (off_t)at, (off_t)n,
					      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
						      SYNC_FILE_RANGE_WAIT_AFTER);
		if (fallocate(e->punch_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)at,
			      (off_t)n) < 0) {
			stop_freeing(e);
			break;
		}
		e->freed = at + n;
	}
	if (raised && st->niced == 1)
		(void)tr_priority_restore(st->tid, TR_BACKGROUND_NICE);
}

/* After a round: the state file says what the side file now holds (one
 * write of one record, after the pieces were written), then the staged
 * bytes the source released and the state covers are freed.  A failure
 * stops the freeing, never the stream: what is not freed is still
 * there for a whole deflate. */
static void save_and_free(struct entry *e)
{
	struct tr_stream *st = e->st;
	struct state_rec r;
	uint64_t released, start, end;

	fill_state(&r, e);
	if (e->state_fd < 0 || pwrite(e->state_fd, &r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		e->no_freeing = 1;
		return;
	}
	e->saved = e->to;
	/* Once collection ended the staging goes soon: nothing to gain, and
	 * the end would wait for the writeback below. */
	pthread_mutex_lock(&st->lock);
	released = st->may_free && !st->ended ? e->released : 0;
	pthread_mutex_unlock(&st->lock);
	if (e->no_freeing)
		return;
	/* Whole blocks only: punching a part of one zeroes that part. */
	start = (e->freed > e->from ? e->freed : e->from + 4095) & ~(uint64_t)4095;
	end = (released < e->saved ? released : e->saved) & ~(uint64_t)4095;
	if (end <= start)
		return;
	if (punch_fd_of(e) < 0) {
		stop_freeing(e);
		return;
	}
	punch_released(e, start, end);
}

/* One round for one entry: deflates [to, size), at most ROUND_MAX of it
 * but when draining, and sync-flushes.  The thread alone writes z and the
 * files; the lock guards what the packager reads.  Returns the bytes
 * taken, or a negative errno (the stream broke). */
static int64_t round_of(struct entry *e, int *stop, int drain)
{
	struct tr_stream *st = e->st;
	struct stat sb;
	uint64_t at = e->from + e->z.in, taken = 0, until;
	int64_t n;
	int err;

	if (fstat(e->in_fd, &sb) < 0)
		return -errno;
	if ((uint64_t)sb.st_size < at)
		return -ESPIPE; /* it shrank: not append-only after all */
	until = (uint64_t)sb.st_size;
	if (!drain && until - at > ROUND_MAX)
		until = at + ROUND_MAX;
	while (at + taken < until) {
		int ended;

		pthread_mutex_lock(&st->lock);
		*stop = st->stopping && !drain;
		ended = st->ended;
		pthread_mutex_unlock(&st->lock);
		follow_priority(st, ended);
		if (*stop)
			break;
		n = tr_zpiece_feed_fd(&e->z, e->in_fd, at + taken,
				      until - at - taken < TR_ZPIECE_IN_SIZE
				      ? until - at - taken : TR_ZPIECE_IN_SIZE);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		taken += (uint64_t)n;
	}
	if (!taken)
		return 0;
	if (st->test_fault)
		return -EIO;
	err = tr_zpiece_flush(&e->z, 0);
	if (err)
		return err;
	pthread_mutex_lock(&st->lock);
	e->to = e->from + e->z.in;
	e->comp_size = e->z.out;
	e->crc = e->z.crc;
	e->pieces++;
	pthread_mutex_unlock(&st->lock);
	save_and_free(e);
	return (int64_t)taken;
}

static void *stream_thread(void *arg)
{
	struct tr_stream *st = arg;
	int drain = 0, ended;

	for (;;) {
		uint64_t busy = 0;
		int stop = 0;
		size_t n;

		pthread_mutex_lock(&st->lock);
		n = st->n;
		stop = st->stopping;
		ended = st->ended;
		/* The test hook: one last round over everything there. */
		if (stop && st->test_drain && !drain)
			drain = 1, stop = 0;
		pthread_mutex_unlock(&st->lock);
		follow_priority(st, ended);
		for (size_t i = 0; i < n && !stop; i++) {
			struct entry *e = st->e[i];
			int64_t got;

			if (e->broken)
				continue;
			got = round_of(e, &stop, drain);
			if (got < 0) {
				pthread_mutex_lock(&st->lock);
				e->broken = 1;
				e->err = (int)-got;
				pthread_mutex_unlock(&st->lock);
				tr_log(TRACERIG_LOG_WARN, NULL, "%s: deflating it as it grows stopped: "
				       "%s (it is deflated whole when packaged)", e->name,
				       strerror((int)-got));
				continue;
			}
			busy += (uint64_t)got;
		}
		if (drain)
			break;
		pthread_mutex_lock(&st->lock);
		if (!st->stopping && busy < 4 * (uint64_t)TR_ZPIECE_IN_SIZE) {
			struct timespec ts;

			/* Sources write fast after collection (their flush):
			 * follow them closely then. */
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += (st->ended ? TR_STREAM_ENDED_POLL_MS : TR_STREAM_POLL_MS) *
				      1000000L;
			ts.tv_sec += ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
			pthread_cond_timedwait(&st->wake, &st->lock, &ts);
		}
		stop = st->stopping && !(st->test_drain && !drain);
		pthread_mutex_unlock(&st->lock);
		if (stop)
			break;
	}
	return NULL;
}

static void entry_free(struct entry *e)
{
	if (!e)
		return;
	tr_zpiece_end(&e->z);
	if (e->in_fd >= 0)
		close(e->in_fd);
	if (e->out_fd >= 0)
		close(e->out_fd);
	if (e->state_fd >= 0)
		close(e->state_fd);
	if (e->punch_fd >= 0)
		close(e->punch_fd);
	free(e->name);
	free(e);
}

/* The side file's name (`suffix` .deflate) or its state's (.state): the
 * entry's with '/' made '%' (names are relative paths without "..",
 * name_ok). */
static int side_path(char *out, size_t len, const char *staging_dir, const char *name,
		     const char *suffix)
{
	int n = snprintf(out, len, "%s/" TR_STREAM_DIR "/", staging_dir);
	size_t at = (size_t)n;

	if (n < 0 || at >= len)
		return -ENAMETOOLONG;
	for (const char *p = name; *p; p++) {
		if (at + strlen(suffix) >= len)
			return -ENAMETOOLONG;
		out[at++] = *p == '/' ? '%' : *p;
	}
	memcpy(out + at, suffix, strlen(suffix) + 1);
	return 0;
}

/* A staged entry's name: relative, no way out of the staging directory. */
static int name_ok(const char *name)
{
	return name && *name && name[0] != '/' && !strstr(name, "..");
}

/* 0 when `name` may be followed now, the compression level in *level. */
static int may_follow(struct tr_stream *st, const char *name, int *level)
{
	int ret;

	pthread_mutex_lock(&st->lock);
	*level = st->level;
	ret = st->stopped ? -EPERM : st->n == TR_STREAM_MAX ? -ENOSPC : 0;
	for (size_t i = 0; !ret && i < st->n; i++)
		if (strcmp(st->e[i]->name, name) == 0)
			ret = -EEXIST;
	pthread_mutex_unlock(&st->lock);
	if (!ret && !*level)
		ret = -ENOTSUP;
	return ret;
}

/* The staged file (the one that is there now, regular), the side file
 * its pieces go to and the state file that says what those hold. */
static int entry_open_files(struct entry *e, const char *staging_dir, const char *name, int level)
{
	char dir[PATH_MAX];
	struct stat sb;
	int ret;

	if (!(e->name = strdup(name)))
		return -ENOMEM;
	if (snprintf(e->path, sizeof(e->path), "%s/%s", staging_dir, name) >=
		    (int)sizeof(e->path) ||
	    snprintf(dir, sizeof(dir), "%s/" TR_STREAM_DIR, staging_dir) >= (int)sizeof(dir) ||
	    (ret = side_path(e->side, sizeof(e->side), staging_dir, name, ".deflate")) < 0 ||
	    (ret = side_path(e->state, sizeof(e->state), staging_dir, name, ".state")) < 0)
		return -ENAMETOOLONG;
	e->in_fd = open(e->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (e->in_fd < 0 || fstat(e->in_fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		return e->in_fd < 0 ? -errno : -EINVAL;
	e->dev = sb.st_dev;
	e->ino = sb.st_ino;
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) ||
	    (e->out_fd = open(e->side, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			      0600)) < 0)
		return -errno;
	ret = tr_zpiece_begin(&e->z, level, e->out_fd);
	if (ret < 0)
		return ret;
	/* Without it nothing is freed (save_and_free): not fatal. */
	e->state_fd = open(e->state, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (e->state_fd < 0)
		e->no_freeing = 1;
	return 0;
}

/* The entry in the thread's list, the thread started with the first. */
static int entry_enlist(struct entry *e)
{
	struct tr_stream *st = e->st;
	int ret = 0;

	pthread_mutex_lock(&st->lock);
	st->e[st->n++] = e;
	/* An entry declared as a flush begins writing it: followed from its
	 * first bytes, not from the thread's next round, 50 ms on. */
	if (st->running) {
		pthread_cond_signal(&st->wake);
	} else {
		const char *test = getenv("TRACERIG_TEST_STREAM");

		st->test_fault = test && strstr(test, "fault");
		st->test_drain = test && (st->test_fault || strstr(test, "drain"));
		st->test_force = test && strstr(test, "force");
		ret = -pthread_create(&st->thread, NULL, stream_thread, st);
		if (ret)
			st->e[--st->n] = NULL;
		else {
			(void)pthread_setname_np(st->thread, "tr-deflate");
			st->running = 1;
		}
	}
	pthread_mutex_unlock(&st->lock);
	return ret;
}

int tr_stream_follow(struct tr_stream *st, const char *staging_dir, const char *name, uint64_t from)
{
	struct entry *e;
	int ret, level;

	if (!staging_dir || !name_ok(name))
		return -EINVAL;
	ret = may_follow(st, name, &level);
	if (ret)
		return ret;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->in_fd = e->out_fd = e->state_fd = e->punch_fd = -1;
	e->st = st;
	e->from = e->to = e->saved = from;
	e->crc = (uint32_t)crc32(0, Z_NULL, 0);
	ret = entry_open_files(e, staging_dir, name, level);
	if (!ret)
		ret = entry_enlist(e);
	if (!ret)
		return 0;
	if (e->out_fd >= 0)
		unlink(e->side);
	if (e->state_fd >= 0)
		unlink(e->state);
	entry_free(e);
	return ret;
}

void tr_stream_may_free(struct tr_stream *st, int yes)
{
	pthread_mutex_lock(&st->lock);
	st->may_free = yes;
	pthread_mutex_unlock(&st->lock);
}

/* The entry of `staging_dir`/`name`, or NULL; st->lock held. */
static struct entry *find_entry(struct tr_stream *st, const char *staging_dir, const char *name)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", staging_dir, name) >= (int)sizeof(path))
		return NULL;
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->e[i]->path, path) == 0)
			return st->e[i];
	return NULL;
}

int tr_stream_release(struct tr_stream *st, const char *staging_dir, const char *name,
		      uint64_t below)
{
	struct entry *e;

	pthread_mutex_lock(&st->lock);
	e = find_entry(st, staging_dir, name);
	if (e && below > e->released)
		e->released = below;
	pthread_mutex_unlock(&st->lock);
	return e ? 0 : -ENOENT;
}

/* One state file read back, as an entry the thread never follows. */
static struct entry *recovered_entry(struct tr_stream *st, const char *staging_dir,
				     const char *file)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct state_rec r;
	struct entry *e;
	ssize_t n;
	int fd;

	if (snprintf(dir, sizeof(dir), "%s/" TR_STREAM_DIR, staging_dir) >= (int)sizeof(dir) ||
	    snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = pread(fd, &r, sizeof(r), 0);
	close(fd);
	if (n != (ssize_t)sizeof(r) || memcmp(r.magic, STATE_MAGIC, sizeof(STATE_MAGIC)) != 0 ||
	    r.check != (uint32_t)crc32(0, (const Bytef *)&r, offsetof(struct state_rec, check)) ||
	    !memchr(r.name, '\0', sizeof(r.name)) || !name_ok(r.name) || r.to < r.from ||
	    (int)r.level != st->level)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->in_fd = e->out_fd = e->state_fd = e->punch_fd = -1;
	e->st = st;
	e->name = strdup(r.name);
	if (!e->name ||
	    snprintf(e->path, sizeof(e->path), "%s/%s", staging_dir, r.name) >= (int)sizeof(e->path) ||
	    side_path(e->side, sizeof(e->side), staging_dir, r.name, ".deflate") < 0 ||
	    side_path(e->state, sizeof(e->state), staging_dir, r.name, ".state") < 0 ||
	    strcmp(e->state, path) != 0) {
		entry_free(e);
		return NULL;
	}
	e->from = r.from;
	e->to = e->saved = r.to;
	e->comp_size = r.comp_size;
	e->crc = r.crc;
	e->pieces = r.pieces;
	e->dev = (dev_t)r.dev;
	e->ino = (ino_t)r.ino;
	return e;
}

int tr_stream_recover(struct tr_stream *st, const char *staging_dir)
{
	char dir[PATH_MAX];
	struct dirent *d;
	DIR *dp;
	int n = 0;

	if (snprintf(dir, sizeof(dir), "%s/" TR_STREAM_DIR, staging_dir) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	pthread_mutex_lock(&st->lock);
	if (st->running || st->n || !st->level) {
		pthread_mutex_unlock(&st->lock);
		return st->level ? -EBUSY : 0;
	}
	dp = opendir(dir);
	if (!dp) {
		pthread_mutex_unlock(&st->lock);
		return errno == ENOENT ? 0 : -errno;
	}
	while ((d = readdir(dp)) && st->n < TR_STREAM_MAX) {
		size_t len = strlen(d->d_name);
		struct entry *e;

		if (len < 7 || strcmp(d->d_name + len - 6, ".state") != 0)
			continue;
		e = recovered_entry(st, staging_dir, d->d_name);
		if (!e)
			continue;
		st->e[st->n++] = e;
		n++;
	}
	closedir(dp);
	st->stopped = 1; /* read back: nothing more is followed */
	pthread_mutex_unlock(&st->lock);
	return n;
}

static void human(uint64_t n, char *buf, size_t len)
{
	if (n >= 10ULL << 20)
		snprintf(buf, len, "%.1f MiB", (double)n / (1 << 20));
	else
		snprintf(buf, len, "%.1f KiB", (double)n / 1024);
}

void tr_stream_collection_ended(struct tr_stream *st)
{
	pthread_mutex_lock(&st->lock);
	st->ended = 1;
	pthread_cond_broadcast(&st->wake);
	pthread_mutex_unlock(&st->lock);
}

void tr_stream_stop(struct tr_stream *st)
{
	int running;

	pthread_mutex_lock(&st->lock);
	running = st->running;
	st->stopping = 1;
	st->stopped = 1;
	pthread_cond_broadcast(&st->wake);
	pthread_mutex_unlock(&st->lock);
	if (!running)
		return;
	pthread_join(st->thread, NULL);
	pthread_mutex_lock(&st->lock);
	st->running = 0;
	pthread_mutex_unlock(&st->lock);
	for (size_t i = 0; i < st->n; i++) {
		struct entry *e = st->e[i];
		struct stat sb;
		char done[32], total[32], freed[64] = "";

		if (e->broken)
			continue;
		if (fstat(e->in_fd, &sb) < 0)
			sb.st_size = 0;
		human(e->to - e->from, done, sizeof(done));
		human((uint64_t)sb.st_size, total, sizeof(total));
		if (e->freed > e->from) {
			char n[32];

			human(e->freed - e->from, n, sizeof(n));
			snprintf(freed, sizeof(freed), "; %s of the staged copy freed", n);
		}
		tr_info("%s: %s of %s deflated before packaging (%llu bytes in %llu pieces, "
			"%llu compressed, by %s%s)", e->name, done, total,
			(unsigned long long)(e->to - e->from), (unsigned long long)e->pieces,
			(unsigned long long)e->comp_size, e->z.isal ? "ISA-L" : "zlib", freed);
	}
}

int tr_stream_result(struct tr_stream *st, const char *staging_dir, const char *name,
		     struct tracerig_streamed *out)
{
	struct entry *e;
	int ret;

	pthread_mutex_lock(&st->lock);
	e = find_entry(st, staging_dir, name);
	if (!e)
		ret = -ENOENT;
	else if (st->running)
		ret = -EAGAIN;
	else if (e->broken && e->freed <= e->from)
		ret = -EIO;
	else {
		memset(out, 0, sizeof(*out));
		out->path = e->side;
		out->comp_size = e->comp_size;
		out->from = e->from;
		out->to = e->to;
		out->crc = e->crc;
		out->level = st->level;
		out->dev = (uint64_t)e->dev;
		out->ino = (uint64_t)e->ino;
		ret = 0;
	}
	pthread_mutex_unlock(&st->lock);
	return ret;
}

void tr_stream_free(struct tr_stream *st)
{
	if (!st)
		return;
	tr_stream_stop(st);
	for (size_t i = 0; i < st->n; i++)
		entry_free(st->e[i]);
	pthread_cond_destroy(&st->wake);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

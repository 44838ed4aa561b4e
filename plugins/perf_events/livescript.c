/* Converting while collecting: the thread, and the view of the growing
 * perf.data it reads through.
 *
 * The file is mapped shared and read only up to what the collector says
 * is on disk as whole records; as it grows the mapping is made again,
 * larger (sc_feed reads records by their offset, never by a pointer kept
 * from an earlier step).  The records of the last moments (taken after
 * the start of the last pass over the rings, which may still be in a
 * ring) wait in the conversion for the next step, so that records of
 * different CPUs still come out in time order. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "livescript.h"
#include "perffile.h"
#include "lib/priority.h"

/* The thread steps when a pass over the rings wrote records
 * (pc_notify_passes), and at least this often. */
#define STEP_MS 2000
/* Points of perf.data (data bytes, the time records before which are all
 * in them) the thread saw, waiting for the unwinding to get there; when
 * full, every other one goes, so that they still reach back however far
 * behind the unwinding is. */
#define MARKS 64

struct mark {
	uint64_t bytes, until;
};

struct ls_conv {
	struct pc_collector *pc;
	struct sc_conv *cv;
	int fd;
	const char *map; /* MAP_FAILED: none */
	size_t map_len;
	uint64_t data_offset; /* 0 until read from the header */
	uint64_t fed_bytes, fed_until;
	struct uw_bg *bg;
	ls_release_fn release;
	void *release_arg;
	struct mark marks[MARKS];
	size_t n_marks;

	pthread_t thread;
	int started;
	int wake_fd;
	atomic_int stopping;
	atomic_int tid;      /* the thread's, once it has set nice 19; 0 before */
	int session_nice;    /* the nice value it had before */
	int err; /* the thread's, with why */
	char why[512];
	struct ls_stats stats;
};

/* perf.data's header as it is on disk now: where the data starts and,
 * once finished, how long it is.  0 or -errno with `why`. */
static int read_header(struct ls_conv *lc, struct pd_file_header *fh, char *why, size_t why_len)
{
	ssize_t n = pread(lc->fd, fh, sizeof(*fh), 0);
	int err = n < 0 ? errno : 0;

	if (!err && n == (ssize_t)sizeof(*fh) && fh->magic == PD_MAGIC && fh->data.offset) {
		lc->data_offset = fh->data.offset;
		return 0;
	}
	snprintf(why, why_len, "cannot read perf.data's header: %s",
		 err ? strerror(err) : "not perf.data");
	return err ? -err : -EINVAL;
}

/* The file mapped at least up to `end`. */
static int map_to(struct ls_conv *lc, uint64_t end)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len;
	void *m;

	if (lc->map != MAP_FAILED && end <= lc->map_len)
		return 0;
	/* Twice what is needed: a long session maps again only now and then. */
	len = (size_t)(end * 2 + page - 1) & ~(page - 1);
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, lc->fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	if (lc->map != MAP_FAILED)
		munmap((void *)lc->map, lc->map_len);
	lc->map = m;
	lc->map_len = len;
	return 0;
}

/* Converts the data section's first `bytes` up to records taken before
 * `until_ns`. */
static int step(struct ls_conv *lc, uint64_t bytes, uint64_t until_ns, char *why, size_t why_len)
{
	int ret;

	if (!lc->data_offset) {
		struct pd_file_header fh;

		ret = read_header(lc, &fh, why, why_len);
		if (ret < 0)
			return ret;
	}
	if (bytes == lc->fed_bytes && until_ns == lc->fed_until)
		return 0;
	ret = map_to(lc, lc->data_offset + bytes);
	if (ret < 0) {
		snprintf(why, why_len, "cannot map perf.data: %s", strerror(-ret));
		return ret;
	}
	ret = sc_feed(lc->cv, lc->map + lc->data_offset, bytes, until_ns, why, why_len);
	/* While collecting, perf.data.txt on disk ends with a whole sample:
	 * the core deflates it as it grows, and an archive the watchdog
	 * salvages (tracerig killed) holds the text made so far. */
	if (ret == 0 && until_ns != UINT64_MAX)
		ret = sc_sync(lc->cv, why, why_len);
	/* Frames of samples replayed are not looked at again: memory is
	 * what the conversion has yet to reach, not the session. */
	if (ret == 0 && lc->bg)
		uw_bg_release(lc->bg, sc_replayed_below(lc->cv));
	/* Nor are the records: the core may free what it deflated of them. */
	if (ret == 0 && lc->release && until_ns != UINT64_MAX)
		lc->release(lc->release_arg, lc->data_offset + sc_replayed_below(lc->cv));
	if (ret == 0) {
		lc->fed_bytes = bytes;
		lc->fed_until = until_ns;
	}
	return ret;
}

static void add_mark(struct ls_conv *lc, uint64_t bytes, uint64_t until)
{
	if (lc->n_marks && lc->marks[lc->n_marks - 1].bytes == bytes &&
	    lc->marks[lc->n_marks - 1].until == until)
		return;
	if (lc->n_marks == MARKS) {
		for (size_t i = 0; i < MARKS / 2; i++)
			lc->marks[i] = lc->marks[2 * i + 1];
		lc->n_marks = MARKS / 2;
	}
	lc->marks[lc->n_marks++] = (struct mark){ bytes, until };
}

/* The newest mark the unwinding has reached (taken out, with the older
 * ones); 0 when none. */
static int reached_mark(struct ls_conv *lc, struct mark *out)
{
	uint64_t done = uw_bg_done(lc->bg);
	size_t n = lc->n_marks;

	while (n && lc->marks[n - 1].bytes > done)
		n--;
	if (!n)
		return 0;
	*out = lc->marks[n - 1];
	memmove(lc->marks, lc->marks + n, (lc->n_marks - n) * sizeof(*lc->marks));
	lc->n_marks -= n;
	return 1;
}

static void *convert_thread(void *arg)
{
	struct ls_conv *lc = arg;
	struct timespec cpu;

	/* Nice 19 for this thread alone: what the workload wants first.
	 * stop_thread puts it back when collection ends. */
	pid_t tid = tr_priority_background(&lc->session_nice);

	atomic_store(&lc->tid, tid);
	while (!atomic_load(&lc->stopping)) {
		struct pollfd pfd = { .fd = lc->wake_fd, .events = POLLIN };
		struct pc_counts c;
		uint64_t n;

		if (poll(&pfd, 1, STEP_MS) > 0 && read(lc->wake_fd, &n, sizeof(n)) < 0) {
			/* woken twice: fine */
		}
		if (atomic_load(&lc->stopping))
			break;
		pc_counts(lc->pc, &c);
		if (!c.data_bytes)
			continue;
		if (lc->bg) {
			struct mark m;

			add_mark(lc, c.data_bytes, c.data_complete_ns);
			if (!reached_mark(lc, &m))
				continue;
			c.data_bytes = m.bytes;
			c.data_complete_ns = m.until;
		}
		lc->err = step(lc, c.data_bytes, c.data_complete_ns, lc->why, sizeof(lc->why));
		if (lc->err < 0)
			break;
		lc->stats.steps++;
		lc->stats.bytes = c.data_bytes;
	}
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
		lc->stats.cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
	lc->stats.final_nice = getpriority(PRIO_PROCESS, (id_t)tid);
	return NULL;
}

int ls_start(struct pc_collector *pc, const char *data_path, struct sc_conv *cv,
	     struct uw_bg *bg, ls_release_fn release, void *release_arg, struct ls_conv **out)
{
	struct ls_conv *lc = calloc(1, sizeof(*lc));
	int ret;

	*out = NULL;
	if (!lc)
		return -ENOMEM;
	lc->pc = pc;
	lc->cv = cv;
	lc->bg = bg;
	lc->release = release;
	lc->release_arg = release_arg;
	lc->map = MAP_FAILED;
	atomic_init(&lc->stopping, 0);
	atomic_init(&lc->tid, 0);
	lc->fd = open(data_path, O_RDONLY | O_CLOEXEC);
	lc->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (lc->fd < 0 || lc->wake_fd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = -pthread_create(&lc->thread, NULL, convert_thread, lc);
	if (ret < 0)
		goto fail;
	(void)pthread_setname_np(lc->thread, "tr-perf-convert");
	lc->started = 1;
	pc_notify_passes(pc, lc->wake_fd);
	*out = lc;
	return 0;
fail:
	ls_free(lc);
	return ret;
}

static void stop_thread(struct ls_conv *lc)
{
	uint64_t one = 1;

	if (!lc->started)
		return;
	pc_notify_passes(lc->pc, -1);
	atomic_store(&lc->stopping, 1);
	/* Collection has ended and the step in hand is now on the way to
	 * the archive: at nice 19 beside a busy machine it would get about
	 * 1.5% of a CPU, and a step that unwinds samples the unwinding queue
	 * had no room for may take seconds of it.  Back to the session's
	 * priority (or it finishes at nice 19).  A thread that had not set
	 * nice 19 yet sees `stopping` before it steps. */
	pid_t tid = atomic_load(&lc->tid);

	if (tid > 0)
		(void)tr_priority_restore(tid, lc->session_nice);
	if (write(lc->wake_fd, &one, sizeof(one)) < 0) {
		/* it looks again within STEP_MS */
	}
	pthread_join(lc->thread, NULL);
	lc->started = 0;
}

int ls_finish(struct ls_conv *lc, char *why, size_t why_len)
{
	struct pd_file_header fh;
	int ret;

	stop_thread(lc);
	if (lc->err < 0) {
		snprintf(why, why_len, "%s", lc->why);
		return lc->err;
	}
	ret = read_header(lc, &fh, why, why_len);
	if (ret < 0)
		return ret;
	return step(lc, fh.data.size, UINT64_MAX, why, why_len);
}

void ls_get_stats(const struct ls_conv *lc, struct ls_stats *out)
{
	*out = lc->stats;
}

void ls_free(struct ls_conv *lc)
{
	if (!lc)
		return;
	stop_thread(lc);
	if (lc->map != MAP_FAILED)
		munmap((void *)lc->map, lc->map_len);
	if (lc->fd >= 0)
		close(lc->fd);
	if (lc->wake_fd >= 0)
		close(lc->wake_fd);
	free(lc);
}

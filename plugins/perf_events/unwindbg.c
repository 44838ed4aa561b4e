/* Unwinding while collecting: the queue, the thread, the kept frames.
 *
 * The queue is a ring of bytes with one writer (the thread draining the
 * perf rings, or the stopping thread after it) and one reader (ours):
 * each side moves only its own counter, so neither ever waits for the
 * other.  Entries are a small head and a record as written to perf.data;
 * one that would cross the ring's end starts again at its beginning.  The
 * ring's pages are all faulted in when it is made, before collecting:
 * otherwise every fresh page costs the draining thread a fault while the
 * traced workload runs (8 KiB of stack per sample goes through a 16 MiB
 * ring in two seconds at 999 Hz).
 *
 * The thread runs at SCHED_IDLE while collecting: it unwinds with CPU
 * time nobody else wants, so on a busy machine it does not take the
 * traced workload's; what it did not get to is left in the queue.  Once
 * collecting stops it goes back to SCHED_OTHER and unwinds that backlog
 * before the flush needs its frames.  Only when it is allowed to go back
 * (CAP_SYS_NICE or RLIMIT_NICE): otherwise a SCHED_IDLE thread on a busy
 * machine would hold the flush waiting for it, and it stays as it is. */
#include "config.h"

#include <errno.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/sideband.h"
#include "lib/vec.h"
#include "sample.h"
#include "unwindbg.h"

enum { ENTRY_WRAP = 1, ENTRY_RECORD = 2 };

struct entry {
	uint32_t len; /* with this head, a multiple of 8 */
	uint32_t kind;
	uint64_t offset;
};

/* Kept frames: a kept_head, n_ips frames, then n_lookups lookups, in an
 * arena chunk that never moves: the conversion while collecting reads
 * them while this thread keeps more. */
struct kept {
	uint64_t offset;          /* of the sample, in perf.data's data section */
	const unsigned char *at;  /* in an arena chunk */
};

#define CHUNK_BYTES (1u << 20)

struct chunk {
	struct chunk *next;      /* newer */
	uint64_t last_offset;    /* of the newest sample kept in it */
	size_t len, cap;
	unsigned char data[];
};

struct kept_head {
	uint32_t n_ips, n_lookups;
	uint32_t stack_end, unmapped;
};

struct uw_bg {
	const struct pc_opened *ev;
	size_t n_ev;
	struct sample_ids ids;
	unsigned trailer; /* the side-band records' sample_id trailer */
	struct unwinder *uw;

	unsigned char *ring;
	size_t cap;
	_Atomic uint64_t head, tail; /* bytes ever written, ever read */
	int wake_fd;
	atomic_int stopping;
	pthread_t thread;
	atomic_int started; /* records are taken while set */
	int idle;           /* the thread runs at SCHED_IDLE until stopped */

	/* Kept by the thread, read by uw_bg_frames and released by
	 * uw_bg_release at any time: all under `lock` but the bytes the
	 * thread writes into the newest chunk, which is never released. */
	pthread_mutex_t lock;
	struct kept *kept;
	size_t n_kept, cap_kept;
	struct chunk *oldest, *newest;
	size_t arena_len;     /* kept bytes in all chunks */
	uint64_t released;    /* below this offset, nothing is kept any more */
	struct uw_bg_stats stats;
	/* Where the records stand (data-section offsets, the end of the last
	 * one): every record the writer considered, every one the thread
	 * took.  See uw_bg_done. */
	_Atomic uint64_t considered, taken;
};

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* ---- the writer's side ---- */

static int wanted(const struct perf_event_header *h)
{
	return h->type == PERF_RECORD_SAMPLE || h->type == PERF_RECORD_MMAP2 ||
	       (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC));
}

void uw_bg_record(void *arg, uint64_t offset, const struct perf_event_header *h)
{
	struct uw_bg *bg = arg;
	uint64_t head = atomic_load_explicit(&bg->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&bg->tail, memory_order_acquire);
	size_t need = round8(sizeof(struct entry) + h->size), pos = head % bg->cap;
	size_t skip = pos + need > bg->cap ? bg->cap - pos : 0;
	struct entry *e;

	if (!atomic_load_explicit(&bg->started, memory_order_relaxed))
		return;
	if (!wanted(h))
		goto considered;
	if (head + skip + need - tail > bg->cap) {
		/* Full: the conversion unwinds this one.  A lost exec or
		 * mapping only makes later frames fail uw_adopt's check. */
		if (h->type == PERF_RECORD_SAMPLE)
			bg->stats.queue_full++;
		goto considered;
	}
	if (skip >= sizeof(struct entry))
		((struct entry *)(bg->ring + pos))->kind = ENTRY_WRAP;
	head += skip;
	e = (struct entry *)(bg->ring + head % bg->cap);
	e->len = (uint32_t)need;
	e->kind = ENTRY_RECORD;
	e->offset = offset;
	memcpy(e + 1, h, h->size);
	atomic_store_explicit(&bg->head, head + need, memory_order_release);
	if (h->type == PERF_RECORD_SAMPLE)
		bg->stats.queued++;
considered:
	/* After head: whoever sees this end sees the record queued. */
	atomic_store_explicit(&bg->considered, offset + h->size, memory_order_release);
}

void uw_bg_pass(void *arg)
{
	struct uw_bg *bg = arg;
	uint64_t one = 1;

	/* Non-blocking: a counter already set wakes the thread as well. */
	if (write(bg->wake_fd, &one, sizeof(one)) < 0) {
		/* the thread looks again at its poll timeout */
	}
}

/* ---- the thread ---- */

/* Keeps the frames of the sample at `offset`: 0, 1 when the conversion
 * has passed it already (nothing kept), or -ENOSPC / -ENOMEM. */
static int keep(struct uw_bg *bg, uint64_t offset, const struct uw_frames *f)
{
	struct kept_head kh = { (uint32_t)f->n_ips, (uint32_t)f->n_lookups, (uint32_t)f->stack_end,
				(uint32_t)f->unmapped };
	size_t ips = f->n_ips * sizeof(*f->ips), lookups = f->n_lookups * sizeof(*f->lookups);
	size_t need = round8(sizeof(kh) + ips + lookups);
	struct chunk *c;
	struct kept *kept;
	unsigned char *at;
	int ret = 0;

	pthread_mutex_lock(&bg->lock);
	if (offset < bg->released) {
		pthread_mutex_unlock(&bg->lock);
		return 1; /* converted already, unwound there */
	}
	if (bg->arena_len + need + bg->n_kept * sizeof(*bg->kept) > UW_BG_RESULT_BYTES) {
		ret = -ENOSPC;
		goto out;
	}
	kept = tr_vec_grow(bg->kept, &bg->cap_kept, bg->n_kept + 1, sizeof(*kept), 4096);
	if (!kept) {
		ret = -ENOMEM;
		goto out;
	}
	bg->kept = kept;
	c = bg->newest;
	if (!c || c->len + need > c->cap) {
		size_t cap = need > CHUNK_BYTES ? need : CHUNK_BYTES;

		c = malloc(sizeof(*c) + cap);
		if (!c) {
			ret = -ENOMEM;
			goto out;
		}
		c->next = NULL;
		c->len = 0;
		c->cap = cap;
		if (bg->newest)
			bg->newest->next = c;
		else
			bg->oldest = c;
		bg->newest = c;
	}
	at = c->data + c->len;
	memcpy(at, &kh, sizeof(kh));
	memcpy(at + sizeof(kh), f->ips, ips);
	memcpy(at + sizeof(kh) + ips, f->lookups, lookups);
	c->len += need;
	c->last_offset = offset;
	bg->arena_len += need;
	bg->kept[bg->n_kept++] = (struct kept){ offset, at };
out:
	pthread_mutex_unlock(&bg->lock);
	return ret;
}

static void unwind_sample(struct uw_bg *bg, uint64_t offset, const struct perf_event_header *h)
{
	const struct pc_opened *ev;
	const uint64_t *ips;
	struct uw_frames f;
	struct sample s;
	int ret;

	if (h->size < sizeof(*h) + 8)
		return;
	ev = sample_event(&bg->ids, bg->ev, *(const uint64_t *)(h + 1));
	if (!ev || !(ev->attr.sample_type & PERF_SAMPLE_REGS_USER) ||
	    sample_parse(h, ev->attr.sample_type, &s) < 0)
		return;
	if (!uw_sample(bg->uw, &ev->attr, s.pid, s.tid, s.regs, s.end, &ips))
		return; /* no user registers: nothing to unwind */
	uw_last(bg->uw, &f);
	if (!f.checkable)
		bg->stats.uncheckable++;
	else if ((ret = keep(bg, offset, &f)) < 0)
		bg->stats.results_full++;
	else if (ret == 0)
		bg->stats.kept++;
}

static void take(struct uw_bg *bg, const struct entry *e)
{
	const struct perf_event_header *h = (const void *)(e + 1);
	struct tr_sideband_event ev;

	if (h->type == PERF_RECORD_SAMPLE) {
		unwind_sample(bg, e->offset, h);
		return;
	}
	/* The side-band as it comes: what uw_adopt's check does not catch
	 * is only slower, never different. */
	switch (tr_sideband_decode(h, bg->trailer, &ev)) {
	case TR_SIDEBAND_MMAP:
		uw_mmap(bg->uw, ev.map.pid, ev.map.start, ev.map.len);
		break;
	case TR_SIDEBAND_EXEC:
		uw_exec(bg->uw, ev.pid);
		break;
	default:
		break;
	}
}

static void *unwind_thread(void *arg)
{
	struct uw_bg *bg = arg;
	struct timespec cpu;

	for (;;) {
		uint64_t tail = atomic_load_explicit(&bg->tail, memory_order_relaxed);
		uint64_t head = atomic_load_explicit(&bg->head, memory_order_acquire);
		size_t pos = tail % bg->cap;
		const struct entry *e;

		if (tail == head) {
			struct pollfd pfd = { .fd = bg->wake_fd, .events = POLLIN };
			uint64_t n;

			/* Stopped means no more records: empty is the end. */
			if (atomic_load(&bg->stopping) &&
			    atomic_load_explicit(&bg->head, memory_order_acquire) == tail)
				break;
			if (poll(&pfd, 1, 100) > 0 && read(bg->wake_fd, &n, sizeof(n)) < 0) {
				/* another wake-up raced this one: fine */
			}
			continue;
		}
		e = (const struct entry *)(bg->ring + pos);
		if (bg->cap - pos < sizeof(*e) || e->kind == ENTRY_WRAP) {
			atomic_store_explicit(&bg->tail, tail + (bg->cap - pos), memory_order_release);
			continue;
		}
		take(bg, e);
		atomic_store_explicit(&bg->taken, e->offset + ((const struct perf_event_header *)(e + 1))->size,
				      memory_order_release);
		atomic_store_explicit(&bg->tail, tail + e->len, memory_order_release);
	}
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
		bg->stats.cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
	return NULL;
}

/* ---- the public side ---- */

/* Whether a thread of ours at SCHED_IDLE may go back to SCHED_OTHER: the
 * kernel lets it when its nice value may be raised to what it is now
 * (RLIMIT_NICE allows it, or CAP_SYS_NICE).  Asked before, since a thread
 * that went to SCHED_IDLE without that right cannot come back. */
static int may_leave_idle(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
	struct rlimit rl;
	int nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0); /* this thread's, which the new one inherited */
	if ((nice != -1 || !errno) && getrlimit(RLIMIT_NICE, &rl) == 0 &&
	    (rl.rlim_cur == RLIM_INFINITY || (rlim_t)(20 - nice) <= rl.rlim_cur))
		return 1;
	if (syscall(SYS_capget, &hdr, caps) != 0)
		return 0;
	return !!(caps[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32)));
}

static int make_idle(pthread_t t)
{
	struct sched_param sp = { .sched_priority = 0 };

	return may_leave_idle() && pthread_setschedparam(t, SCHED_IDLE, &sp) == 0;
}

int uw_bg_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
	      struct uw_objects *objects, size_t queue_bytes, struct uw_bg **out)
{
	struct uw_bg *bg = calloc(1, sizeof(*bg));
	int ret;

	*out = NULL;
	if (!bg)
		return -ENOMEM;
	bg->cap = queue_bytes < 4096 ? 4096 : queue_bytes & ~(size_t)7;
	bg->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	bg->ring = mmap(NULL, bg->cap, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (bg->ring == MAP_FAILED)
		bg->ring = NULL;
	bg->uw = uw_new(svc, ctx, objects);
	atomic_init(&bg->head, 0);
	atomic_init(&bg->tail, 0);
	atomic_init(&bg->stopping, 0);
	atomic_init(&bg->started, 0);
	atomic_init(&bg->considered, 0);
	atomic_init(&bg->taken, 0);
	pthread_mutex_init(&bg->lock, NULL);
	ret = bg->wake_fd < 0 ? -errno : 0;
	if (!ret && (!bg->ring || !bg->uw))
		ret = -ENOMEM;
	if (ret < 0) {
		uw_bg_free(bg);
		return ret;
	}
	*out = bg;
	return 0;
}

int uw_bg_start(struct uw_bg *bg, const struct pc_opened *ev, size_t n_ev)
{
	int ret;

	bg->ev = ev;
	bg->n_ev = n_ev;
	bg->trailer = sample_time_from_end(ev[0].attr.sample_type);
	ret = sample_ids_build(&bg->ids, ev, n_ev);
	if (ret < 0)
		return ret;
	ret = pthread_create(&bg->thread, NULL, unwind_thread, bg);
	if (ret)
		return -ret;
	(void)pthread_setname_np(bg->thread, "tr-perf-unwind");
	bg->idle = make_idle(bg->thread);
	bg->stats.idle = bg->idle;
	atomic_store(&bg->started, 1);
	return 0;
}

void uw_bg_stop(struct uw_bg *bg)
{
	struct sched_param sp = { .sched_priority = 0 };

	atomic_store(&bg->stopping, 1);
	/* The backlog is the flush's to wait for now: at the priority of
	 * the rest of tracerig (make_idle made sure this is allowed). */
	if (bg->idle && atomic_load(&bg->started) &&
	    pthread_setschedparam(bg->thread, SCHED_OTHER, &sp) == 0)
		bg->idle = 0;
	uw_bg_pass(bg);
}

void uw_bg_join(struct uw_bg *bg)
{
	if (!atomic_load(&bg->started))
		return;
	uw_bg_stop(bg);
	pthread_join(bg->thread, NULL);
	atomic_store(&bg->started, 0);
}

uint64_t uw_bg_done(struct uw_bg *bg)
{
	uint64_t considered = atomic_load_explicit(&bg->considered, memory_order_acquire);
	uint64_t head = atomic_load_explicit(&bg->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&bg->tail, memory_order_acquire);

	if (!atomic_load(&bg->started))
		return UINT64_MAX;
	/* Nothing left queued of what was considered: all of it is done.
	 * Else everything up to the end of the last record taken is (those
	 * never queued in between are the conversion's own). */
	if (tail == head)
		return considered;
	return atomic_load_explicit(&bg->taken, memory_order_acquire);
}

int uw_bg_frames(struct uw_bg *bg, uint64_t offset, struct uw_frames *out)
{
	const unsigned char *p = NULL;
	size_t lo = 0, hi;
	struct kept_head kh;

	pthread_mutex_lock(&bg->lock);
	hi = bg->n_kept;
	/* Kept in the order perf.data holds them. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bg->kept[mid].offset < offset) {
			lo = mid + 1;
		} else if (bg->kept[mid].offset > offset) {
			hi = mid;
		} else {
			p = bg->kept[mid].at;
			break;
		}
	}
	pthread_mutex_unlock(&bg->lock);
	if (!p)
		return 0;
	memcpy(&kh, p, sizeof(kh));
	*out = (struct uw_frames){
		.ips = (const uint64_t *)(p + sizeof(kh)),
		.n_ips = kh.n_ips,
		.lookups = (const struct uw_lookup *)(p + sizeof(kh) + kh.n_ips * sizeof(uint64_t)),
		.n_lookups = kh.n_lookups,
		.stack_end = (int)kh.stack_end,
		.unmapped = (int)kh.unmapped,
		.checkable = 1,
	};
	return 1;
}

void uw_bg_release(struct uw_bg *bg, uint64_t below)
{
	size_t n = 0;

	pthread_mutex_lock(&bg->lock);
	if (below > bg->released)
		bg->released = below;
	while (n < bg->n_kept && bg->kept[n].offset < below)
		n++;
	memmove(bg->kept, bg->kept + n, (bg->n_kept - n) * sizeof(*bg->kept));
	bg->n_kept -= n;
	/* The newest chunk stays: the thread writes into it unlocked. */
	while (bg->oldest && bg->oldest != bg->newest && bg->oldest->last_offset < below) {
		struct chunk *c = bg->oldest;

		bg->oldest = c->next;
		bg->arena_len -= c->len;
		free(c);
	}
	pthread_mutex_unlock(&bg->lock);
}

void uw_bg_get_stats(const struct uw_bg *bg, struct uw_bg_stats *out)
{
	*out = bg->stats;
}

void uw_bg_free(struct uw_bg *bg)
{
	if (!bg)
		return;
	uw_bg_join(bg);
	uw_free(bg->uw);
	sample_ids_free(&bg->ids);
	if (bg->wake_fd >= 0)
		close(bg->wake_fd);
	if (bg->ring)
		munmap(bg->ring, bg->cap);
	free(bg->kept);
	while (bg->oldest) {
		struct chunk *next = bg->oldest->next;

		free(bg->oldest);
		bg->oldest = next;
	}
	pthread_mutex_destroy(&bg->lock);
	free(bg);
}

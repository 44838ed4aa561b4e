/* One dummy event per CPU, system-wide, as `perf record -a` opens its
 * tracking event: per-process events would have to follow every new
 * thread, while system-wide ones see a process that forks before anyone
 * attached to it.  Records are kept (only those that change an address
 * space) and replayed after the sources stop, before they flush. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/symbols/symbolizer.h"
#include "lib/cpus.h"
#include "lib/fdio.h"
#include "lib/perfring.h"
#include "lib/pidqueue.h"
#include "lib/pidset.h"
#include "lib/sideband.h"
#include "lib/vec.h"
#include "sideband.h"

#define RING_PAGES 64
/* sample_type TID | TIME: the sample_id trailer is u32 pid, tid; u64 time. */
#define TRAILER_LEN 16

struct kept {
	uint64_t time;
	size_t off; /* into the record buffer */
};

struct tr_sideband {
	struct tr_symbolizer *sym;
	int *cpus;
	size_t n_cpus;
	int *fds;
	struct tr_ring *rings;
	int stop_fd;
	pthread_t reader;
	int reader_started, enabled, stopping;
	struct tr_pid_queue *remember;

	/* Which processes are followed: all, or the targets and their
	 * descendants (a set grown by FORK records, reader thread only). */
	int everyone;
	struct tr_pid_set followed;

	/* Records go to an unlinked file in the staging directory (a long
	 * system-wide session must not grow in memory), through `buf`; in
	 * memory only when no such file can be made. */
	int spill_fd;
	uint64_t spilled; /* bytes in the file */
	unsigned char *buf;
	size_t len, cap;
	void *map; /* the file, mapped for the replay */
	size_t map_len;
	struct kept *kept;
	size_t n_kept, cap_kept;

	struct tr_sideband_counts counts;
};

static int is_followed(const struct tr_sideband *sb, pid_t pid)
{
	return sb->everyone || tr_pid_set_has(&sb->followed, pid);
}

#define SPILL_CHUNK (1u << 20)

static int spill(struct tr_sideband *sb)
{
	size_t done;
	int ret = tr_pwrite_counted(sb->spill_fd, sb->buf, sb->len, -1, &done);

	/* What did not reach the file whole is not replayed. */
	while (done < sb->len && sb->n_kept) {
		const struct kept *k = &sb->kept[sb->n_kept - 1];
		const struct perf_event_header *h = (const void *)(sb->buf + (k->off - sb->spilled));

		if (k->off < sb->spilled || k->off - sb->spilled + h->size <= done)
			break;
		sb->n_kept--;
		sb->counts.dropped++;
	}
	sb->spilled += done;
	sb->len = 0;
	return ret;
}

static int keep(struct tr_sideband *sb, const struct perf_event_header *h)
{
	unsigned char *buf;
	struct kept *kept;

	/* After a failed write, records are still tried: the disk may have
	 * room again. */
	if (sb->spill_fd >= 0 && sb->len + h->size > SPILL_CHUNK)
		spill(sb);
	buf = tr_vec_grow(sb->buf, &sb->cap, sb->len + h->size, 1, SPILL_CHUNK);
	if (!buf)
		return -ENOMEM;
	sb->buf = buf;
	kept = tr_vec_grow(sb->kept, &sb->cap_kept, sb->n_kept + 1, sizeof(*kept), 4096);
	if (!kept)
		return -ENOMEM;
	sb->kept = kept;
	memcpy(&sb->kept[sb->n_kept].time, (const char *)h + h->size - 8, 8);
	sb->kept[sb->n_kept].off = sb->spilled + sb->len;
	sb->n_kept++;
	memcpy(sb->buf + sb->len, h, h->size);
	sb->len += h->size;
	return 0;
}

static int on_record(void *arg, const struct perf_event_header *h)
{
	struct tr_sideband *sb = arg;
	struct tr_sideband_event ev;
	uint64_t lost;

	if (h->type == PERF_RECORD_LOST) {
		/* { header; u64 id, lost; } */
		if (h->size >= sizeof(*h) + 16) {
			memcpy(&lost, (const char *)(h + 1) + 8, sizeof(lost));
			sb->counts.lost += lost;
		}
		return 0;
	}
	if (h->size < sizeof(*h) + TRAILER_LEN)
		return 0;
	switch (tr_sideband_decode(h, TRAILER_LEN, &ev)) {
	case TR_SIDEBAND_FORK:
		/* Without memory the child is not followed: counted as dropped. */
		if (!sb->everyone && is_followed(sb, ev.parent) &&
		    tr_pid_set_add(&sb->followed, ev.pid) < 0)
			sb->counts.dropped++;
		break;
	case TR_SIDEBAND_MMAP:
	case TR_SIDEBAND_EXEC:
		break;
	default:
		return 0;
	}
	if (!is_followed(sb, ev.pid))
		return 0;
	/* A library mapped late (dlopen) or a new image must be read while
	 * its process is alive: it is remembered again. */
	if (ev.kind == TR_SIDEBAND_MMAP && ev.map.path[0] == '/')
		tr_pid_queue_push(sb->remember, ev.pid);
	if (keep(sb, h) < 0) {
		sb->counts.dropped++;
		return 0;
	}
	sb->counts.records++;
	return 0;
}

static void drain(struct tr_sideband *sb)
{
	for (size_t i = 0; i < sb->n_cpus; i++)
		tr_ring_drain(&sb->rings[i], on_record, sb);
}

static void *reader(void *arg)
{
	struct tr_sideband *sb = arg;
	struct pollfd *pfd = calloc(sb->n_cpus + 1, sizeof(*pfd));

	if (!pfd)
		return NULL;
	for (size_t i = 0; i < sb->n_cpus; i++)
		pfd[i] = (struct pollfd){ .fd = sb->fds[i], .events = POLLIN };
	pfd[sb->n_cpus] = (struct pollfd){ .fd = sb->stop_fd, .events = POLLIN };
	for (;;) {
		/* Also wakes on its own: a quiet CPU's ring fills below the
		 * watermark and its records must not wait for the end. */
		int n = poll(pfd, sb->n_cpus + 1, 100);

		if (n < 0 && errno != EINTR)
			break;
		drain(sb);
		if (__atomic_load_n(&sb->stopping, __ATOMIC_ACQUIRE))
			break;
	}
	free(pfd);
	return NULL;
}

static void remember(void *arg, pid_t pid)
{
	struct tr_sideband *sb = arg;

	if (tr_symbolizer_remember(sb->sym, pid) == 0)
		__atomic_add_fetch(&sb->counts.remembered, 1, __ATOMIC_RELAXED);
}

static int open_dummy(int cpu, int with_build_id)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.disabled = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.build_id = with_build_id ? 1 : 0,
		.watermark = 1,
		.wakeup_watermark = RING_PAGES * 4096 / 4,
	};

	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* A dummy event and its ring on each online CPU: what the kernel says of
 * every mmap, comm and exit. */
static int open_rings(struct tr_sideband *sb, char *why, size_t why_len)
{
	int ret, with_build_id = 1;

	sb->fds = malloc(sb->n_cpus * sizeof(*sb->fds));
	sb->rings = calloc(sb->n_cpus, sizeof(*sb->rings));
	/* Before the check: tr_sideband_free closes what is not -1. */
	for (size_t i = 0; sb->fds && i < sb->n_cpus; i++)
		sb->fds[i] = -1;
	if (!sb->fds || !sb->rings) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < sb->n_cpus; i++) {
		sb->fds[i] = open_dummy(sb->cpus[i], with_build_id);
		/* Before Linux 5.12 mappings carry device and inode only. */
		if (sb->fds[i] < 0 && errno == EINVAL && with_build_id) {
			with_build_id = 0;
			sb->fds[i] = open_dummy(sb->cpus[i], 0);
		}
		if (sb->fds[i] < 0) {
			ret = -errno;
			snprintf(why, why_len, "cannot open a dummy perf event on CPU %d: %s (%s)",
				 sb->cpus[i], strerror(-ret),
				 ret == -EACCES || ret == -EPERM
					 ? "run as root or with CAP_PERFMON, or lower "
					   "kernel.perf_event_paranoid"
					 : "check that the kernel has perf events");
			return ret;
		}
		ret = tr_ring_map(&sb->rings[i], sb->fds[i], RING_PAGES);
		if (ret < 0) {
			snprintf(why, why_len, "cannot map the ring of CPU %d: %s (raise "
				 "kernel.perf_event_mlock_kb)", sb->cpus[i], strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int tr_sideband_open(struct tr_sideband **out, struct tr_symbolizer *sym,
		     const struct tracerig_targets *t, const char *spill_dir, char *why,
		     size_t why_len)
{
	struct tr_sideband *sb = calloc(1, sizeof(*sb));
	int ret;

	if (!sb)
		return -ENOMEM;
	sb->sym = sym;
	sb->stop_fd = -1;
	sb->spill_fd = spill_dir ? tr_unlinked_file(spill_dir) : -1;
	if (sb->spill_fd < 0)
		sb->spill_fd = -1; /* kept in memory */
	sb->everyone = !t || (!t->n_pids && t->command_pid <= 0);
	for (size_t i = 0; t && i < t->n_pids; i++)
		if ((ret = tr_pid_set_add(&sb->followed, t->pids[i])) < 0)
			goto fail;
	if (t && (ret = tr_pid_set_add(&sb->followed, t->command_pid)) < 0)
		goto fail;
	ret = tr_online_cpus(&sb->cpus, &sb->n_cpus);
	if (ret < 0) {
		snprintf(why, why_len, "cannot read the online CPUs: %s", strerror(-ret));
		goto fail;
	}
	ret = open_rings(sb, why, why_len);
	if (ret < 0)
		goto fail;
	sb->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (sb->stop_fd < 0) {
		ret = -errno;
		snprintf(why, why_len, "cannot create an eventfd: %s", strerror(-ret));
		goto fail;
	}
	*out = sb;
	return 0;
fail:
	tr_sideband_free(sb);
	return ret;
}

int tr_sideband_start(struct tr_sideband *sb)
{
	int ret = tr_pid_queue_start(&sb->remember, remember, NULL, 0, sb);

	if (ret < 0)
		return ret;
	ret = pthread_create(&sb->reader, NULL, reader, sb);
	if (ret) {
		tr_pid_queue_stop(sb->remember);
		sb->remember = NULL;
		return -ret;
	}
	(void)pthread_setname_np(sb->reader, "tr-sideband");
	sb->reader_started = 1;
	for (size_t i = 0; i < sb->n_cpus; i++)
		if (ioctl(sb->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
	sb->enabled = 1;
	return 0;
}

void tr_sideband_stop(struct tr_sideband *sb)
{
	uint64_t one = 1;
	ssize_t woke;

	if (!sb)
		return;
	if (sb->enabled)
		for (size_t i = 0; i < sb->n_cpus; i++)
			ioctl(sb->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	sb->enabled = 0;
	if (sb->reader_started) {
		__atomic_store_n(&sb->stopping, 1, __ATOMIC_RELEASE);
		/* Wakes it now rather than at its next timeout. */
		woke = write(sb->stop_fd, &one, sizeof(one));
		(void)woke;
		pthread_join(sb->reader, NULL);
		sb->reader_started = 0;
		drain(sb);
	}
	tr_pid_queue_stop(sb->remember);
	sb->remember = NULL;
}

static int cmp_kept(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* Equal times keep the order they were drained in. */
	return x->off < y->off ? -1 : x->off > y->off;
}

void tr_sideband_replay(struct tr_sideband *sb)
{
	const unsigned char *base;

	if (!sb)
		return;
	base = sb->buf;
	if (sb->spill_fd >= 0) {
		spill(sb);
		if (!sb->spilled)
			return;
		sb->map = mmap(NULL, sb->spilled, PROT_READ, MAP_PRIVATE, sb->spill_fd, 0);
		if (sb->map == MAP_FAILED) {
			sb->map = NULL;
			sb->counts.dropped += sb->n_kept;
			return;
		}
		sb->map_len = sb->spilled;
		base = sb->map;
	}
	qsort(sb->kept, sb->n_kept, sizeof(*sb->kept), cmp_kept);
	for (size_t i = 0; i < sb->n_kept; i++) {
		const struct perf_event_header *h = (const void *)(base + sb->kept[i].off);
		struct tr_sideband_event ev;
		int ret = 0;

		switch (tr_sideband_decode(h, TRAILER_LEN, &ev)) {
		case TR_SIDEBAND_MMAP:
			ret = tr_symbolizer_record_mmap(sb->sym, &ev.map);
			break;
		case TR_SIDEBAND_EXEC:
			ret = tr_symbolizer_record_exec(sb->sym, ev.pid);
			break;
		case TR_SIDEBAND_FORK:
			ret = tr_symbolizer_record_fork(sb->sym, ev.parent, ev.pid);
			break;
		default:
			continue;
		}
		if (ret == 0)
			sb->counts.replayed++;
	}
}

void tr_sideband_counts(const struct tr_sideband *sb, struct tr_sideband_counts *out)
{
	*out = sb->counts;
	out->remembered = __atomic_load_n(&sb->counts.remembered, __ATOMIC_RELAXED);
}

void tr_sideband_free(struct tr_sideband *sb)
{
	if (!sb)
		return;
	tr_sideband_stop(sb);
	for (size_t i = 0; sb->rings && i < sb->n_cpus; i++)
		tr_ring_unmap(&sb->rings[i]);
	for (size_t i = 0; sb->fds && i < sb->n_cpus; i++)
		if (sb->fds[i] >= 0)
			close(sb->fds[i]);
	if (sb->stop_fd >= 0)
		close(sb->stop_fd);
	free(sb->rings);
	free(sb->fds);
	free(sb->cpus);
	tr_pid_set_free(&sb->followed);
	if (sb->map)
		munmap(sb->map, sb->map_len);
	if (sb->spill_fd >= 0)
		close(sb->spill_fd);
	free(sb->buf);
	free(sb->kept);
	free(sb);
}

/* The live side-band of a flight recording (livesb.h): processes by pid in
 * an open-addressing table (lib/pidset.h cannot remove), each with its
 * threads and mappings in small arrays, every record kept as a copy ready
 * to be written again. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "livesb.h"
#include "lib/hash.h"
#include "lib/probe.h"
#include "lib/vec.h"

struct lsb_thread {
	pid_t tid;
	uint64_t time; /* of its name */
	unsigned char *comm; /* its COMM record, trailer time 0 */
};

struct lsb_map {
	uint64_t start, end, time;
	unsigned char *rec; /* MMAP or MMAP2, trailer time 0 */
};

struct lsb_proc {
	pid_t pid;
	uint64_t exec_time; /* of its latest exec seen */
	struct lsb_thread *threads;
	size_t n_threads, cap_threads;
	struct lsb_map *maps; /* by time */
	size_t n_maps, cap_maps;
};

struct livesb {
	size_t trailer;     /* bytes of the sample_id trailer */
	size_t tid_back;    /* its pid/tid, counted back from a record's end; 0: none */
	size_t time_back;   /* its time, the same way; 0: none */
	unsigned char *kernel;   /* the kernel's map (pid -1), or NULL */
	struct lsb_proc **slots; /* NULL: empty */
	size_t n_slots, n;
	size_t n_threads, n_maps, bytes;
	int broken;
};

/* FORK and EXIT: struct { header; u32 pid, ppid, tid, ptid; u64 time; } */
struct task_body {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct livesb *lsb_new(uint64_t sample_type)
{
	static const uint64_t bits[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
					 PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
					 PERF_SAMPLE_IDENTIFIER };
	struct livesb *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		s->trailer += sample_type & bits[i] ? 8 : 0;
	/* The trailer begins with pid/tid, then the time. */
	if (sample_type & PERF_SAMPLE_TID)
		s->tid_back = s->trailer;
	if (sample_type & PERF_SAMPLE_TIME)
		s->time_back = s->trailer - (sample_type & PERF_SAMPLE_TID ? 8 : 0);
	return s;
}

/* ---- records ---- */

static uint64_t trailer_time(const struct livesb *s, const struct perf_event_header *h)
{
	uint64_t t = 0;

	if (s->time_back && h->size >= sizeof(*h) + s->time_back)
		memcpy(&t, (const char *)h + h->size - s->time_back, sizeof(t));
	return t;
}

/* A copy of `h` to keep: trailer time 0, and pid/tid set to the given
 * ones (in the body, after the header, and in the trailer) unless 0. */
static unsigned char *copy_record(struct livesb *s, const struct perf_event_header *h, pid_t pid,
				  pid_t tid)
{
	unsigned char *r = malloc(h->size);
	uint64_t zero = 0;

	if (!r)
		return NULL;
	memcpy(r, h, h->size);
	if (s->time_back && h->size >= sizeof(*h) + s->time_back)
		memcpy(r + h->size - s->time_back, &zero, sizeof(zero));
	if (pid > 0) {
		uint32_t ids[2] = { (uint32_t)pid, (uint32_t)tid };

		memcpy(r + sizeof(*h), ids, sizeof(ids));
		if (s->tid_back && h->size >= sizeof(*h) + 8 + s->tid_back)
			memcpy(r + h->size - s->tid_back, ids, sizeof(ids));
	}
	s->bytes += h->size;
	return r;
}

static void free_record(struct livesb *s, unsigned char *r)
{
	if (!r)
		return;
	s->bytes -= ((const struct perf_event_header *)r)->size;
	free(r);
}

/* ---- the table of processes ---- */

static int proc_used(const void *slot)
{
	return *(struct lsb_proc *const *)slot != NULL;
}

static uint64_t proc_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return tr_pid_hash((*(struct lsb_proc *const *)slot)->pid);
}

static int proc_is(const void *slot, const void *key)
{
	return (*(struct lsb_proc *const *)slot)->pid == *(const pid_t *)key;
}

/* lsb_replay walks the slots: the same entries in the same slots give the
 * same sideband in the same order. */
static const struct tr_probe_ops proc_ops = {
	.size = sizeof(struct lsb_proc *),
	.first = 256,
	.used = proc_used,
	.hash = proc_hash,
};

/* The slot of `pid`, or the free slot where it would go (n_slots > 0). */
static size_t slot_of(const struct livesb *s, pid_t pid)
{
	return tr_probe_find(s->slots, s->n_slots, &proc_ops, tr_pid_hash(pid), proc_is, &pid);
}

static struct lsb_proc *proc_find(const struct livesb *s, pid_t pid)
{
	return s->n_slots ? s->slots[slot_of(s, pid)] : NULL;
}

static struct lsb_proc *proc_get(struct livesb *s, pid_t pid)
{
	struct lsb_proc *p = proc_find(s, pid), **slots;

	if (p)
		return p;
	slots = tr_probe_grow(s->slots, &s->n_slots, s->n + 1, &proc_ops, NULL);
	if (!slots)
		return NULL;
	s->slots = slots;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	s->slots[slot_of(s, pid)] = p;
	s->n++;
	s->bytes += sizeof(*p);
	return p;
}

static void proc_free(struct livesb *s, struct lsb_proc *p)
{
	for (size_t i = 0; i < p->n_threads; i++)
		free_record(s, p->threads[i].comm);
	for (size_t i = 0; i < p->n_maps; i++)
		free_record(s, p->maps[i].rec);
	s->n_threads -= p->n_threads;
	s->n_maps -= p->n_maps;
	s->bytes -= sizeof(*p) + p->cap_threads * sizeof(*p->threads) +
		    p->cap_maps * sizeof(*p->maps);
	free(p->threads);
	free(p->maps);
	free(p);
}

/* Removes `p` from the table (the slots after it move back, so that
 * probing never meets a hole), and frees it. */
static void proc_drop(struct livesb *s, struct lsb_proc *p)
{
	tr_probe_delete(s->slots, s->n_slots, slot_of(s, p->pid), &proc_ops, NULL);
	s->n--;
	proc_free(s, p);
}

/* ---- threads and mappings ---- */

static struct lsb_thread *thread_find(struct lsb_proc *p, pid_t tid)
{
	for (size_t i = 0; i < p->n_threads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

/* Names `tid` with `comm` (taken over) as of `time`, unless a newer name
 * is known. */
static int thread_name(struct livesb *s, struct lsb_proc *p, pid_t tid, uint64_t time,
		       unsigned char *comm)
{
	struct lsb_thread *th = thread_find(p, tid);

	if (!th) {
		size_t cap = p->cap_threads;
		struct lsb_thread *grown = tr_vec_grow(p->threads, &p->cap_threads,
						       p->n_threads + 1, sizeof(*grown), 4);

		if (!grown) {
			free_record(s, comm);
			return -ENOMEM;
		}
		s->bytes += (p->cap_threads - cap) * sizeof(*grown);
		p->threads = grown;
		th = &p->threads[p->n_threads++];
		*th = (struct lsb_thread){ .tid = tid, .time = time };
		s->n_threads++;
	} else if (th->time > time) {
		free_record(s, comm);
		return 0;
	}
	free_record(s, th->comm);
	th->comm = comm;
	th->time = time;
	return 0;
}

static void thread_remove(struct livesb *s, struct lsb_proc *p, size_t i)
{
	free_record(s, p->threads[i].comm);
	p->threads[i] = p->threads[--p->n_threads];
	s->n_threads--;
}

/* Forgets what `p` had before `time`: its mappings and, with `threads`,
 * its threads but `keep`. */
static void proc_trim(struct livesb *s, struct lsb_proc *p, uint64_t time, int threads, pid_t keep)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_maps; i++) {
		if (p->maps[i].time < time) {
			free_record(s, p->maps[i].rec);
			s->n_maps--;
		} else {
			p->maps[n++] = p->maps[i];
		}
	}
	p->n_maps = n;
	for (size_t i = 0; threads && i < p->n_threads;) {
		if (p->threads[i].time < time && p->threads[i].tid != keep)
			thread_remove(s, p, i);
		else
			i++;
	}
}

/* Adds the mapping [start, end) of `time` (its record `rec`, taken over)
 * in time order: a newer one that covers it leaves it out, older ones it
 * covers go. */
static int map_insert(struct livesb *s, struct lsb_proc *p, uint64_t start, uint64_t end,
		      uint64_t time, unsigned char *rec)
{
	size_t pos = p->n_maps, n = 0, cap = p->cap_maps;
	struct lsb_map *grown;

	while (pos > 0 && p->maps[pos - 1].time > time)
		pos--;
	for (size_t i = pos; i < p->n_maps; i++) {
		if (p->maps[i].start <= start && end <= p->maps[i].end) {
			free_record(s, rec);
			return 0;
		}
	}
	for (size_t i = 0; i < p->n_maps; i++) {
		if (i < pos && start <= p->maps[i].start && p->maps[i].end <= end) {
			free_record(s, p->maps[i].rec);
			s->n_maps--;
			continue;
		}
		if (i == pos)
			pos = n;
		p->maps[n++] = p->maps[i];
	}
	if (pos > n)
		pos = n;
	p->n_maps = n;
	grown = tr_vec_grow(p->maps, &p->cap_maps, p->n_maps + 1, sizeof(*grown), 16);
	if (!grown) {
		free_record(s, rec);
		return -ENOMEM;
	}
	s->bytes += (p->cap_maps - cap) * sizeof(*grown);
	p->maps = grown;
	memmove(&p->maps[pos + 1], &p->maps[pos], (p->n_maps - pos) * sizeof(*grown));
	p->maps[pos] = (struct lsb_map){ start, end, time, rec };
	p->n_maps++;
	s->n_maps++;
	return 0;
}

/* ---- the records ---- */

static int on_comm(struct livesb *s, const struct perf_event_header *h)
{
	const uint32_t *u = (const uint32_t *)(h + 1);
	uint64_t time = trailer_time(s, h);
	struct lsb_proc *p;
	unsigned char *rec;

	if (h->size < sizeof(*h) + 8 + s->trailer)
		return 0;
	p = proc_get(s, (pid_t)u[0]);
	if (!p)
		return -ENOMEM;
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
		/* A new image: the old mappings and the other threads are gone. */
		if (time > p->exec_time)
			p->exec_time = time;
		proc_trim(s, p, time, 1, (pid_t)u[1]);
	}
	rec = copy_record(s, h, 0, 0);
	return rec ? thread_name(s, p, (pid_t)u[1], time, rec) : -ENOMEM;
}

/* The kernel's map, [kernel.kallsyms]_text: the latest one.  Other
 * mappings of pid -1 are not kept. */
static int on_kernel_map(struct livesb *s, const struct perf_event_header *h)
{
	/* MMAP: the name after pid/tid and addr, len, pgoff; MMAP2: after
	 * the device or build id (24 bytes) and prot, flags. */
	size_t off = sizeof(*h) + 32 + (h->type == PERF_RECORD_MMAP2 ? 32 : 0);
	static const char name[] = "[kernel.kallsyms]";
	unsigned char *rec;

	if (h->size < off + sizeof(name) - 1 + s->trailer ||
	    memcmp((const char *)h + off, name, sizeof(name) - 1) != 0)
		return 0;
	rec = copy_record(s, h, 0, 0);
	if (!rec)
		return -ENOMEM;
	free_record(s, s->kernel);
	s->kernel = rec;
	return 0;
}

static int on_mmap(struct livesb *s, const struct perf_event_header *h)
{
	/* MMAP and MMAP2 begin alike: u32 pid, tid; u64 addr, len. */
	const uint32_t *u = (const uint32_t *)(h + 1);
	const uint64_t *q = (const uint64_t *)(u + 2);
	uint64_t time = trailer_time(s, h);
	struct lsb_proc *p;
	unsigned char *rec;

	if (h->size < sizeof(*h) + 24 + s->trailer || !q[1])
		return 0;
	if (u[0] == (uint32_t)-1)
		return on_kernel_map(s, h);
	p = proc_get(s, (pid_t)u[0]);
	if (!p)
		return -ENOMEM;
	if (time < p->exec_time)
		return 0; /* of the image before the exec */
	rec = copy_record(s, h, 0, 0);
	return rec ? map_insert(s, p, q[0], q[0] + q[1], time, rec) : -ENOMEM;
}

/* `child` starts as a copy of `parent` at `time`: its mappings older than
 * the fork (none when the child's exec was seen already), and the name of
 * the thread that forked. */
static int fork_process(struct livesb *s, const struct task_body *t)
{
	struct lsb_proc *parent = proc_find(s, (pid_t)t->ppid), *child;
	struct lsb_thread *by;
	int ret = 0;

	child = proc_find(s, (pid_t)t->pid);
	if (child) /* a pid used again: what is older is of the one before */
		proc_trim(s, child, t->time, 1, 0);
	if (!parent)
		goto out;
	if (!child && !(child = proc_get(s, (pid_t)t->pid)))
		return -ENOMEM;
	for (size_t i = 0; ret == 0 && child->exec_time <= t->time && i < parent->n_maps; i++) {
		const struct lsb_map *m = &parent->maps[i];
		unsigned char *rec;

		if (m->time >= t->time)
			break;
		rec = copy_record(s, (const struct perf_event_header *)m->rec, (pid_t)t->pid,
				  (pid_t)t->pid);
		ret = rec ? map_insert(s, child, m->start, m->end, m->time, rec) : -ENOMEM;
	}
	by = thread_find(parent, (pid_t)t->ptid);
	if (ret == 0 && by && by->comm) {
		unsigned char *rec = copy_record(s, (const struct perf_event_header *)by->comm,
						 (pid_t)t->pid, (pid_t)t->pid);

		ret = rec ? thread_name(s, child, (pid_t)t->pid, t->time, rec) : -ENOMEM;
	}
out:
	if (child && !child->n_maps && !child->n_threads)
		proc_drop(s, child);
	return ret;
}

static int on_task(struct livesb *s, const struct perf_event_header *h)
{
	struct task_body t;
	struct lsb_proc *p;

	if (h->size < sizeof(*h) + sizeof(t))
		return 0;
	memcpy(&t, h + 1, sizeof(t));
	if (h->type == PERF_RECORD_FORK && t.pid != t.ppid)
		return fork_process(s, &t);
	p = proc_find(s, (pid_t)t.pid);
	if (!p)
		return 0;
	if (h->type == PERF_RECORD_FORK) {
		/* A new thread, named as the thread that made it. */
		struct lsb_thread *by = thread_find(p, (pid_t)t.ptid);
		unsigned char *rec;

		if (!by || !by->comm)
			return 0;
		rec = copy_record(s, (const struct perf_event_header *)by->comm, (pid_t)t.pid,
				  (pid_t)t.tid);
		return rec ? thread_name(s, p, (pid_t)t.tid, t.time, rec) : -ENOMEM;
	}
	if (t.pid == t.tid) {
		/* The main thread: the process is gone, with what it had up
		 * to then (what a record drained out of order says of a later
		 * exec stays). */
		proc_trim(s, p, t.time + 1, 1, 0);
		if (!p->n_maps && !p->n_threads)
			proc_drop(s, p);
		return 0;
	}
	for (size_t i = 0; i < p->n_threads; i++) {
		if (p->threads[i].tid == (pid_t)t.tid) {
			if (p->threads[i].time <= t.time)
				thread_remove(s, p, i);
			break;
		}
	}
	return 0;
}

int lsb_record(struct livesb *s, const struct perf_event_header *h)
{
	int ret;

	switch (h->type) {
	case PERF_RECORD_COMM:
		ret = s->broken ? 0 : on_comm(s, h);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		ret = s->broken ? 0 : on_mmap(s, h);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		ret = s->broken ? 0 : on_task(s, h);
		break;
	default:
		return 0;
	}
	if (ret < 0)
		s->broken = 1;
	return ret;
}

int lsb_ok(const struct livesb *s)
{
	return !s->broken;
}

void lsb_reset(struct livesb *s)
{
	for (size_t i = 0; i < s->n_slots; i++)
		if (s->slots[i])
			proc_free(s, s->slots[i]);
	free_record(s, s->kernel);
	s->kernel = NULL;
	free(s->slots);
	s->slots = NULL;
	s->n_slots = s->n = 0;
	s->n_threads = s->n_maps = s->bytes = 0;
	s->broken = 0;
}

int lsb_has_kernel(const struct livesb *s)
{
	return s->kernel != NULL;
}

int lsb_replay(const struct livesb *s, lsb_emit_fn emit, void *arg)
{
	if (s->kernel) {
		const struct perf_event_header *h = (const void *)s->kernel;
		int ret = emit(arg, h, h->size);

		if (ret)
			return ret;
	}
	for (size_t i = 0; i < s->n_slots; i++) {
		const struct lsb_proc *p = s->slots[i];
		int ret;

		if (!p)
			continue;
		for (size_t k = 0; k < p->n_threads; k++) {
			const struct perf_event_header *h = (const void *)p->threads[k].comm;

			if ((ret = emit(arg, h, h->size)))
				return ret;
		}
		for (size_t k = 0; k < p->n_maps; k++) {
			const struct perf_event_header *h = (const void *)p->maps[k].rec;

			if ((ret = emit(arg, h, h->size)))
				return ret;
		}
	}
	return 0;
}

void lsb_stats(const struct livesb *s, struct lsb_stats *out)
{
	out->processes = s->n;
	out->threads = s->n_threads;
	out->mappings = s->n_maps;
	out->bytes = s->bytes;
}

void lsb_free(struct livesb *s)
{
	if (!s)
		return;
	lsb_reset(s);
	free(s);
}

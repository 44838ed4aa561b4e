/* callchain = cfi's tables in the kernel (cfimaps.h).
 *
 * Why objects are shared and reference counted: cfi_rows has a fixed size
 * and libc alone is tens of thousands of rows, so every process mapping
 * an object points at the one copy, which goes when the last of them does.
 * Why ranges wait before reuse: the walker on another CPU may be in the
 * middle of a binary search over a range whose last process just went. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/types.h>

#include "cfimaps.h"
#include "lib/buildid.h"
#include "lib/cfi.h"
#include "lib/elfopen.h"
#include "lib/procpid.h"
#include "lib/untrusted.h"
#include "lib/vec.h"
#include "offcpu.h"

/* What lib/cfi.c compiles tables with (lib/unwind.h's UW_AVAILABLE). */
#if defined(HAVE_LIBDW) && defined(__x86_64__)
#define CFI_AVAILABLE 1
#else
#define CFI_AVAILABLE 0
#endif

_Static_assert(sizeof(struct offcpu_cfi_row) == sizeof(struct tr_cfi_row), "rows are copied");
_Static_assert(offsetof(struct offcpu_cfi_row, pc) == offsetof(struct tr_cfi_row, pc), "pc");
_Static_assert(offsetof(struct offcpu_cfi_row, cfa_offset) ==
		       offsetof(struct tr_cfi_row, cfa_offset),
	       "cfa_offset");
_Static_assert(offsetof(struct offcpu_cfi_row, rbp_offset) ==
		       offsetof(struct tr_cfi_row, rbp_offset),
	       "rbp_offset");
_Static_assert(offsetof(struct offcpu_cfi_row, kind) == offsetof(struct tr_cfi_row, kind), "kind");

#define MAPS_MAX (4u << 20)    /* a process's maps text beyond this is not read */
#define RETRY_NS 50000000ull   /* first retry of an incomplete entry, doubling */
#define RETRY_SHIFT_MAX 5      /* at most 1.6 s between retries */
#define SWEEP_NS 1000000000ull /* how often processes are checked for being gone */
#define ID_MAX 64              /* build id bytes kept (longer ones cut: still a key) */
#define PAGE 4096ull           /* x86-64's: segments are mapped from page-rounded offsets */
#define BATCH 4096             /* rows per bpf_map_update_batch */
/* Executable mappings read per load: more than the walker takes, as
 * adjacent ones (a JIT heap's) are merged into one of its entries. */
#define MAPS_READ ((size_t)8 * OFFCPU_CFI_MAX_MAPPINGS)

struct cfi_object {
	uint8_t id[ID_MAX];
	size_t id_len; /* 0: keyed by the file (an inode is reused once freed) */
	uint64_t dev, ino, size, mtime_ns;
	struct cfi_seg *segs;
	size_t n_segs;
	uint32_t row_start, row_count; /* row_count 0: no rows, frame pointers */
	uint32_t refs;                 /* processes whose entry points at it */
	uint64_t stamp;                /* the load that last listed it */
	int full;                      /* rowless only because cfi_rows was full */
	uint64_t full_released;        /* ext.released then: a retry waits for more */
};

struct cfi_proc {
	pid_t tgid;
	struct cfi_object **objs; /* the objects its entry points at, a reference each */
	size_t n_objs;
	/* Its entry left out file mappings whose object could not be opened
	 * yet (the process model lags an exec or a dlopen): cfi_maps_retry
	 * loads it again from retry_at_ns on, backing off; walks meanwhile
	 * stop there, counted, and do not each ask again. */
	uint64_t retry_at_ns; /* 0: complete */
	unsigned retries;
};

struct cfi_maps {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	int rows_fd, procs_fd;
	uint32_t max_rows;
	int batch; /* rows written with bpf_map_update_batch */
	struct cfi_extents ext;
	struct cfi_object **objs;
	size_t n_objs, cap_objs;
	struct cfi_proc *procs;
	size_t n_procs, cap_procs;
	struct cfi_exec_map *maps;     /* a load's mappings */
	struct offcpu_cfi_proc *entry; /* a load's entry */
	uint64_t load_seq;
	int incomplete; /* the load being made left a file mapping out */
	uint64_t last_sweep_ns;
	int warned_full;
	struct cfi_maps_stats stats;
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- /proc/PID/maps ---- */

/* A number at *p in `base` (16 or 10), moved past: 0, or -1 when there
 * are no digits or it does not fit 64 bits. */
static int number(const char **p, unsigned base, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	for (;; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a') + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A') + 10;
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	if (s == *p)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -1;
	(*p)++;
	return 0;
}

/* What the path (up to eol) says of the mapping: its kind, or 0 to skip
 * it.  The process names its files, so nothing here trusts the path
 * beyond its first characters. */
static int path_kind(const char *path, const char *eol, uint64_t ino)
{
	static const char vsyscall[] = "[vsyscall]";

	if ((size_t)(eol - path) == sizeof(vsyscall) - 1 &&
	    memcmp(path, vsyscall, sizeof(vsyscall) - 1) == 0)
		return 0;
	static const char memfd[] = "/memfd:";

	/* "//anon" and memfd's ("/memfd:doublemapper (deleted)": the .NET
	 * runtime's JIT code, written through a second mapping) have no file
	 * to open; the rest is opened by its path, and " (deleted)" ones
	 * are walked by frame pointers. */
	if ((size_t)(eol - path) >= sizeof(memfd) - 1 &&
	    memcmp(path, memfd, sizeof(memfd) - 1) == 0)
		return CFI_MAP_ANON;
	if (path < eol && path[0] == '/' && ino != 0 && !(eol - path >= 2 && path[1] == '/'))
		return CFI_MAP_FILE;
	return CFI_MAP_ANON;
}

/* One line "start-end perms offset maj:min inode   path" ending at eol:
 * 1 and *out for an executable mapping, 0 for another, -1 malformed. */
static int parse_line(const char *s, const char *eol, struct cfi_exec_map *out)
{
	uint64_t dev_major, dev_minor;
	int kind;

	if (number(&s, 16, &out->start) || expect(&s, '-') || number(&s, 16, &out->end) ||
	    expect(&s, ' '))
		return -1;
	if (eol - s < 5 || s[4] != ' ')
		return -1;
	if (s[2] != 'x')
		return 0;
	s += 5;
	if (number(&s, 16, &out->pgoff) || expect(&s, ' ') || number(&s, 16, &dev_major) ||
	    expect(&s, ':') || number(&s, 16, &dev_minor) || expect(&s, ' ') ||
	    number(&s, 10, &out->ino))
		return -1;
	if (s < eol && *s != ' ')
		return -1;
	while (s < eol && *s == ' ')
		s++;
	if (out->start >= out->end)
		return -1;
	kind = path_kind(s, eol, out->ino);
	if (!kind)
		return 0;
	out->kind = kind;
	out->path = s;
	out->path_len = (size_t)(eol - s);
	return 1;
}

void cfi_maps_parse(const char *text, struct cfi_exec_map *out, size_t max, size_t *n,
		    uint64_t *dropped)
{
	uint64_t prev_end = 0;
	const char *s = text, *eol;

	*n = 0;
	/* A line without its newline was cut by the read's bound. */
	for (; (eol = strchr(s, '\n')); s = eol + 1) {
		struct cfi_exec_map x;

		if (parse_line(s, eol, &x) != 1 || x.start < prev_end)
			continue;
		prev_end = x.end;
		if (*n < max)
			out[(*n)++] = x;
		else
			(*dropped)++;
	}
}

/* ---- load bias ---- */

int cfi_maps_bias(const struct cfi_seg *segs, size_t n, uint64_t start, uint64_t pgoff,
		  uint64_t *bias)
{
	const struct cfi_seg *best = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct cfi_seg *s = &segs[i];

		if (s->filesz > UINT64_MAX - s->offset || pgoff < (s->offset & ~(PAGE - 1)) ||
		    pgoff >= s->offset + s->filesz)
			continue;
		/* Two segments may share the page at their boundary: the
		 * mapping is executable, so is the one it maps. */
		if (!best || (!(best->flags & PF_X) && (s->flags & PF_X)))
			best = s;
	}
	if (!best)
		return -ENOENT;
	/* Within a segment, address - file offset is bias + vaddr - offset:
	 * whatever page of it the mapping starts at.  Modulo 2^64, as the
	 * walker subtracts. */
	*bias = start - pgoff - (best->vaddr - best->offset);
	return 0;
}

/* ---- ranges of cfi_rows ---- */

int cfi_ext_init(struct cfi_extents *x, uint32_t size)
{
	memset(x, 0, sizeof(*x));
	x->free = calloc(1, sizeof(*x->free));
	if (!x->free)
		return -ENOMEM;
	x->cap_free = 1;
	x->free[0] = (struct cfi_extent){ .start = 0, .count = size };
	x->n_free = size ? 1 : 0;
	return 0;
}

void cfi_ext_fini(struct cfi_extents *x)
{
	free(x->free);
	free(x->held);
	memset(x, 0, sizeof(*x));
}

int cfi_ext_alloc(struct cfi_extents *x, uint32_t count, uint32_t *start)
{
	if (count == 0)
		return -EINVAL;
	for (size_t i = 0; i < x->n_free; i++) {
		struct cfi_extent *e = &x->free[i];

		if (e->count < count)
			continue;
		*start = e->start;
		e->start += count;
		e->count -= count;
		if (e->count == 0) {
			memmove(e, e + 1, (x->n_free - i - 1) * sizeof(*e));
			x->n_free--;
		}
		return 0;
	}
	return -ENOSPC;
}

int cfi_ext_free(struct cfi_extents *x, uint32_t start, uint32_t count, uint64_t now_ns)
{
	struct cfi_extent *grown;

	if (count == 0)
		return 0;
	grown = tr_vec_grow(x->held, &x->cap_held, x->n_held + 1, sizeof(*grown), 16);
	if (!grown)
		return -ENOMEM;
	x->held = grown;
	x->held[x->n_held++] = (struct cfi_extent){ start, count, now_ns };
	return 0;
}

/* Into the free list, merged with the neighbours it touches. */
static int free_insert(struct cfi_extents *x, uint32_t start, uint32_t count)
{
	struct cfi_extent *grown, *f;
	size_t i = 0;

	while (i < x->n_free && x->free[i].start < start)
		i++;
	f = x->free;
	if (i > 0 && f[i - 1].start + f[i - 1].count == start) {
		f[i - 1].count += count;
		if (i < x->n_free && start + count == f[i].start) {
			f[i - 1].count += f[i].count;
			memmove(&f[i], &f[i + 1], (x->n_free - i - 1) * sizeof(*f));
			x->n_free--;
		}
		return 0;
	}
	if (i < x->n_free && start + count == f[i].start) {
		f[i].start = start;
		f[i].count += count;
		return 0;
	}
	grown = tr_vec_grow(x->free, &x->cap_free, x->n_free + 1, sizeof(*grown), 16);
	if (!grown)
		return -ENOMEM;
	x->free = grown;
	memmove(&grown[i + 1], &grown[i], (x->n_free - i) * sizeof(*grown));
	grown[i] = (struct cfi_extent){ .start = start, .count = count };
	x->n_free++;
	return 0;
}

void cfi_ext_release(struct cfi_extents *x, uint64_t now_ns)
{
	size_t done = 0;

	/* Held in the order freed: the ripe ones come first. */
	while (done < x->n_held && now_ns - x->held[done].freed_ns >= CFI_QUARANTINE_NS) {
		if (free_insert(x, x->held[done].start, x->held[done].count) != 0)
			break; /* out of memory: kept for a later try */
		done++;
	}
	if (!done)
		return;
	memmove(x->held, x->held + done, (x->n_held - done) * sizeof(*x->held));
	x->n_held -= done;
	x->released += done;
}

/* ---- rows ---- */

static int write_batch(int fd, const __u32 *keys, const struct offcpu_cfi_row *rows, __u32 count)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_ANY);

	while (count) {
		__u32 done = count;
		int ret = bpf_map_update_batch(fd, keys, rows, &done, &opts);

		if (ret < 0)
			return ret;
		if (done == 0 || done > count)
			return -EIO;
		keys += done;
		rows += done;
		count -= done;
	}
	return 0;
}

int cfi_maps_write_rows(int fd, uint32_t start, const void *rows, size_t n, int batch)
{
	const struct offcpu_cfi_row *r = rows;
	__u32 keys[BATCH];

	if (n > UINT32_MAX - start)
		return -EINVAL;
	for (size_t done = 0; done < n;) {
		__u32 count = n - done < BATCH ? (__u32)(n - done) : BATCH;
		int ret = 0;

		for (__u32 i = 0; i < count; i++)
			keys[i] = start + (__u32)done + i;
		if (batch)
			ret = write_batch(fd, keys, r + done, count);
		for (__u32 i = 0; !batch && i < count && ret == 0; i++)
			ret = bpf_map_update_elem(fd, &keys[i], &r[done + i], BPF_ANY);
		if (ret < 0)
			return ret;
		done += count;
	}
	return 0;
}

static int write_rows(struct cfi_maps *m, uint32_t start, const struct tr_cfi_row *rows, size_t n)
{
	int ret = cfi_maps_write_rows(m->rows_fd, start, rows, n, m->batch);

	/* A kernel without batch operations on arrays (before 5.6). */
	if (m->batch && (ret == -EINVAL || ret == -ENOTSUP || ret == -EOPNOTSUPP)) {
		m->batch = 0;
		ret = cfi_maps_write_rows(m->rows_fd, start, rows, n, 0);
	}
	return ret;
}

/* ---- objects ---- */

static void no_room(struct cfi_maps *m, struct cfi_object *o)
{
	if (!o->full)
		m->stats.rows_full++;
	o->full = 1;
	o->full_released = m->ext.released;
	if (m->warned_full)
		return;
	m->warned_full = 1;
	m->svc->run->log(m->ctx, TRACERIG_LOG_WARN,
			 "callchain = cfi: the %u rows of CFI are all in use: objects loaded from "
			 "now on are walked by frame pointers (stacks through code built without "
			 "them are cut short); raise ebpf.cfi_max_rows",
			 (unsigned)m->max_rows);
}

/* The object's rows into cfi_rows, when it has CFI and there is room. */
static void compile(struct cfi_maps *m, struct cfi_object *o, int fd)
{
	struct tr_cfi_table t;
	uint32_t start;

	if (tr_cfi_build(fd, &t) != 0)
		return; /* no FDE in .eh_frame nor .debug_frame, not x86-64: frame pointers for good */
	if (t.n == 0 || t.n > 1u << OFFCPU_CFI_ROW_SEARCH)
		goto out; /* beyond the walker's binary search */
	if (cfi_ext_alloc(&m->ext, (uint32_t)t.n, &start) != 0) {
		no_room(m, o);
		goto out;
	}
	if (write_rows(m, start, t.rows, t.n) != 0) {
		cfi_ext_free(&m->ext, start, (uint32_t)t.n, monotonic_ns());
		goto out;
	}
	o->row_start = start;
	o->row_count = (uint32_t)t.n;
	o->full = 0;
	m->stats.rows_used += t.n;
out:
	tr_cfi_free(&t);
}

static int read_segs(struct cfi_object *o, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0 || n == 0)
		return 0;
	o->segs = calloc(n, sizeof(*o->segs));
	if (!o->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		o->segs[o->n_segs++] =
			(struct cfi_seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_flags };
	}
	return 0;
}

static int same_object(const struct cfi_object *a, const struct cfi_object *b)
{
	if (a->id_len || b->id_len)
		return a->id_len == b->id_len && memcmp(a->id, b->id, a->id_len) == 0;
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

static struct cfi_object *object_find(struct cfi_maps *m, const struct cfi_object *key)
{
	for (size_t i = 0; i < m->n_objs; i++)
		if (same_object(m->objs[i], key))
			return m->objs[i];
	return NULL;
}

/* A new object like `key` (its segments from elf, NULL when it is not
 * ELF), compiled, in the cache with no reference yet. */
static struct cfi_object *object_new(struct cfi_maps *m, const struct cfi_object *key, Elf *elf,
				     int fd)
{
	struct cfi_object **grown, *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	memcpy(o->id, key->id, key->id_len);
	o->id_len = key->id_len;
	o->dev = key->dev;
	o->ino = key->ino;
	o->size = key->size;
	o->mtime_ns = key->mtime_ns;
	grown = tr_vec_grow(m->objs, &m->cap_objs, m->n_objs + 1, sizeof(*grown), 64);
	if (!grown || (elf && read_segs(o, elf) != 0)) {
		free(o->segs);
		free(o);
		return NULL;
	}
	m->objs = grown;
	m->objs[m->n_objs++] = o;
	/* Not ELF (a .NET ReadyToRun image is PE): kept rowless, not retried. */
	if (elf)
		compile(m, o, fd);
	return o;
}

/* The object open on fd, from the cache or compiled now. */
static struct cfi_object *object_of_fd(struct cfi_maps *m, int fd)
{
	struct cfi_object key = { 0 }, *o;
	struct stat st;
	Elf *elf;
	int err;

	if (fstat(fd, &st) != 0)
		return NULL;
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	key.size = (uint64_t)st.st_size;
	key.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	elf = tr_elf_open_fd(fd, &err);
	if (elf && tr_buildid_from_elf(elf, key.id, sizeof(key.id), &key.id_len) != 0)
		key.id_len = 0;
	o = object_find(m, &key);
	if (!o)
		o = object_new(m, &key, elf, fd);
	else if (o->full && o->full_released != m->ext.released)
		compile(m, o, fd); /* ranges were freed since it found none */
	if (elf)
		elf_end(elf);
	return o;
}

/* The object mapped at x, opened by its path in the maps just read, inside
 * the process's root, no link followed (lib/untrusted.h), and checked to
 * be the mapped inode: what the process maps now, whatever the process
 * model has seen of it yet (it may lag an exec or a dlopen, or hold a
 * recording's view).  Transient failures (a file system that did not
 * answer, no descriptor free) leave the mapping out, to be loaded again;
 * others (a file deleted or replaced since it was mapped) walk it by
 * frame pointers. */
static struct cfi_object *object_at(struct cfi_maps *m, pid_t tgid, const struct cfi_exec_map *x)
{
	static const char deleted[] = " (deleted)";
	struct cfi_object *o = NULL;
	struct tr_untrusted u;
	char path[PATH_MAX];
	int fd;

	if (x->path_len >= sizeof(path) || (x->path_len >= sizeof(deleted) - 1 &&
					    memcmp(x->path + x->path_len - (sizeof(deleted) - 1),
						   deleted, sizeof(deleted) - 1) == 0))
		return NULL;
	memcpy(path, x->path, x->path_len);
	path[x->path_len] = '\0';
	fd = tr_untrusted_open(tgid, path, TR_OBJECT_MAX, &u);
	if (fd == -ETIMEDOUT || fd == -EMFILE || fd == -ENFILE || fd == -ENOMEM) {
		m->incomplete = 1;
		m->svc->run->log(
			m->ctx, TRACERIG_LOG_DEBUG,
			"callchain = cfi: pid %d: cannot open %s now (%s): its frames stop "
			"the walk until it opens",
			(int)tgid, path, strerror(-fd));
		return NULL;
	}
	if (fd < 0)
		return NULL;
	if ((uint64_t)u.st.st_ino == x->ino)
		o = object_of_fd(m, fd);
	close(fd);
	return o;
}

/* Frees the objects no process maps any more; their ranges go to quarantine. */
static void collect(struct cfi_maps *m, uint64_t now_ns)
{
	for (size_t i = 0; i < m->n_objs;) {
		struct cfi_object *o = m->objs[i];

		if (o->refs) {
			i++;
			continue;
		}
		if (o->row_count) {
			cfi_ext_free(&m->ext, o->row_start, o->row_count, now_ns);
			m->stats.rows_used -= o->row_count;
		}
		free(o->segs);
		free(o);
		m->objs[i] = m->objs[--m->n_objs];
	}
}

/* ---- processes ---- */

static void unref_all(struct cfi_object **objs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		objs[i]->refs--;
	free(objs);
}

static struct cfi_proc *proc_find(struct cfi_maps *m, pid_t tgid)
{
	for (size_t i = 0; i < m->n_procs; i++)
		if (m->procs[i].tgid == tgid)
			return &m->procs[i];
	return NULL;
}

static struct cfi_proc *proc_get(struct cfi_maps *m, pid_t tgid)
{
	struct cfi_proc *grown, *p = proc_find(m, tgid);

	if (p)
		return p;
	grown = tr_vec_grow(m->procs, &m->cap_procs, m->n_procs + 1, sizeof(*grown), 64);
	if (!grown)
		return NULL;
	m->procs = grown;
	p = &m->procs[m->n_procs++];
	*p = (struct cfi_proc){ .tgid = tgid };
	return p;
}

/* Its entry deleted first: the walker must not meet ranges about to be reused. */
static void proc_drop(struct cfi_maps *m, struct cfi_proc *p)
{
	__u32 key = (__u32)p->tgid;

	bpf_map_delete_elem(m->procs_fd, &key); /* -ENOENT: never written */
	unref_all(p->objs, p->n_objs);
	*p = m->procs[--m->n_procs];
}

/* Forgets the processes gone since (not `keep`, being loaded). */
static void sweep(struct cfi_maps *m, uint64_t now_ns, pid_t keep)
{
	if (m->last_sweep_ns && now_ns - m->last_sweep_ns < SWEEP_NS)
		return;
	m->last_sweep_ns = now_ns;
	for (size_t i = 0; i < m->n_procs;) {
		struct cfi_proc *p = &m->procs[i];

		if (p->tgid != keep && kill(p->tgid, 0) != 0 && errno == ESRCH)
			proc_drop(m, p);
		else
			i++;
	}
}

void cfi_maps_forget(struct cfi_maps *m, pid_t tgid)
{
	struct cfi_proc *p = proc_find(m, tgid);

	if (!p)
		return;
	proc_drop(m, p);
	collect(m, monotonic_ns());
}

/* ---- loads ---- */

/* Whether x extends the entry's last mapping: adjacent pieces of one
 * thing (a JIT heap's many mappings, an object split by mprotect) take
 * one of the walker's OFFCPU_CFI_MAX_MAPPINGS. */
static int extends(const struct offcpu_cfi_proc *e, const struct offcpu_cfi_mapping *x)
{
	const struct offcpu_cfi_mapping *last = e->n ? &e->m[e->n - 1] : NULL;

	return last && last->end == x->start && last->row_count == x->row_count &&
	       last->row_start == x->row_start && last->bias == x->bias;
}

/* 0, or -ENOSPC when the entry is full. */
static int append(struct offcpu_cfi_proc *e, const struct offcpu_cfi_mapping *x)
{
	if (extends(e, x)) {
		e->m[e->n - 1].end = x->end;
		return 0;
	}
	if (e->n == OFFCPU_CFI_MAX_MAPPINGS)
		return -ENOSPC;
	e->m[e->n++] = *x;
	return 0;
}

/* Lists o once in *objs with a reference: 0 or -ENOMEM. */
static int hold(struct cfi_maps *m, struct cfi_object *o, struct cfi_object ***objs, size_t *n,
		size_t *cap)
{
	struct cfi_object **grown;

	if (o->stamp == m->load_seq)
		return 0;
	grown = tr_vec_grow(*objs, cap, *n + 1, sizeof(*grown), 16);
	if (!grown)
		return -ENOMEM;
	*objs = grown;
	grown[(*n)++] = o;
	o->stamp = m->load_seq;
	o->refs++;
	return 0;
}

/* m->entry for the n mappings in m->maps; the objects it points at into
 * *objs, a reference each. */
static int fill_entry(struct cfi_maps *m, pid_t tgid, size_t n, struct cfi_object ***objs,
		      size_t *n_objs)
{
	struct offcpu_cfi_proc *e = m->entry;
	size_t cap = 0;

	*objs = NULL;
	*n_objs = 0;
	e->n = 0;
	e->stale = 0;
	m->load_seq++;
	/* Unique per write, never 0: the walker's cache is keyed by it. */
	e->gen = (uint32_t)m->load_seq ? (uint32_t)m->load_seq : 1;
	for (size_t i = 0; i < n; i++) {
		const struct cfi_exec_map *x = &m->maps[i];
		struct offcpu_cfi_mapping cm = { .start = x->start, .end = x->end };
		struct cfi_object *o = NULL;
		uint64_t bias;

		/* Full: only what merges into the last mapping still fits. */
		if (e->n == OFFCPU_CFI_MAX_MAPPINGS &&
		    (x->kind == CFI_MAP_FILE || !extends(e, &cm))) {
			m->stats.mappings_dropped++;
			continue;
		}
		if (x->kind == CFI_MAP_FILE) {
			int was = m->incomplete;

			m->incomplete = 0;
			o = object_at(m, tgid, x);
			/* Not known yet: left out, so that walks stop there
			 * rather than go on by frame pointers through code
			 * that has no frame pointers. */
			if (m->incomplete)
				continue;
			m->incomplete = was;
		}
		if (o && hold(m, o, objs, n_objs, &cap) != 0) {
			unref_all(*objs, *n_objs);
			return -ENOMEM;
		}
		if (o && o->row_count &&
		    cfi_maps_bias(o->segs, o->n_segs, x->start, x->pgoff, &bias) == 0) {
			cm.bias = bias;
			cm.row_start = o->row_start;
			cm.row_count = o->row_count;
		}
		if (append(e, &cm) != 0)
			m->stats.mappings_dropped++;
	}
	return 0;
}

int cfi_maps_load_text(struct cfi_maps *m, pid_t tgid, const char *text)
{
	uint64_t now = monotonic_ns();
	struct cfi_object **objs;
	struct cfi_proc *p;
	size_t n, n_objs;
	__u32 key = (__u32)tgid;
	int ret;

	if (tgid <= 0)
		return -EINVAL;
	cfi_ext_release(&m->ext, now);
	sweep(m, now, tgid);
	cfi_maps_parse(text, m->maps, MAPS_READ, &n, &m->stats.mappings_dropped);
	m->incomplete = 0;
	ret = fill_entry(m, tgid, n, &objs, &n_objs);
	if (ret < 0)
		goto out;
	/* Rows are written: now the entry that points at them. */
	p = proc_get(m, tgid);
	if (!p)
		ret = -ENOMEM;
	else if (bpf_map_update_elem(m->procs_fd, &key, m->entry, BPF_ANY) != 0)
		ret = -errno;
	if (ret < 0) {
		unref_all(objs, n_objs);
		goto out;
	}
	unref_all(p->objs, p->n_objs);
	p->objs = objs;
	p->n_objs = n_objs;
	m->stats.loads++;
	if (m->incomplete) {
		unsigned shift = p->retries < RETRY_SHIFT_MAX ? p->retries : RETRY_SHIFT_MAX;

		p->retry_at_ns = now + (RETRY_NS << shift);
		p->retries++;
		m->stats.incomplete_loads++;
	} else {
		p->retry_at_ns = 0;
		p->retries = 0;
	}
out:
	collect(m, now);
	return ret;
}

int cfi_maps_load(struct cfi_maps *m, pid_t tgid)
{
	struct cfi_proc *p;
	char path[32];
	char *text;
	size_t len;
	int ret;

	if (tgid <= 0)
		return -EINVAL;
	/* An incomplete entry is loaded again by cfi_maps_retry, in its time:
	 * not at each walk that meets what it left out. */
	p = proc_find(m, tgid);
	if (p && p->retry_at_ns && monotonic_ns() < p->retry_at_ns)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tgid);
	ret = tr_read_proc_file(AT_FDCWD, path, MAPS_MAX, &text, &len);
	if (ret == -ENOENT || ret == -ESRCH) {
		cfi_maps_forget(m, tgid);
		return -ESRCH;
	}
	if (ret < 0)
		return ret;
	ret = cfi_maps_load_text(m, tgid, text);
	free(text);
	return ret;
}

/* ---- the table ---- */

int cfi_maps_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx, int rows_fd,
		 uint32_t max_rows, int procs_fd, struct cfi_maps **out)
{
	struct cfi_maps *m;

	*out = NULL;
	if (!CFI_AVAILABLE)
		return -ENOTSUP;
	if (!svc || rows_fd < 0 || procs_fd < 0 || max_rows == 0)
		return -EINVAL;
	if (tr_libelf_ready() != 0)
		return -ENOTSUP;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	*m = (struct cfi_maps){ .svc = svc,
				.ctx = ctx,
				.rows_fd = rows_fd,
				.procs_fd = procs_fd,
				.max_rows = max_rows,
				.batch = 1 };
	m->maps = calloc(MAPS_READ, sizeof(*m->maps));
	m->entry = calloc(1, sizeof(*m->entry));
	if (!m->maps || !m->entry || cfi_ext_init(&m->ext, max_rows) != 0) {
		cfi_maps_free(m);
		return -ENOMEM;
	}
	m->stats.rows_max = max_rows;
	*out = m;
	return 0;
}

void cfi_maps_free(struct cfi_maps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_procs; i++)
		free(m->procs[i].objs);
	for (size_t i = 0; i < m->n_objs; i++) {
		free(m->objs[i]->segs);
		free(m->objs[i]);
	}
	free(m->procs);
	free(m->objs);
	free(m->maps);
	free(m->entry);
	cfi_ext_fini(&m->ext);
	free(m);
}

void cfi_maps_get_stats(const struct cfi_maps *m, struct cfi_maps_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!m)
		return;
	*out = m->stats;
	out->objects = m->n_objs;
	out->processes = m->n_procs;
	for (size_t i = 0; i < m->n_objs; i++)
		out->objects_no_cfi += m->objs[i]->row_count == 0;
}

void cfi_maps_retry(struct cfi_maps *m)
{
	uint64_t now = monotonic_ns();

	/* From the end: a process found gone is dropped by moving the last
	 * one into its place, which this loop has passed already. */
	for (size_t i = m->n_procs; i-- > 0;) {
		if (i >= m->n_procs)
			continue;
		if (m->procs[i].retry_at_ns && now >= m->procs[i].retry_at_ns)
			(void)cfi_maps_load(m, m->procs[i].tgid);
	}
}

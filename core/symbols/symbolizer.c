/* The shared symbolizer: host PID + address -> function, object, offsets.
 *
 * Speed comes from caches, all behind one mutex:
 * - per process: its executable mappings (from /proc/PID/maps, read once,
 *   reread on a miss (see worth_rereading)), sorted for binary search;
 * - per object: one symbol table per (device, inode), so a libc mapped by a
 *   hundred processes, in containers or not, is read once;
 * - the kernel's symbols, read once from /proc/kallsyms;
 * - per process: JIT symbols from perf maps and jitdump files;
 * - per (process, address): the frame's name (frames.c), keyed by the
 *   generation of the process's address space, so a change of its mappings
 *   (exec, mmap, fork, a reread) is never answered from before it.
 * Strings handed out live in one arena until tr_symbolizer_free. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "demangle.h"
#include "elfsym.h"
#include "frames.h"
#include "interned.h"
#include "jit.h"
#include "kallsyms.h"
#include "lib/buildid.h"
#include "lib/hash.h"
#include "lib/probe.h"
#include "lib/untrusted.h"
#include "lib/vec.h"
#include "procfs.h"
#include "r2rsym.h"
#include "symbolizer.h"
#include "symtab.h"

#define REREAD_NS (50 * 1000000ull)
#define OPEN_ATTEMPTS 3
#define VDSO_MAX (1u << 20)

struct dso {
	dev_t dev;
	uint64_t ino;
	/* Known by build id only (a recorded mapping): read from the mapping's
	 * path and kept when the file's build id is this one. */
	unsigned char bid[20];
	size_t bid_len;
	int state; /* 0 not read yet, 1 read, -1 unreadable for good */
	int attempts;
	/* Known by build id: the paths it could not be read from, each given
	 * up on after its own OPEN_ATTEMPTS.  Another path of the same build
	 * id (another copy, another container's) may still be readable: a
	 * process whose file was removed must not leave the others unnamed. */
	struct bid_path *tried;
	size_t n_tried, tried_cap;
	struct tr_elf elf;
	struct dso *next; /* on the vdsos or bid_dsos list only */
};

struct bid_path {
	const char *path; /* interned: compared by address */
	int attempts;
};

enum map_kind { MAP_FILE, MAP_ANON, MAP_VDSO, MAP_OTHER };

struct mapping {
	uint64_t start, end, pgoff;
	const char *path; /* interned; what the process sees */
	struct dso *dso;  /* MAP_FILE only */
	enum map_kind kind;
	int deleted;
};

struct proc {
	pid_t pid;
	struct mapping *maps;
	size_t n_maps, last;
	int maps_read, gone;
	int maps_err; /* the last read's -errno, 0 when it succeeded */
	uint64_t maps_read_ns;
	struct tr_jit jit;
	int jit_auto, jit_read;
	uint64_t jit_read_ns;
	const char *jit_dso; /* "/tmp/perf-PID.map" */
	struct dso *vdso;
	int vdso_tried;
	/* Fed by a recording (tr_symbolizer_record_*): maps holds the recorded
	 * mappings and /proc/PID/maps is never read again. */
	int recorded;
	/* Bumped whenever what this process's addresses resolve to may have
	 * changed: the frame-name cache keys by it. */
	uint32_t gen;
	/* Its entries in the frame-name cache, dropped with it. */
	struct tr_frame *frames;
};

struct tr_symbolizer {
	pthread_mutex_t lock;
	struct tr_arena arena;
	/* Processes by PID and objects by (device, inode), lib/probe.h tables
	 * of pointers, not of entries: every mapping points at its object,
	 * and a fork holds its parent while proc_get makes the child, which
	 * may grow the table; growing moves slots, never what they point to. */
	struct proc **procs;
	size_t procs_cap, n_procs;
	struct dso **dsos;
	size_t dsos_cap, n_dsos;
	/* One per vDSO image (one per ABI of the kernel), keyed by content
	 * hash in ino: a few at most. */
	struct dso *vdsos;
	/* Known by build id only: one per object of a recording that none
	 * read by (device, inode) already is, tens to hundreds.  A list, for
	 * a miss in it walks the whole dsos table (dso_by_build_id) anyway. */
	struct dso *bid_dsos;
	struct tr_interned paths; /* object paths, once each */
	struct tr_kallsyms kallsyms;
	int kallsyms_state; /* 0 not read, 1 read, < 0 failed */
	struct tr_frames frames; /* frame names by (process, generation, address) */
	struct tr_jit_shared jit_shared; /* what the processes' JIT sources read together */
	/* The running kernel's build id, for its mapping (tr_symbolizer_mapping). */
	unsigned char kernel_bid[TR_BUILDID_PERF_MAX];
	size_t kernel_bid_len;
	int kernel_bid_read;
	int fds_said; /* the warning about descriptors is given once */
	/* Every generation comes from here, so that a process made again for
	 * a PID whose earlier process was forgotten (tr_symbolizer_forget)
	 * never finds what callers kept under that PID and an old generation. */
	uint32_t gen_seq;
	int own_vdso_tried;
};

static void bump_gen(struct tr_symbolizer *sym, struct proc *p)
{
	p->gen = ++sym->gen_seq;
}

/* ---- objects ---------------------------------------------------------- */

/* An open that found no descriptor says nothing of the file: it is no
 * attempt (OPEN_ATTEMPTS), and the object is read when one is free. */
static int out_of_fds(int err)
{
	return err == -EMFILE || err == -ENFILE;
}

/* Under the lock. */
static void say_out_of_fds(struct tr_symbolizer *sym, const char *path, int err)
{
	if (sym->fds_said)
		return;
	sym->fds_said = 1;
	tr_log(TRACERIG_LOG_WARN, "symbols", "cannot open %s to read its symbols: %s (its frames "
	       "stay unnamed until a descriptor is free; raise the open-files limit: ulimit -Hn, "
	       "or LimitNOFILE= for a service)", path, strerror(-err));
}

/* Both tables hold pointers: a free slot is NULL. */
static int ptr_used(const void *slot)
{
	return *(void *const *)slot != NULL;
}

static uint64_t dso_key_hash(dev_t dev, uint64_t ino)
{
	uint64_t h = tr_hash_mix(tr_hash_mix(0, (uint64_t)dev), ino);

	return h ^ (h >> 31);
}

static uint64_t dso_hash(const void *slot, const void *ctx)
{
	const struct dso *d = *(struct dso *const *)slot;

	(void)ctx;
	return dso_key_hash(d->dev, d->ino);
}

struct dso_key {
	dev_t dev;
	uint64_t ino;
};

static int dso_is(const void *slot, const void *key)
{
	const struct dso *d = *(struct dso *const *)slot;
	const struct dso_key *k = key;

	return d->dev == k->dev && d->ino == k->ino;
}

static const struct tr_probe_ops dso_ops = {
	.size = sizeof(struct dso *),
	.first = 256,
	.used = ptr_used,
	.hash = dso_hash,
};

/* The slot of the object, or the free slot where it would go (dsos_cap > 0). */
static size_t dso_slot(const struct tr_symbolizer *sym, const struct dso_key *k)
{
	return tr_probe_find(sym->dsos, sym->dsos_cap, &dso_ops, dso_key_hash(k->dev, k->ino),
			     dso_is, k);
}

static struct dso *dso_get(struct tr_symbolizer *sym, dev_t dev, uint64_t ino)
{
	struct dso_key k = { .dev = dev, .ino = ino };
	struct dso **slots, *d;

	if (sym->dsos_cap && (d = sym->dsos[dso_slot(sym, &k)]))
		return d;
	slots = tr_probe_grow(sym->dsos, &sym->dsos_cap, sym->n_dsos + 1, &dso_ops, NULL);
	if (!slots)
		return NULL;
	sym->dsos = slots;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->dev = dev;
	d->ino = ino;
	sym->dsos[dso_slot(sym, &k)] = d;
	sym->n_dsos++;
	return d;
}

/* Where the file behind a mapping may be opened, best first: through the
 * process's root (the path means something only in its mount namespace);
 * the mapping itself (deleted or unreachable files); for a process that is
 * gone, the same path in our root.  Each place is checked by the caller. */
enum { AT_ROOT_PATH, AT_MAP_FILE, AT_HOST_PATH, N_PLACES };

/* *st gets the file's stat: never fstat the fd, which may be a copy of a
 * file on a network file system (lib/opener.h). */
static int open_at_place(const struct proc *p, const struct mapping *m, int place,
			 struct stat *st)
{
	struct tr_untrusted u;
	int fd;

	if (place == AT_MAP_FILE)
		return tr_open_map_file(p->pid, m->start, m->end, st);
	if (m->deleted)
		return -ENOENT;
	fd = tr_untrusted_open(place == AT_ROOT_PATH ? p->pid : 0, m->path, TR_OBJECT_MAX, &u);
	if (fd >= 0)
		*st = u.st;
	return fd;
}

/* The file of a device-and-inode-keyed object: the first place from
 * `first` on whose file is that inode (the live mapping is it by
 * definition), *at the place.  -EMFILE or -ENFILE when a place could not
 * be tried for want of descriptors. */
static int open_mapped(const struct proc *p, const struct mapping *m, int first, int *at)
{
	int fd = -ENOENT, no_fd = 0;

	for (int place = first; place < N_PLACES && fd < 0; place++) {
		struct stat st;

		*at = place;
		fd = open_at_place(p, m, place, &st);
		if (out_of_fds(fd))
			no_fd = fd;
		if (fd < 0 || place == AT_MAP_FILE)
			continue;
		if ((uint64_t)st.st_ino != m->dso->ino ||
		    (place == AT_HOST_PATH && st.st_dev != m->dso->dev)) {
			close(fd);
			fd = -ESTALE;
		}
	}
	return fd < 0 && no_fd ? no_fd : fd;
}

/* The attempts made at reading a build-id-keyed object from this path
 * (added when `add`); NULL when none were, or out of memory. */
static struct bid_path *tried_path(struct dso *d, const char *path, int add)
{
	struct bid_path *grown;

	for (size_t i = 0; i < d->n_tried; i++)
		if (d->tried[i].path == path)
			return &d->tried[i];
	if (!add)
		return NULL;
	grown = tr_vec_grow(d->tried, &d->tried_cap, d->n_tried + 1, sizeof(*grown), 4);
	if (!grown)
		return NULL;
	d->tried = grown;
	d->tried[d->n_tried] = (struct bid_path){ .path = path };
	return &d->tried[d->n_tried++];
}

/* A build-id-keyed object (a recorded mapping): read from the first place
 * whose file has that build id.  0, or -EMFILE/-ENFILE when a place could
 * not be tried for want of descriptors (then no attempt is counted). */
static int dso_load_by_build_id(struct tr_symbolizer *sym, const struct proc *p,
				const struct mapping *m)
{
	struct dso *d = m->dso;
	struct bid_path *tried = tried_path(d, m->path, 0);
	int no_fd = 0;

	if (tried && tried->attempts >= OPEN_ATTEMPTS)
		return 0;
	for (int place = 0; place < N_PLACES && d->state == 0; place++) {
		struct stat st;
		int fd = open_at_place(p, m, place, &st), ret;

		if (out_of_fds(fd))
			no_fd = fd;
		if (fd < 0)
			continue;
		ret = tr_elf_read(&d->elf, fd, place == AT_HOST_PATH ? 0 : p->pid, m->path,
				  &sym->arena);
		if (ret < 0) {
			/* Gone meanwhile (-ESRCH): the places after this one
			 * (the same build id in our root) have their own. */
			if (out_of_fds(ret))
				no_fd = ret;
			tr_elf_free(&d->elf);
			memset(&d->elf, 0, sizeof(d->elf));
		} else if (ret == 0) {
			if (d->elf.build_id_len == d->bid_len &&
			    memcmp(d->elf.build_id, d->bid, d->bid_len) == 0) {
				d->state = 1;
				/* The inode found, for reopening it (tr_symbolizer_object). */
				d->dev = st.st_dev;
				d->ino = (uint64_t)st.st_ino;
			} else {
				tr_elf_free(&d->elf);
				memset(&d->elf, 0, sizeof(d->elf));
			}
		}
		close(fd);
	}
	if (d->state)
		return 0;
	if (no_fd)
		return no_fd;
	tried = tried ? tried : tried_path(d, m->path, 1);
	if (tried)
		tried->attempts++;
	else if (++d->attempts >= OPEN_ATTEMPTS)
		d->state = -1; /* out of memory: given up on whatever its path */
	return 0;
}

/* Reads the object once.  0, or -EMFILE/-ENFILE when it could not be for
 * want of descriptors (said once; read at a later call). */
static int dso_load(struct tr_symbolizer *sym, const struct proc *p, const struct mapping *m)
{
	struct dso *d = m->dso;
	int fd, ret, place = 0;

	if (d->state)
		return 0;
	if (d->bid_len) {
		ret = dso_load_by_build_id(sym, p, m);
		if (ret < 0)
			say_out_of_fds(sym, m->path, ret);
		return ret;
	}
	fd = open_mapped(p, m, 0, &place);
	if (out_of_fds(fd)) {
		say_out_of_fds(sym, m->path, fd);
		return fd;
	}
	if (fd < 0) {
		/* Another process mapping the same object may still be readable. */
		if (++d->attempts >= OPEN_ATTEMPTS)
			d->state = -1;
		return 0;
	}
	ret = tr_elf_read(&d->elf, fd, place == AT_HOST_PATH ? 0 : p->pid, m->path, &sym->arena);
	while (ret == -ESRCH) {
		/* Gone before its debug files could be looked for in its root:
		 * the places after (our root's file, if it is that inode, and
		 * its debug file there), else the object's own symbols. */
		int next;

		tr_elf_free(&d->elf);
		memset(&d->elf, 0, sizeof(d->elf));
		next = place + 1 < N_PLACES ? open_mapped(p, m, place + 1, &place) : -ENOENT;
		if (next >= 0) {
			close(fd);
			fd = next;
			ret = tr_elf_read(&d->elf, fd, place == AT_HOST_PATH ? 0 : p->pid, m->path,
					  &sym->arena);
		} else {
			ret = tr_elf_read(&d->elf, fd, p->pid, NULL, &sym->arena);
		}
	}
	/* Not ELF: a .NET image's precompiled code names itself. */
	if (ret == -ENOEXEC)
		ret = tr_r2r_symbols(&d->elf, fd, p->pid, m->path, &sym->arena);
	close(fd);
	if (out_of_fds(ret)) {
		/* A debug file it may have: what was read goes, all of it is
		 * read again. */
		tr_elf_free(&d->elf);
		memset(&d->elf, 0, sizeof(d->elf));
		say_out_of_fds(sym, m->path, ret);
		return ret;
	}
	d->state = ret == 0 ? 1 : -1;
	return 0;
}

/* The vDSO image is the kernel's, the same for every process of one ABI:
 * read it from the process's memory and share it by content. */
static void vdso_load(struct tr_symbolizer *sym, struct proc *p, const struct mapping *m)
{
	char fname[64];
	unsigned char *buf;
	size_t len = (size_t)(m->end - m->start);
	uint64_t h;
	ssize_t got;
	struct dso *d;
	int fd;

	if (p->vdso_tried || len > VDSO_MAX)
		return;
	p->vdso_tried = 1;
	snprintf(fname, sizeof(fname), "/proc/%d/mem", (int)p->pid);
	fd = open(fname, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	buf = malloc(len);
	got = buf ? pread(fd, buf, len, (off_t)m->start) : -1;
	close(fd);
	if (got != (ssize_t)len)
		goto out;
	h = tr_fnv1a(buf, len);
	for (d = sym->vdsos; d; d = d->next)
		if (d->ino == h && d->dev == (dev_t)len)
			break;
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d)
			goto out;
		d->ino = h;
		d->dev = (dev_t)len;
		d->state = tr_elf_read_memory(&d->elf, buf, len, &sym->arena) == 0 ? 1 : -1;
		d->next = sym->vdsos;
		sym->vdsos = d;
	}
	p->vdso = d;
out:
	free(buf);
}

static int on_own_vdso(void *arg, const struct tr_maps_line *l)
{
	struct mapping *m = arg;

	if (strcmp(l->path, "[vdso]") == 0)
		*m = (struct mapping){ .start = l->start, .end = l->end, .kind = MAP_VDSO };
	return 0;
}

/* The image shared by every process of this kernel (and ABI), when none
 * was read from a traced process: one that exits before its vDSO could be
 * read (a short-lived one, looked up a second later by the conversion
 * while collecting) is then named as a conversion made later names it,
 * whatever process it could read by then. */
static struct dso *any_vdso(struct tr_symbolizer *sym)
{
	struct mapping m = { 0 };
	struct proc self = { .pid = getpid() };

	if (sym->vdsos || sym->own_vdso_tried)
		return sym->vdsos;
	sym->own_vdso_tried = 1;
	if (tr_proc_read_maps(self.pid, on_own_vdso, &m) == 0 && m.end > m.start)
		vdso_load(sym, &self, &m);
	return sym->vdsos;
}

/* ---- processes -------------------------------------------------------- */

/* Objects (struct dso) and strings are the symbolizer's, shared: they stay. */
static void proc_free(struct proc *p)
{
	free(p->maps);
	tr_jit_free(&p->jit);
	free(p);
}

static uint64_t proc_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return tr_pid_hash((*(struct proc *const *)slot)->pid);
}

static int proc_is(const void *slot, const void *key)
{
	return (*(struct proc *const *)slot)->pid == *(const pid_t *)key;
}

static const struct tr_probe_ops proc_ops = {
	.size = sizeof(struct proc *),
	.first = 256,
	.used = ptr_used,
	.hash = proc_hash,
};

/* The slot of `pid`, or the free slot where it would go (procs_cap > 0). */
static size_t proc_slot(const struct tr_symbolizer *sym, pid_t pid)
{
	return tr_probe_find(sym->procs, sym->procs_cap, &proc_ops, tr_pid_hash(pid), proc_is,
			     &pid);
}

static struct proc *proc_get(struct tr_symbolizer *sym, pid_t pid)
{
	struct proc **slots, *p;
	char buf[64];

	if (sym->procs_cap && (p = sym->procs[proc_slot(sym, pid)]))
		return p;
	slots = tr_probe_grow(sym->procs, &sym->procs_cap, sym->n_procs + 1, &proc_ops, NULL);
	if (!slots)
		return NULL;
	sym->procs = slots;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->gen = ++sym->gen_seq;
	p->jit.shared = &sym->jit_shared;
	p->jit.pid = pid;
	/* What perf names a process's JIT code (and anonymous code). */
	snprintf(buf, sizeof(buf), "/tmp/perf-%d.map", (int)pid);
	p->jit_dso = tr_interned(&sym->paths, &sym->arena, buf);
	if (!p->jit_dso) {
		free(p);
		return NULL;
	}
	sym->procs[proc_slot(sym, pid)] = p;
	sym->n_procs++;
	return p;
}

struct maps_reader {
	struct tr_symbolizer *sym;
	struct proc *p;
	struct mapping *maps;
	size_t n, cap;
};

static int is_jitdump_name(const char *path)
{
	const char *base = strrchr(path, '/');
	char *end;

	if (!base || strncmp(base + 1, "jit-", 4) != 0)
		return 0;
	strtol(base + 5, &end, 10);
	return end != base + 5 && strcmp(end, ".dump") == 0;
}

static enum map_kind classify(const struct tr_maps_line *l)
{
	const char *path = l->path;

	if (!path[0] || strncmp(path, "[anon:", 6) == 0)
		return MAP_ANON;
	if (strcmp(path, "[vdso]") == 0)
		return MAP_VDSO;
	if (path[0] == '[')
		return MAP_OTHER;
	/* As perf: these are anonymous memory; .NET's W^X double mapping
	 * maps its JIT code from a memfd called "doublemapper". */
	if (strcmp(path, "//anon") == 0 || strncmp(path, "/dev/zero", 9) == 0 ||
	    strncmp(path, "/anon_hugepage", 14) == 0 || strncmp(path, "/memfd:doublemapper", 19) == 0)
		return MAP_ANON;
	return l->inode ? MAP_FILE : MAP_OTHER;
}

static int on_maps_line(void *arg, const struct tr_maps_line *l)
{
	struct maps_reader *r = arg;
	struct mapping *m;

	/* A runtime writing a jitdump maps the file (executable, so that perf
	 * records the mapping): that is how perf finds it, and so do we.  Read
	 * live even beside a plugin's staged copy, which lags behind. */
	if (l->inode && !l->deleted && is_jitdump_name(l->path)) {
		if (!tr_jit_has_live_source(&r->p->jit, TR_JIT_JITDUMP))
			tr_jit_add_source(&r->p->jit, l->path, r->p->pid);
		return 0;
	}
	if (!l->exec)
		return 0;
	m = tr_vec_grow(r->maps, &r->cap, r->n + 1, sizeof(*m), 64);
	if (!m)
		return -ENOMEM;
	r->maps = m;
	m = &r->maps[r->n];
	*m = (struct mapping){ .start = l->start, .end = l->end, .pgoff = l->pgoff,
			       .kind = classify(l), .deleted = l->deleted };
	m->path = tr_interned(&r->sym->paths, &r->sym->arena, l->path);
	if (!m->path)
		return -ENOMEM;
	if (m->kind == MAP_FILE) {
		m->dso = dso_get(r->sym, l->dev, l->inode);
		if (!m->dso)
			return -ENOMEM;
	}
	r->n++;
	return 0;
}

/* Rereads the mappings; on failure the previous snapshot stays. */
static int read_maps(struct tr_symbolizer *sym, struct proc *p)
{
	struct maps_reader r = { .sym = sym, .p = p };
	int ret;

	p->maps_read_ns = tr_now_exact_ns();
	p->maps_read = 1;
	ret = tr_proc_read_maps(p->pid, on_maps_line, &r);
	if (ret == 0 && r.n == 0)
		ret = -ESRCH; /* a zombie or a kernel thread: nothing to resolve */
	p->maps_err = ret < 0 ? ret : 0;
	if (ret < 0) {
		free(r.maps);
		/* Not read: read at the next lookup, not REREAD_NS later. */
		if (out_of_fds(ret))
			p->maps_read = 0;
		if (ret == -ENOENT || ret == -ESRCH) {
			p->gone = 1;
			ret = -ESRCH;
		}
		return ret;
	}
	/* Rereads that find what was there keep the frame names cached. */
	if (r.n != p->n_maps || memcmp(r.maps, p->maps, r.n * sizeof(*r.maps)) != 0)
		bump_gen(sym, p);
	free(p->maps);
	p->maps = r.maps;
	p->n_maps = r.n;
	p->last = 0;
	return 0;
}

static struct mapping *find_map(struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n_maps;

	if (p->last < p->n_maps && addr >= p->maps[p->last].start && addr < p->maps[p->last].end)
		return &p->maps[p->last];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < p->maps[mid].start)
			hi = mid;
		else if (addr >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[p->last = mid];
	}
	return NULL;
}

/* The runtime's own perf map, in the process's /tmp under its namespace PID,
 * read live even when a plugin handed over its staged copy: that copy lags
 * behind the runtime by the plugin's polling, and a conversion made while
 * collecting would name frames against an older map. */
static void jit_auto_sources(struct proc *p)
{
	char path[64];
	pid_t nspid;

	if (p->jit_auto)
		return;
	p->jit_auto = 1;
	if (tr_jit_has_live_source(&p->jit, TR_JIT_PERFMAP) || tr_proc_nspid(p->pid, &nspid) < 0)
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)nspid);
	tr_jit_add_source(&p->jit, path, p->pid);
}

static void jit_read(struct tr_symbolizer *sym, struct proc *p)
{
	size_t n = p->jit.syms.n;

	jit_auto_sources(p);
	p->jit_read = 1;
	p->jit_read_ns = tr_now_exact_ns();
	tr_jit_refresh(&p->jit, &sym->arena);
	/* New code may take an address over (a method recompiled there). */
	if (p->jit.syms.n != n)
		bump_gen(sym, p);
}

/* Whether a miss is worth reading a process's maps or JIT files again,
 * last read at read_ns: REREAD_NS after that read, and, for a sample of
 * known time (sample_ns, the session clock), at once when it was taken
 * after that read.  A runtime logs a method before it runs it and a
 * process maps code before it runs it, so a read begun after the sample
 * can name it, however soon after the read the conversion gets to it;
 * that costs a read per batch of samples newer than the last.  The
 * interval stays for what reaches the file later than the code runs: the
 * runtime writes its perf map through stdio, in blocks (its jitdump it
 * writes at once). */
static int worth_rereading(uint64_t read_ns, uint64_t sample_ns)
{
	return (sample_ns && sample_ns >= read_ns) || tr_now_exact_ns() - read_ns >= REREAD_NS;
}

static struct tr_sym *jit_find(struct tr_symbolizer *sym, struct proc *p, uint64_t addr,
			       uint64_t sample_ns)
{
	struct tr_sym *s;

	if (!p->jit_read)
		jit_read(sym, p);
	s = tr_jit_find(&p->jit, addr);
	/* Runtimes append as they compile: look again, but not on every miss;
	 * a source added since the last look (a jitdump whose mapping the
	 * recording just replayed) is read at once, else the samples after it
	 * are named against what an older source (a staged copy) knew. */
	if (!s && p->jit.n_src && (p->jit.unread || worth_rereading(p->jit_read_ns, sample_ns))) {
		jit_read(sym, p);
		s = tr_jit_find(&p->jit, addr);
	}
	return s;
}

/* ---- lookups ---------------------------------------------------------- */

static const char *display_name(struct tr_symbolizer *sym, struct tr_sym *s)
{
	if (!s->demangled) {
		char *d = tr_demangle(s->name);

		s->demangled = 1;
		if (d) {
			const char *copy = tr_arena_strdup(&sym->arena, d);

			free(d);
			if (copy)
				s->name = copy;
		}
	}
	return s->name;
}

/* Under the lock.  /proc/kallsyms is read once a session: reading it
 * costs the kernel ~50 ms of formatting. */
static int kallsyms_loaded(struct tr_symbolizer *sym)
{
	if (sym->kallsyms_state == 0) {
		int ret = tr_kallsyms_load(&sym->kallsyms, "/proc/kallsyms", &sym->arena);

		sym->kallsyms_state = ret < 0 ? ret : 1;
	}
	return sym->kallsyms_state;
}

int tr_symbolizer_kernel_text(struct tr_symbolizer *sym, uint64_t *text, uint64_t *etext)
{
	int state;

	pthread_mutex_lock(&sym->lock);
	state = kallsyms_loaded(sym);
	*text = state == 1 ? sym->kallsyms.text : 0;
	*etext = state == 1 ? sym->kallsyms.etext : 0;
	pthread_mutex_unlock(&sym->lock);
	if (state < 0)
		return state == -EPERM ? -EACCES : state;
	return *text ? 0 : -ENOENT;
}

static int lookup_kernel(struct tr_symbolizer *sym, uint64_t addr, struct tracerig_symbol *out)
{
	struct tr_sym *s;

	kallsyms_loaded(sym);
	out->dso = "[kernel.kallsyms]";
	out->dso_offset = addr;
	if (sym->kallsyms_state < 0)
		return -ENOENT;
	out->dso = tr_kallsyms_dso(&sym->kallsyms, addr);
	s = tr_symtab_find(&sym->kallsyms.syms, addr);
	if (!s)
		return -ENOENT;
	out->name = display_name(sym, s);
	out->sym_offset = addr - s->start;
	return 0;
}

static int fill(struct tr_symbolizer *sym, struct tr_sym *s, uint64_t at,
		struct tracerig_symbol *out)
{
	if (!s)
		return -ENOENT;
	out->name = display_name(sym, s);
	out->sym_offset = at - s->start;
	return 0;
}

/* The mapping holding addr, reading /proc/PID/maps (again) when the
 * process is not described by a recording. */
static struct mapping *map_of(struct tr_symbolizer *sym, struct proc *p, uint64_t addr,
			      uint64_t sample_ns)
{
	struct mapping *m;

	if (!p->maps_read)
		read_maps(sym, p);
	m = find_map(p, addr);
	if (!m && !p->gone && worth_rereading(p->maps_read_ns, sample_ns)) {
		read_maps(sym, p);
		m = find_map(p, addr);
	}
	return m;
}

static int lookup_user(struct tr_symbolizer *sym, pid_t pid, uint64_t addr, uint64_t sample_ns,
		       struct tracerig_symbol *out)
{
	struct proc *p = proc_get(sym, pid);
	struct mapping *m;
	struct tr_sym *s;

	out->dso = "[unknown]";
	out->dso_offset = addr;
	if (!p)
		return -ENOMEM;
	m = map_of(sym, p, addr, sample_ns);
	if (m) {
		out->dso = m->kind == MAP_ANON ? p->jit_dso : m->path;
		out->dso_offset = addr - m->start + m->pgoff;
	}
	if (m && m->kind == MAP_FILE) {
		dso_load(sym, p, m);
		if (m->dso->state == 1) {
			uint64_t vaddr = tr_elf_vaddr(&m->dso->elf, addr - m->start + m->pgoff);

			if (fill(sym, tr_symtab_find(&m->dso->elf.syms, vaddr), vaddr, out) == 0) {
				/* A ReadyToRun method, named as the runtime's jitdump
				 * names it: placed as that name is, in the process's
				 * perf map, where PerfView and perf script's readers
				 * parse the runtime's "[Module] Type::Method" form. */
				if (m->dso->elf.symbols_from &&
				    strcmp(m->dso->elf.symbols_from, "ReadyToRun") == 0) {
					out->dso = p->jit_dso;
					out->dso_offset = addr;
				}
				return 0;
			}
		}
		/* Code generated into a file mapping (memfd) may still be JIT code. */
		if (!p->jit.n_src || !(s = jit_find(sym, p, addr, sample_ns)))
			return -ENOENT;
	} else if (m && m->kind == MAP_VDSO) {
		struct dso *v;

		vdso_load(sym, p, m);
		/* A process gone before its vDSO was read shares the image of
		 * every other process of this kernel. */
		v = p->vdso ? p->vdso : any_vdso(sym);
		if (!v || v->state != 1)
			return -ENOENT;
		return fill(sym, tr_symtab_find(&v->elf.syms, addr - m->start), addr - m->start, out);
	} else if (m && m->kind == MAP_OTHER) {
		return -ENOENT;
	} else {
		/* Anonymous code, or an address in no mapping we know (the
		 * process is gone): JIT symbols. */
		s = jit_find(sym, p, addr, sample_ns);
		if (!s)
			return -ENOENT;
	}
	out->dso = p->jit_dso;
	out->dso_offset = addr; /* perf maps are identity maps in perf */
	return fill(sym, s, addr, out);
}

/* Under the lock. */
static int lookup(struct tr_symbolizer *sym, pid_t pid, uint64_t addr, int kernel,
		  uint64_t sample_ns, struct tracerig_symbol *out)
{
	int ret;

	out->name = NULL;
	out->sym_offset = 0;
	ret = kernel ? lookup_kernel(sym, addr, out) : lookup_user(sym, pid, addr, sample_ns, out);
	if (ret < 0) {
		out->name = NULL;
		out->sym_offset = 0;
	}
	return ret;
}

int tr_symbolizer_lookup(struct tr_symbolizer *sym, pid_t pid, uint64_t addr, int kernel,
			 struct tracerig_symbol *out)
{
	int ret;

	pthread_mutex_lock(&sym->lock);
	ret = lookup(sym, pid, addr, kernel, 0, out);
	pthread_mutex_unlock(&sym->lock);
	return ret;
}

/* Served when memory runs out. */
static const struct tr_frame no_memory = {
	.name = "[unknown]", .sym = { NULL, "[unknown]", 0, 0 }, .ret = -ENOMEM,
};

/* Whether looking `addr` up again, with the mappings as they are, could
 * name it: only when something the lookup reads may still change.  A
 * process described by a recording (or gone) is never reread; with no JIT
 * source there is no perf map to grow; an object that failed to open for
 * good stays unread.  New mappings or JIT symbols move the generation, so
 * a frame kept as final is never served under them. */
static int may_gain_a_name(struct proc *p, uint64_t addr)
{
	const struct mapping *m;

	if (!p->gone || p->jit.n_src)
		return 1;
	m = find_map(p, addr);
	if (!m)
		return 0;
	if (m->kind == MAP_FILE)
		return m->dso->state == 0; /* attempts left */
	return m->kind == MAP_VDSO; /* another process may yet read the image */
}

/* Whether a frame nothing named (yet) is worth looking up again: when
 * something the lookup reads may have changed since.  REREAD_NS after the
 * last lookup, and at once for a sample taken after it (see
 * worth_rereading).  A source added since (a staged copy of a map) is
 * read at once; a frame nothing can name any more is kept as it is
 * (retry_ns UINT64_MAX). */
static int worth_looking_again(const struct tr_frame *f, const struct proc *p, uint64_t sample_ns)
{
	if (f->ret == 0 || !p || f->retry_ns == UINT64_MAX)
		return 0;
	if (p->jit.unread)
		return 1;
	return (sample_ns && sample_ns >= f->looked_ns) || tr_now_exact_ns() >= f->retry_ns;
}

static void note_unnamed(struct tr_frame *f, struct proc *p, uint64_t addr, uint64_t looked_ns)
{
	f->looked_ns = looked_ns;
	f->retry_ns = may_gain_a_name(p, addr) ? looked_ns + REREAD_NS : UINT64_MAX;
}

/* Under the lock. */
static const struct tr_frame *frame_of(struct tr_symbolizer *sym, pid_t pid, uint64_t addr,
				       int kernel, uint64_t sample_ns)
{
	struct proc *p = kernel ? NULL : proc_get(sym, pid);
	struct tracerig_symbol found;
	struct tr_frame *f;
	uint64_t looked_ns;
	uint32_t gen;
	int ret;

	if (!kernel && !p)
		return &no_memory;
	f = tr_frames_find(&sym->frames, pid, kernel ? 0 : p->gen, addr, kernel);
	if (f && !worth_looking_again(f, p, sample_ns))
		return f;
	gen = kernel ? 0 : p->gen;
	looked_ns = tr_now_exact_ns();
	ret = lookup(sym, pid, addr, kernel, sample_ns, &found);
	if (ret == -ENOMEM)
		return &no_memory;
	/* Looked up again and still nothing, with the mappings as they were:
	 * the same entry, its strings and all (callers that keep texts made
	 * of them know it by its name), looked up again later. */
	if (f && ret < 0 && p->gen == gen && !found.name && found.dso == f->sym.dso &&
	    found.dso_offset == f->sym.dso_offset) {
		note_unnamed(f, p, addr, looked_ns);
		return f;
	}
	/* The lookup may have reread the mappings: what it found holds for
	 * the generation they now have. */
	f = tr_frames_add(&sym->frames, &sym->arena, pid, kernel ? 0 : p->gen, addr, kernel,
			  &found, ret < 0 ? -ENOENT : 0, kernel ? NULL : &p->frames);
	if (!f)
		return &no_memory;
	if (ret < 0 && !kernel)
		note_unnamed(f, p, addr, looked_ns);
	return f;
}

int tr_symbolizer_frame_name_at(struct tr_symbolizer *sym, pid_t pid, uint64_t addr, int kernel,
				uint64_t sample_ns, const char **name, struct tracerig_symbol *out)
{
	const struct tr_frame *f;

	pthread_mutex_lock(&sym->lock);
	f = frame_of(sym, pid, addr, kernel, sample_ns);
	pthread_mutex_unlock(&sym->lock);
	*name = f->name;
	if (out)
		*out = f->sym;
	return f->ret < 0 && f->retry_ns == UINT64_MAX ? -ENODATA : f->ret;
}

int tr_symbolizer_frame_name(struct tr_symbolizer *sym, pid_t pid, uint64_t addr, int kernel,
			     const char **name, struct tracerig_symbol *out)
{
	return tr_symbolizer_frame_name_at(sym, pid, addr, kernel, 0, name, out);
}

int tr_symbolizer_frame_generation(struct tr_symbolizer *sym, pid_t pid, uint32_t *gen)
{
	struct proc *p;

	pthread_mutex_lock(&sym->lock);
	p = proc_get(sym, pid);
	if (p)
		*gen = p->gen;
	pthread_mutex_unlock(&sym->lock);
	return p ? 0 : -ENOMEM;
}

int tr_symbolizer_object(struct tr_symbolizer *sym, pid_t pid, uint64_t addr,
			 struct tracerig_object *out)
{
	struct proc *p;
	struct mapping *m;
	int ret = -ENOENT, fd = -1;
	pid_t root_pid = pid; /* 0: the file was read from our own root */

	pthread_mutex_lock(&sym->lock);
	p = proc_get(sym, pid);
	m = p ? map_of(sym, p, addr, 0) : NULL;
	if (m && m->kind == MAP_FILE) {
		/* Read once, so the object's identity (inode) is known. */
		int loaded = dso_load(sym, p, m), place = AT_ROOT_PATH;

		if (m->dso->state == 1 && m->dso->ino)
			fd = open_mapped(p, m, 0, &place);
		if (place == AT_HOST_PATH)
			root_pid = 0;
		/* Out of descriptors: the caller may close some and ask again. */
		if (fd >= 0)
			ret = 0;
		else if (out_of_fds(fd) || out_of_fds(loaded))
			ret = out_of_fds(fd) ? fd : loaded;
	} else if (m && m->kind == MAP_VDSO) {
		ret = 0; /* the kernel's image: no file, fd -1 */
	} else if (!m && p && out_of_fds(p->maps_err)) {
		ret = p->maps_err;
	}
	if (ret == 0)
		*out = (struct tracerig_object){ .fd = fd,
						 .start = m->start,
						 .end = m->end,
						 .pgoff = m->pgoff,
						 .path = m->path,
						 .root_pid = root_pid };
	pthread_mutex_unlock(&sym->lock);
	return ret;
}

/* At most TR_BUILDID_PERF_MAX bytes of it, as perf keeps. */
static void set_build_id(struct tracerig_frame_mapping *out, const unsigned char *id, size_t len)
{
	if (len > TR_BUILDID_PERF_MAX)
		len = TR_BUILDID_PERF_MAX;
	tr_buildid_hex(id, len, out->build_id);
}

/* Under the lock.  One mapping for every kernel address, modules
 * included, from the lowest symbol on: what perf's "[kernel.kallsyms]" is. */
static void kernel_mapping(struct tr_symbolizer *sym, struct tracerig_frame_mapping *out)
{
	if (!sym->kernel_bid_read) {
		size_t len = 0;

		if (tr_buildid_read_kernel(sym->kernel_bid, sizeof(sym->kernel_bid), &len) == 0)
			sym->kernel_bid_len = len;
		sym->kernel_bid_read = 1;
	}
	kallsyms_loaded(sym);
	*out = (struct tracerig_frame_mapping){ .limit = UINT64_MAX, .path = "[kernel.kallsyms]" };
	if (sym->kallsyms_state == 1 && sym->kallsyms.syms.n && sym->kallsyms.syms.sorted)
		out->start = sym->kallsyms.syms.syms[0].start;
	set_build_id(out, sym->kernel_bid, sym->kernel_bid_len);
}

int tr_symbolizer_mapping(struct tr_symbolizer *sym, pid_t pid, uint64_t addr, int kernel,
			  struct tracerig_frame_mapping *out)
{
	struct proc *p;
	struct mapping *m;
	int ret = -ENOENT;

	pthread_mutex_lock(&sym->lock);
	if (kernel) {
		kernel_mapping(sym, out);
		ret = 0;
		goto out;
	}
	p = proc_get(sym, pid);
	m = p ? map_of(sym, p, addr, 0) : NULL;
	if (!m)
		goto out;
	*out = (struct tracerig_frame_mapping){ .start = m->start, .limit = m->end,
						.pgoff = m->pgoff, .path = m->path };
	if (m->kind == MAP_ANON) {
		out->path = p->jit_dso;
	} else if (m->kind == MAP_VDSO) {
		const struct dso *v;

		vdso_load(sym, p, m);
		v = p->vdso ? p->vdso : any_vdso(sym); /* as lookup_user shares it */
		if (v && v->state == 1)
			set_build_id(out, v->elf.build_id, v->elf.build_id_len);
	} else if (m->kind == MAP_FILE) {
		const struct dso *d = m->dso;

		dso_load(sym, p, m);
		/* The recording's id, else the one read from the object. */
		if (d->bid_len)
			set_build_id(out, d->bid, d->bid_len);
		else if (d->state == 1)
			set_build_id(out, d->elf.build_id, d->elf.build_id_len);
	}
	ret = 0;
out:
	pthread_mutex_unlock(&sym->lock);
	return ret;
}

int tr_symbolizer_remember(struct tr_symbolizer *sym, pid_t pid)
{
	struct proc *p;
	int ret = 0;

	pthread_mutex_lock(&sym->lock);
	p = proc_get(sym, pid);
	if (!p) {
		ret = -ENOMEM;
		goto out;
	}
	/* A recorded process's mappings are the recording's: only read its
	 * objects while it is alive. */
	ret = p->recorded ? 0 : read_maps(sym, p);
	if (ret < 0 && p->n_maps)
		ret = 0; /* gone, but an earlier snapshot stays */
	if (ret < 0)
		goto out;
	/* Everything that needs the live process: objects through its root,
	 * the vDSO from its memory, its perf map. */
	for (size_t i = 0; i < p->n_maps; i++) {
		if (p->maps[i].kind == MAP_FILE)
			dso_load(sym, p, &p->maps[i]);
		else if (p->maps[i].kind == MAP_VDSO)
			vdso_load(sym, p, &p->maps[i]);
	}
	jit_read(sym, p);
out:
	pthread_mutex_unlock(&sym->lock);
	return ret;
}

int tr_symbolizer_add_jit_file(struct tr_symbolizer *sym, pid_t pid, const char *path)
{
	struct proc *p;
	char *real;
	int ret;

	if (!path || path[0] != '/')
		return -EINVAL;
	/* The caller's own copy (mapharvest's staged file): its directory may
	 * be reached through a link, which the no-link open refuses. */
	real = realpath(path, NULL);
	if (!real)
		return -errno;
	pthread_mutex_lock(&sym->lock);
	p = proc_get(sym, pid);
	ret = p ? tr_jit_add_source(&p->jit, real, 0) : -ENOMEM;
	free(real);
	if (ret == 0)
		jit_read(sym, p); /* now: the file may be a staged copy that moves on */
	pthread_mutex_unlock(&sym->lock);
	return ret;
}

/* ---- the process model fed by a recording ----------------------------- */

/* An object already read under its device and inode whose build id is
 * this one, else the build-id-keyed object (made on first sight). */
static struct dso *dso_by_build_id(struct tr_symbolizer *sym, const unsigned char *bid,
				   size_t len)
{
	struct dso *d;

	if (len > sizeof(d->bid))
		len = sizeof(d->bid);
	for (d = sym->bid_dsos; d; d = d->next)
		if (d->bid_len == len && memcmp(d->bid, bid, len) == 0)
			return d;
	for (size_t i = 0; i < sym->dsos_cap; i++) {
		d = sym->dsos[i];
		if (d && d->state == 1 && d->elf.build_id_len == len &&
		    memcmp(d->elf.build_id, bid, len) == 0)
			return d;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	memcpy(d->bid, bid, len);
	d->bid_len = len;
	d->next = sym->bid_dsos;
	sym->bid_dsos = d;
	return d;
}

/* From its first recorded event on, a process is what the recording says,
 * on top of what /proc said while it was alive: a process older than the
 * recording may be described only by its later records (a library it
 * loaded late), and they replace whatever they overlap. */
static void begin_recorded(struct proc *p)
{
	if (p->recorded)
		return;
	p->recorded = 1;
	p->maps_read = 1;
	p->gone = 1; /* never reread /proc/PID/maps */
	p->last = 0;
}

static int reserve_maps(struct proc *p, size_t more)
{
	struct mapping *grown;

	grown = realloc(p->maps, (p->n_maps + more) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	p->maps = grown;
	return 0;
}

/* Puts `m` in, as the kernel does: whatever it overlaps is unmapped first
 * (cut, or split in two), and the list stays sorted by address. */
static int insert_mapping(struct tr_symbolizer *sym, struct proc *p, const struct mapping *m)
{
	size_t i, at;

	if (reserve_maps(p, 2) < 0)
		return -ENOMEM;
	for (i = 0; i < p->n_maps;) {
		struct mapping *o = &p->maps[i];

		if (o->end <= m->start || o->start >= m->end) {
			i++;
			continue;
		}
		if (o->start < m->start && o->end > m->end) {
			/* m lands inside o: o's tail becomes a mapping of its own. */
			struct mapping tail = *o;

			tail.pgoff += m->end - o->start;
			tail.start = m->end;
			o->end = m->start;
			memmove(&p->maps[i + 2], &p->maps[i + 1], (p->n_maps - i - 1) * sizeof(*o));
			p->maps[i + 1] = tail;
			p->n_maps++;
			break;
		}
		if (o->start < m->start) {
			o->end = m->start;
			i++;
		} else if (o->end > m->end) {
			o->pgoff += m->end - o->start;
			o->start = m->end;
			i++;
		} else {
			memmove(o, o + 1, (p->n_maps - i - 1) * sizeof(*o));
			p->n_maps--;
		}
	}
	for (at = 0; at < p->n_maps && p->maps[at].start < m->start; at++)
		;
	memmove(&p->maps[at + 1], &p->maps[at], (p->n_maps - at) * sizeof(*m));
	p->maps[at] = *m;
	p->n_maps++;
	p->last = 0;
	bump_gen(sym, p);
	return 0;
}

/* A runtime's jitdump read from its root while it runs, so that a
 * conversion made while collecting names what only the jitdump names
 * (.NET's ReadyToRun code): `path` as the process sees it, or (NULL) its
 * /tmp/jit-NSPID.dump. */
static void jitdump_live_source(struct proc *p, const char *path)
{
	char buf[64];
	pid_t nspid;

	if (tr_jit_has_live_source(&p->jit, TR_JIT_JITDUMP))
		return;
	if (!path) {
		if (tr_proc_nspid(p->pid, &nspid) < 0)
			return;
		snprintf(buf, sizeof(buf), "/tmp/jit-%d.dump", (int)nspid);
		path = buf;
	}
	(void)tr_jit_add_source(&p->jit, path, p->pid);
}

/* A recorded mapping as a line of /proc/PID/maps would say it, its path
 * (" (deleted)" taken off) copied into path[size]. */
static void maps_line_of(const struct tracerig_mapping *rm, char *path, size_t size,
			 struct tr_maps_line *l)
{
	size_t len;

	*l = (struct tr_maps_line){
		.start = rm->start, .end = rm->start + rm->len, .pgoff = rm->pgoff, .exec = 1
	};
	snprintf(path, size, "%s", rm->path);
	len = strlen(path);
	if (len > 10 && strcmp(path + len - 10, " (deleted)") == 0) {
		path[len - 10] = '\0';
		l->deleted = 1;
	}
	l->path = path;
	l->dev = (dev_t)rm->dev;
	/* With a build id the record has no inode: any non-zero one says "a file". */
	l->inode = rm->build_id_len ? 1 : rm->ino;
}

/* A runtime's jitdump (renamed ./jit-PID.dump in perf.data): its symbols
 * come through the JIT sources, not as an object.  Read from the
 * process's root while it runs, so that a conversion made while
 * collecting names what only the jitdump names (.NET's ReadyToRun code)
 * before the harvested copy arrives at the end.  1 when the mapping is
 * no object to keep (a jitdump, a pseudo-path other than //anon). */
static int jitdump_or_pseudo(struct proc *p, const char *path, int deleted)
{
	if (path[0] != '/' && path[0] != '[') {
		/* perf_events' perf.data names a jitdump ./jit-HOSTPID.dump:
		 * where the runtime writes it is its /tmp, unless told
		 * otherwise (a staged copy then still comes from mapharvest). */
		if (strncmp(path, "./", 2) == 0 && is_jitdump_name(path + 1))
			jitdump_live_source(p, NULL);
		return strcmp(path, "//anon") != 0;
	}
	if (is_jitdump_name(path)) {
		if (!deleted)
			jitdump_live_source(p, path);
		return 1;
	}
	return 0;
}

int tr_symbolizer_record_mmap(struct tr_symbolizer *sym, const struct tracerig_mapping *rm)
{
	struct tr_maps_line l;
	char path[4096];
	struct mapping m;
	struct proc *p;
	int ret = 0;

	if (!rm->path || rm->len == 0 || rm->start + rm->len < rm->start)
		return -EINVAL;
	maps_line_of(rm, path, sizeof(path), &l);
	pthread_mutex_lock(&sym->lock);
	p = proc_get(sym, rm->pid);
	if (!p) {
		ret = -ENOMEM;
		goto out;
	}
	begin_recorded(p);
	if (jitdump_or_pseudo(p, path, l.deleted))
		goto out;
	m = (struct mapping){ .start = l.start, .end = l.end, .pgoff = l.pgoff,
			      .kind = classify(&l), .deleted = l.deleted };
	m.path = tr_interned(&sym->paths, &sym->arena, path);
	if (!m.path) {
		ret = -ENOMEM;
		goto out;
	}
	if (m.kind == MAP_FILE) {
		m.dso = rm->build_id_len ? dso_by_build_id(sym, rm->build_id, rm->build_id_len)
					 : dso_get(sym, l.dev, l.inode);
		if (!m.dso) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = insert_mapping(sym, p, &m);
out:
	pthread_mutex_unlock(&sym->lock);
	return ret;
}

int tr_symbolizer_record_exec(struct tr_symbolizer *sym, pid_t pid)
{
	struct proc *p;

	pthread_mutex_lock(&sym->lock);
	p = proc_get(sym, pid);
	/* As perf: the old image's mappings stay until the new one's replace
	 * them, so a sample taken inside execve() still names the caller. */
	if (p) {
		begin_recorded(p);
		bump_gen(sym, p);
	}
	pthread_mutex_unlock(&sym->lock);
	return p ? 0 : -ENOMEM;
}

int tr_symbolizer_record_fork(struct tr_symbolizer *sym, pid_t parent, pid_t child)
{
	struct proc *pp, *c;
	int ret = 0;

	pthread_mutex_lock(&sym->lock);
	pp = proc_get(sym, parent);
	c = pp ? proc_get(sym, child) : NULL;
	if (!c) {
		ret = -ENOMEM;
		goto out;
	}
	/* A parent the recording has not described yet: what /proc says. */
	if (!pp->maps_read)
		read_maps(sym, pp);
	begin_recorded(c);
	c->n_maps = 0;
	if (pp->n_maps) {
		if (reserve_maps(c, pp->n_maps) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		memcpy(c->maps, pp->maps, pp->n_maps * sizeof(*c->maps));
		c->n_maps = pp->n_maps;
	}
	if (!c->vdso)
		c->vdso = pp->vdso;
	bump_gen(sym, c);
out:
	pthread_mutex_unlock(&sym->lock);
	return ret;
}

int tr_symbolizer_forget(struct tr_symbolizer *sym, pid_t pid)
{
	struct proc *p = NULL;
	size_t i = 0;

	pthread_mutex_lock(&sym->lock);
	if (sym->procs_cap) {
		i = proc_slot(sym, pid);
		p = sym->procs[i];
	}
	if (p) {
		/* No tombstone: the processes after it move back (lib/probe.h). */
		tr_probe_delete(sym->procs, sym->procs_cap, i, &proc_ops, NULL);
		sym->n_procs--;
		tr_frames_drop(&sym->frames, p->frames);
		proc_free(p);
	}
	pthread_mutex_unlock(&sym->lock);
	return p ? 0 : -ENOENT;
}

size_t tr_symbolizer_processes(struct tr_symbolizer *sym, size_t *frames)
{
	size_t n;

	pthread_mutex_lock(&sym->lock);
	n = sym->n_procs;
	if (frames)
		*frames = sym->frames.n;
	pthread_mutex_unlock(&sym->lock);
	return n;
}

struct tr_symbolizer *tr_symbolizer_new(void)
{
	struct tr_symbolizer *sym = calloc(1, sizeof(*sym));

	if (!sym)
		return NULL;
	if (pthread_mutex_init(&sym->lock, NULL) != 0) {
		free(sym);
		return NULL;
	}
	sym->jit_shared.max = TR_JIT_MAX_TOTAL;
	return sym;
}

static void dso_free(struct dso *d)
{
	tr_elf_free(&d->elf);
	free(d->tried);
	free(d);
}

static void dso_list_free(struct dso *d)
{
	while (d) {
		struct dso *next = d->next;

		dso_free(d);
		d = next;
	}
}

void tr_symbolizer_free(struct tr_symbolizer *sym)
{
	if (!sym)
		return;
	for (size_t i = 0; i < sym->procs_cap; i++)
		if (sym->procs[i])
			proc_free(sym->procs[i]);
	free(sym->procs);
	for (size_t i = 0; i < sym->dsos_cap; i++)
		if (sym->dsos[i])
			dso_free(sym->dsos[i]);
	free(sym->dsos);
	dso_list_free(sym->vdsos);
	dso_list_free(sym->bid_dsos);
	tr_jit_shared_free(&sym->jit_shared);
	tr_kallsyms_free(&sym->kallsyms);
	tr_frames_free(&sym->frames);
	tr_interned_free(&sym->paths);
	tr_arena_free(&sym->arena);
	pthread_mutex_destroy(&sym->lock);
	free(sym);
}

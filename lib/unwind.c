/* Unwinding copied user stacks with libdwfl.
 *
 * Speed: one Dwfl per process, kept across its samples (up to MAX_PROCS
 * processes, the least recently unwound one goes first).  Its modules
 * are reported as the unwinder reaches them, from the object files the
 * core's process model names (symbolizer_object), so each object's ELF
 * and CFI is read once per process, not once per sample as perf script
 * does.
 *
 * Every process's unwinding state is attached for x86_64 from the start
 * (not from whichever module came first), so a sample's frames depend on
 * nothing but the sample and the objects at the addresses looked up:
 * what uw_adopt checks.
 *
 * Descriptors: a module libdwfl reads keeps its object's file open for as
 * long as it lives, and a process with 3,000 libraries would need 3,000 of
 * them, taken from what the flush needs to write the views.  So an
 * unwinder keeps a bounded number of objects open (open_bound), closing
 * the least recently needed first (never one the current sample needs),
 * and reports an object again, opened the same way, when a sample needs
 * it after that.  An open that finds no descriptor left closes all it
 * can and tries once more; after that the stacks through that object are
 * cut where it starts, counted, and said once. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/unwind.h"
#include "lib/untrusted.h"
#include "lib/vec.h"

#if UW_AVAILABLE

#include <elfutils/libdwfl.h>
#include <gelf.h>

#define MAX_PROCS 64
/* Private copies of objects their users can write (private_copy): how
 * many are kept, and the largest made. */
#define COPIES 64
#define UW_COPY_MAX (512ull << 20)
#define MAX_USER_FRAMES UW_MAX_FRAMES
#define N_DWARF_REGS UW_N_REGS
/* Addresses a sample's unwinding may depend on before it is not adopted
 * elsewhere: every frame's, and a few reads outside the stack copy. */
#define MAX_LOOKUPS (MAX_USER_FRAMES + 32)
/* Descriptors one unwinder keeps open (objects and private copies): this
 * share of the open-files limit.  A session runs up to four unwinders at
 * once (perf_events' while collecting, its conversion's and its flush's,
 * ebpf's), so together they leave half of the limit to everything else:
 * perf events (one per CPU and event), BPF objects, staged entries, the
 * archive.  At least OPEN_MIN, so that a small limit does not close the
 * few objects most stacks cross at every sample; at most OPEN_MAX, where
 * what the modules map, not the descriptors, becomes the cost. */
#define OPEN_SHARE 8
#define OPEN_MIN 8
#define OPEN_MAX 4096

struct uw_object {
	uint64_t bias, low, high;
	unsigned char bid[20];
	size_t bid_len;
};

/* Locked: perf_events' unwinder of the samples as they come and the one
 * converting them while collecting number objects at the same time. */
struct uw_objects {
	pthread_mutex_t lock;
	struct uw_object *v;
	size_t n, cap;
};

/* Addresses where the process model had no object file (JIT code, the
 * end of a stack): asked again after a new mapping, or once ABSENT_NS
 * have passed.  The model of a live process rereads /proc/PID/maps on a
 * miss at most that often, so a library mapped just after the last read
 * (ld.so loading libc right after an exec) is found by the next try
 * instead of being absent for the rest of the session.  Empty slots hold
 * UINT64_MAX. */
#define ABSENT_SLOTS 64
#define ABSENT_NS (50 * 1000000ull)

struct uw_absent {
	uint64_t pc;
	uint64_t at_ns; /* when the model said it had no object there */
};

/* The session's clock (CLOCK_MONOTONIC), read here so that the unwinder
 * needs no service for it. */
static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct uw_proc {
	struct unwinder *owner; /* for the debug-file callback (gone_to_our_root) */
	pid_t pid;
	Dwfl *dwfl; /* NULL: slot free */
	int attached;
	int closing; /* some of its modules are to be closed (close_objects) */
	uint64_t last_use;
	struct uw_absent absent[ABSENT_SLOTS]; /* direct-mapped by address */
};

/* One module reported to a process's Dwfl: its object's file is open for
 * as long as the module lives.  The module's userdata; on the unwinder's
 * list, the most recently needed first. */
struct uw_mod {
	struct uw_mod *newer, *older;
	struct uw_proc *proc;
	uint64_t used;   /* the sample (unwinder's `sample`) that last needed it */
	uint64_t start;  /* the mapping it was reported for */
	uint32_t object; /* object_of's number, 0 until known */
	pid_t debug_root; /* whose root its debug file is in (tracerig_object) */
	int closing;
};

struct unwinder {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	struct uw_objects *objects;
	int own_objects;
	/* The architecture every process's state is attached for; libdwfl
	 * keeps it for the Dwfl's life. */
	Elf64_Ehdr arch_image;
	Elf *arch;
	struct uw_proc procs[MAX_PROCS];
	uint64_t clock;
	struct uw_stats stats;
	/* The modules of every process, each holding a descriptor: at most
	 * max_mods of them beyond the current sample's. */
	struct uw_mod *newest, *oldest;
	size_t n_mods, max_mods;
	uint64_t sample; /* bumped by every uw_unwind and uw_adopt */
	/* Our own vDSO image, the kernel's, in a file libdwfl can read. */
	int vdso_fd, vdso_tried;
	uint64_t vdso_len;
	/* Private copies of objects their processes' users can write
	 * (private_copy), by file identity, shared by the processes. */
	struct uw_copy {
		dev_t dev;
		ino_t ino;
		off_t size;
		struct timespec mtime;
		int fd;
	} copies[COPIES];
	size_t n_copies, next_copy, max_copies;

	/* The sample being unwound, read by the callbacks. */
	struct uw_proc *cur;
	Dwarf_Word dwarf_regs[N_DWARF_REGS];
	const unsigned char *stack;
	uint64_t stack_size, sp;
	int stack_end_hit;
	int unmapped_hit; /* the last frame so far is in no known object */
	uint64_t ips[MAX_USER_FRAMES];
	size_t n_ips;
	struct uw_lookup lookups[MAX_LOOKUPS];
	size_t n_lookups;
	int checkable;
};

static int gone_to_our_root(const struct uw_mod *m);

/* A separate debug file (.debug_frame of code without .eh_frame) by build
 * id only, in our own /usr/lib/debug, opened as every file a traced
 * process may have a say in: no path it chose, no link followed, and no
 * debuginfod download in the middle of a flush. */
static int find_debug_file(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct uw_mod *m = userdata ? *userdata : NULL;
	const unsigned char *bid;
	struct tr_untrusted why;
	GElf_Addr bid_vaddr;
	char path[256];
	int len = dwfl_module_build_id(mod, &bid, &bid_vaddr), n, fd;

	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	/* Looked for in the object's own root only: a container's object never
	 * gets the host's debug file, whatever build id it claims.  Whose
	 * object it is is known once the module is reported (the CFI is asked
	 * for after that); a process gone by then has the root the symbolizer
	 * found its file in, ours only for our own file at that path, and
	 * one gone since is asked about again. */
	if (len < 2 || len > 64 || !m)
		return -1;
	n = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", bid[0]);
	for (int i = 1; i < len; i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", bid[i]);
	snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
	fd = tr_untrusted_open(m->debug_root, path, TR_OBJECT_MAX, &why);
	if (fd == -ESRCH && m->debug_root > 0 && gone_to_our_root(m))
		fd = tr_untrusted_open(0, path, TR_OBJECT_MAX, &why);
	if (fd < 0)
		return -1;
	*debuginfo_file_name = strdup(path);
	return fd;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_debuginfo = find_debug_file,
};

/* Whether the process, gone since its object was opened (the unwinder
 * may run well behind the samples), has that object in our root now, as
 * the symbolizer finds it: our own file at that path, the same inode. */
static int gone_to_our_root(const struct uw_mod *m)
{
	struct unwinder *u = m->proc->owner;
	struct tracerig_object obj;

	if (tracerig_internal(u->svc)->symbolizer_object(u->ctx, m->proc->pid, m->start, &obj) != 0)
		return 0;
	if (obj.fd >= 0)
		close(obj.fd);
	return obj.root_pid == 0;
}

/* ---- objects ---- */

struct uw_objects *uw_objects_new(void)
{
	struct uw_objects *o = calloc(1, sizeof(*o));

	if (o)
		pthread_mutex_init(&o->lock, NULL);
	return o;
}

void uw_objects_free(struct uw_objects *o)
{
	if (!o)
		return;
	pthread_mutex_destroy(&o->lock);
	free(o->v);
	free(o);
}

/* The number of a module's object (0: no module), kept in the module's
 * userdata once known. */
static uint32_t object_of(struct unwinder *u, Dwfl_Module *mod)
{
	struct uw_objects *o = u->objects;
	struct uw_object obj = { 0 }, *grown;
	const unsigned char *bid;
	GElf_Addr bid_vaddr;
	Dwarf_Addr low, high, bias;
	struct uw_mod *m;
	void **userdata;
	size_t n;
	int len;

	if (!mod)
		return 0;
	dwfl_module_info(mod, &userdata, &low, &high, NULL, NULL, NULL, NULL);
	m = *userdata;
	if (m && m->object)
		return m->object;
	len = dwfl_module_build_id(mod, &bid, &bid_vaddr);
	if (len <= 0 || len > (int)sizeof(obj.bid) || !dwfl_module_getelf(mod, &bias))
		return UW_OBJECT_UNCHECKABLE;
	obj.bias = bias;
	obj.low = low;
	obj.high = high;
	obj.bid_len = (size_t)len;
	memcpy(obj.bid, bid, (size_t)len);
	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < o->n; i++) {
		const struct uw_object *k = &o->v[i];

		if (k->bias == obj.bias && k->low == obj.low && k->high == obj.high &&
		    k->bid_len == obj.bid_len && memcmp(k->bid, obj.bid, obj.bid_len) == 0) {
			pthread_mutex_unlock(&o->lock);
			if (m)
				m->object = (uint32_t)(i + 1);
			return (uint32_t)(i + 1);
		}
	}
	grown = tr_vec_grow(o->v, &o->cap, o->n + 1, sizeof(*grown), 64);
	if (!grown) {
		pthread_mutex_unlock(&o->lock);
		return UW_OBJECT_UNCHECKABLE;
	}
	o->v = grown;
	o->v[o->n++] = obj;
	n = o->n;
	pthread_mutex_unlock(&o->lock);
	if (m)
		m->object = (uint32_t)n;
	return (uint32_t)n;
}

/* ---- open objects (see "Descriptors" above) ---- */

/* How many descriptors an unwinder keeps (OPEN_SHARE), from the limit as
 * it is now: the core has raised it to the hard one by then. */
static size_t open_bound(void)
{
	rlim_t n = (rlim_t)OPEN_MAX * OPEN_SHARE;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur;
	n /= OPEN_SHARE;
	if (n < OPEN_MIN)
		return OPEN_MIN;
	return n > OPEN_MAX ? OPEN_MAX : (size_t)n;
}

static int out_of_fds(int err)
{
	return err == -EMFILE || err == -ENFILE;
}

static struct uw_mod *mod_of(Dwfl_Module *mod)
{
	void **userdata;

	if (!mod)
		return NULL;
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	return *userdata;
}

static void mod_unlink(struct unwinder *u, struct uw_mod *m)
{
	if (m->newer)
		m->newer->older = m->older;
	else
		u->newest = m->older;
	if (m->older)
		m->older->newer = m->newer;
	else
		u->oldest = m->newer;
	m->newer = m->older = NULL;
}

static void mod_push(struct unwinder *u, struct uw_mod *m)
{
	m->newer = NULL;
	m->older = u->newest;
	if (u->newest)
		u->newest->newer = m;
	else
		u->oldest = m;
	u->newest = m;
}

/* The current sample needs this module: it stays open until the sample
 * is done, so that what the sample read of it is there for all its
 * frames.  The list stays in the order of `used`. */
static void needed(struct unwinder *u, Dwfl_Module *mod)
{
	struct uw_mod *m = mod_of(mod);

	if (!m || m->used == u->sample)
		return;
	m->used = u->sample;
	mod_unlink(u, m);
	mod_push(u, m);
}

static void forget(struct unwinder *u, void **userdata)
{
	struct uw_mod *m = *userdata;

	if (!m)
		return;
	mod_unlink(u, m);
	free(m);
	u->n_mods--;
	*userdata = NULL;
}

/* dwfl_getmodules' callback before dwfl_end frees them all. */
static int forget_each(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		       void *arg)
{
	(void)mod;
	(void)name;
	(void)start;
	forget(arg, userdata);
	return DWARF_CB_OK;
}

/* dwfl_report_end's callback for a module it frees. */
static int forget_removed(Dwfl_Module *mod, void *userdata, const char *name, Dwarf_Addr start,
			  void *arg)
{
	void **data;

	(void)userdata;
	(void)name;
	(void)start;
	dwfl_module_info(mod, &data, NULL, NULL, NULL, NULL, NULL, NULL);
	forget(arg, data);
	return DWARF_CB_OK;
}

struct kept_mods {
	struct kept_mod {
		const char *name; /* the module's own: it lives on */
		Dwarf_Addr low, high;
	} *v;
	size_t n, cap;
};

static int note_kept(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		     void *arg)
{
	struct kept_mods *k = arg;
	struct uw_mod *m = *userdata;
	struct kept_mod *grown;
	Dwarf_Addr end;

	if (m && m->closing)
		return DWARF_CB_OK;
	grown = tr_vec_grow(k->v, &k->cap, k->n + 1, sizeof(*grown), 64);
	if (!grown)
		return DWARF_CB_ABORT;
	k->v = grown;
	dwfl_module_info(mod, NULL, NULL, &end, NULL, NULL, NULL, NULL);
	k->v[k->n++] = (struct kept_mod){ name, start, end };
	return DWARF_CB_OK;
}

/* libdwfl closes no single module: what a report leaves out of a Dwfl's
 * modules, dwfl_report_end frees.  So the process's modules but those
 * marked `closing` are reported again (found as they are, nothing
 * reread) and the marked ones go, their files closed. */
static void close_marked(struct unwinder *u, struct uw_proc *p)
{
	struct kept_mods k = { 0 };

	if (dwfl_getmodules(p->dwfl, note_kept, &k, 0) == 0) {
		dwfl_report_begin(p->dwfl);
		for (size_t i = 0; i < k.n; i++)
			(void)dwfl_report_module(p->dwfl, k.v[i].name, k.v[i].low, k.v[i].high);
		(void)dwfl_report_end(p->dwfl, forget_removed, u);
	}
	free(k.v);
}

/* Closes the least recently needed objects until at most `keep` stay
 * open, never one the current sample needs.  Returns how many went. */
static size_t close_objects(struct unwinder *u, size_t keep)
{
	size_t marked = 0, before = u->n_mods;
	struct uw_mod *m;

	for (m = u->oldest; m && before - marked > keep && m->used != u->sample; m = m->newer) {
		m->closing = 1;
		m->proc->closing = 1;
		marked++;
	}
	if (!marked)
		return 0;
	for (size_t i = 0; i < MAX_PROCS; i++) {
		if (u->procs[i].dwfl && u->procs[i].closing)
			close_marked(u, &u->procs[i]);
		u->procs[i].closing = 0;
	}
	/* Those still open (out of memory for the list): not to close later. */
	for (m = u->oldest; m && m->closing; m = m->newer)
		m->closing = 0;
	u->stats.objects_closed += before - u->n_mods;
	return before - u->n_mods;
}

/* Notes that the sample's unwinding looked up `addr` (after reporting the
 * object there when `reported`). */
static void note_lookup(struct unwinder *u, uint64_t addr, int reported)
{
	Dwfl_Module *mod;
	uint32_t obj;

	if (!u->checkable)
		return;
	mod = dwfl_addrmodule(u->cur->dwfl, addr);
	needed(u, mod);
	obj = object_of(u, mod);
	if (u->n_lookups == MAX_LOOKUPS || obj == UW_OBJECT_UNCHECKABLE) {
		u->checkable = 0;
		return;
	}
	u->lookups[u->n_lookups++] = (struct uw_lookup){ addr, obj, (uint32_t)reported };
}

/* Every process of this kernel (and ABI) maps the same vDSO image: ours,
 * copied once into a memfd.  Its fd, or -errno; tried again after a
 * failure for want of descriptors. */
static int own_vdso(struct unwinder *u)
{
	unsigned long long start, end;
	char line[512];
	FILE *maps;
	int err = -ENOENT;

	if (u->vdso_tried)
		return u->vdso_fd >= 0 ? u->vdso_fd : -ENOENT;
	maps = fopen("/proc/self/maps", "re");
	if (!maps) {
		err = -errno;
		u->vdso_tried = !out_of_fds(err);
		return err;
	}
	u->vdso_tried = 1;
	while (fgets(line, sizeof(line), maps)) {
		if (!strstr(line, "[vdso]") || sscanf(line, "%llx-%llx", &start, &end) != 2)
			continue;
		u->vdso_fd = memfd_create("tracerig-vdso", MFD_CLOEXEC);
		if (u->vdso_fd < 0) {
			err = -errno;
			u->vdso_tried = !out_of_fds(err);
		} else if (tr_write_all(u->vdso_fd, (void *)(uintptr_t)start, end - start) < 0) {
			close(u->vdso_fd);
			u->vdso_fd = -1;
		}
		u->vdso_len = end - start;
		break;
	}
	fclose(maps);
	return u->vdso_fd >= 0 ? u->vdso_fd : err;
}

/* libdwfl maps the objects it reads: a file truncated meanwhile makes
 * the unwinder's reads past its new end fault (SIGBUS), and any user can
 * truncate a library of their own that their process maps.  Such an
 * object (not root's, or writable by others) is read from a private
 * copy, made once: a copy cut by a truncation is only a malformed object.
 * Root's files only root could cut.  Returns the fd to report (fd itself,
 * or a copy: fd is closed then), or -errno (fd closed) to leave it out. */
static int private_copy(struct unwinder *u, int fd)
{
	struct uw_copy *c;
	struct stat st;
	int copy, kept, err;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return fd;
	if (st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH)))
		return fd;
	for (size_t i = 0; i < u->n_copies; i++) {
		c = &u->copies[i];
		if (c->fd >= 0 && c->dev == st.st_dev && c->ino == st.st_ino && c->size == st.st_size &&
		    c->mtime.tv_sec == st.st_mtim.tv_sec && c->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			close(fd);
			copy = dup(c->fd);
			return copy < 0 ? -errno : copy;
		}
	}
	if ((uint64_t)st.st_size > UW_COPY_MAX) {
		close(fd);
		return -EFBIG;
	}
	copy = memfd_create("tr-unwind-object", MFD_CLOEXEC);
	if (copy < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (lseek(fd, 0, SEEK_SET) < 0 || tr_copy_fd(fd, copy) < 0) {
		close(copy);
		close(fd);
		return -EIO;
	}
	close(fd);
	/* Kept for the other processes mapping it, and for reporting it
	 * again once closed (close_objects), the oldest going first. */
	kept = dup(copy);
	if (kept < 0)
		return copy;
	c = &u->copies[u->next_copy];
	if (u->n_copies == u->max_copies) {
		if (c->fd >= 0)
			close(c->fd);
	} else {
		u->n_copies++;
	}
	*c = (struct uw_copy){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
			       .mtime = st.st_mtim, .fd = kept };
	u->next_copy = (u->next_copy + 1) % u->max_copies;
	return copy;
}

/* The copies kept for later (the modules reading them hold their own
 * descriptors): closed when descriptors run out.  How many were. */
static size_t drop_copies(struct unwinder *u)
{
	size_t closed = 0;

	for (size_t i = 0; i < u->n_copies; i++) {
		if (u->copies[i].fd >= 0) {
			close(u->copies[i].fd);
			closed++;
		}
	}
	u->n_copies = u->next_copy = 0;
	return closed;
}

/* Once per plugin (each links its own copy of this file): the stacks of
 * every unwinder it runs are cut for the same reason. */
static atomic_uint_fast64_t unopened_total;
static atomic_int unopened_said;

static void unopened(struct unwinder *u, const char *path, int err)
{
	uint64_t total = atomic_fetch_add(&unopened_total, 1) + 1;

	u->stats.objects_unopened++;
	if (u->svc->run->counter_set)
		u->svc->run->counter_set(u->ctx, "unwind_out_of_fds", total);
	if (u->svc->run->log && !atomic_exchange(&unopened_said, 1))
		u->svc->run->log(
			u->ctx, TRACERIG_LOG_WARN,
			"pid %d: cannot open %s to unwind through it: "
			"%s (the stacks through it are cut there, the manifest counts them as "
			"unwind_out_of_fds; raise the open-files limit: ulimit -Hn, or "
			"LimitNOFILE= for a service)",
			(int)u->cur->pid, path ? path : "an object", strerror(-err));
}

/* The object at pc, opened for the current process: 0 and *obj (its fd
 * ours), or -errno; *absent when the process model has no object file
 * there (worth asking again only later). */
static int open_object(struct unwinder *u, Dwarf_Addr pc, struct tracerig_object *obj,
		       int *absent)
{
	int ret = tracerig_internal(u->svc)->symbolizer_object(u->ctx, u->cur->pid, pc, obj), fd;

	*absent = ret < 0;
	if (ret < 0) {
		obj->path = NULL;
		return ret;
	}
	if (obj->fd < 0) { /* the vDSO */
		fd = own_vdso(u);
		if (fd < 0)
			return fd;
		if (obj->end - obj->start != u->vdso_len)
			return -ENOENT;
		obj->fd = dup(fd);
		return obj->fd < 0 ? -errno : 0;
	}
	obj->fd = private_copy(u, obj->fd);
	return obj->fd < 0 ? obj->fd : 0;
}

static void report_module(struct unwinder *u, Dwarf_Addr pc)
{
	struct uw_absent *absent = &u->cur->absent[(pc ^ pc >> 6) % ABSENT_SLOTS];
	struct tracerig_object obj;
	Dwfl *dwfl = u->cur->dwfl;
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	const char *base;
	struct uw_mod *m;
	void **userdata;
	int ret, none;

	if (mod) {
		needed(u, mod);
		return;
	}
	if (absent->pc == pc && monotonic_ns() - absent->at_ns < ABSENT_NS)
		return;
	/* Room first, a quarter of the bound at a time: closing is a new
	 * report of the process's other modules. */
	if (u->n_mods >= u->max_mods)
		close_objects(u, u->max_mods - u->max_mods / 4);
	ret = open_object(u, pc, &obj, &none);
	/* The limit is reached all the same (other descriptors, other
	 * unwinders): whatever this one may close, then once more. */
	if (out_of_fds(ret) && close_objects(u, 0) + drop_copies(u) > 0)
		ret = open_object(u, pc, &obj, &none);
	if (out_of_fds(ret))
		unopened(u, obj.path, ret);
	if (none || out_of_fds(ret)) {
		absent->pc = pc;
		absent->at_ns = monotonic_ns();
	}
	if (ret < 0)
		return;
	m = calloc(1, sizeof(*m));
	if (!m) {
		close(obj.fd);
		return;
	}
	base = strrchr(obj.path, '/');
	dwfl_report_begin_add(dwfl);
	/* The bias as perf computes it: the mapping's start less its offset. */
	mod = dwfl_report_elf(dwfl, base ? base + 1 : obj.path, obj.path, obj.fd,
			      obj.start - obj.pgoff, false);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		close(obj.fd); /* on success the module owns it */
		free(m);
		return;
	}
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (*userdata) { /* libdwfl's own, already known: there was none at pc */
		free(m);
		needed(u, mod);
		return;
	}
	*m = (struct uw_mod){ .proc = u->cur, .used = u->sample, .start = obj.start };
	m->debug_root = obj.root_pid;
	*userdata = m;
	mod_push(u, m);
	u->n_mods++;
}

/* A word of an object's file at a virtual address (data the CFI points
 * at outside the stack). */
static int read_object(struct unwinder *u, Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	Dwarf_Addr bias;
	GElf_Phdr ph;
	size_t n, raw_size;
	const char *raw;
	Elf *elf;

	needed(u, mod);
	if (!mod || !(elf = dwfl_module_getelf(mod, &bias)) || elf_getphdrnum(elf, &n) != 0)
		return 0;
	raw = elf_rawfile(elf, &raw_size);
	if (!raw)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t vaddr = addr - bias, off;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr + sizeof(*result) > ph.p_vaddr + ph.p_filesz)
			continue;
		off = ph.p_offset + (vaddr - ph.p_vaddr);
		if (off + sizeof(*result) > raw_size)
			return 0;
		memcpy(result, raw + off, sizeof(*result));
		return 1;
	}
	return 0;
}

/* ---- the thread callbacks: one thread, the sample's ---- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)arg;
	(void)thread_argp;
	return 0; /* threads are only ever asked for by tid */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwinder *u = arg;

	if (addr >= u->sp && addr - u->sp + sizeof(*result) <= u->stack_size) {
		memcpy(result, u->stack + (addr - u->sp), sizeof(*result));
		return true;
	}
	note_lookup(u, addr, 0);
	if (read_object(u, dwfl, addr, result))
		return true;
	/* Just above the copy: the stack went on, the copy did not. */
	if (addr >= u->sp + u->stack_size && addr - u->sp < (1u << 20))
		u->stack_end_hit = 1;
	return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwinder *u = thread_arg;

	return dwfl_thread_state_registers(thread, 0, N_DWARF_REGS, u->dwarf_regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	Dwarf_Addr raw;

	if (!dwfl_frame_pc(state, &raw, NULL))
		return DWARF_CB_ABORT;
	/* The next step needs this frame's CFI. */
	report_module(u, raw);
	note_lookup(u, raw, 1);
	/* Past code of no known object the stack is guessed or stops: said
	 * if the unwinding ends there. */
	u->unmapped_hit = dwfl_addrmodule(u->cur->dwfl, raw) == NULL;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* A return address names the instruction after the call: as perf,
	 * the frame is the call itself. */
	if (!activation)
		pc--;
	/* libdwfl finds the CFI at that address: its object is the one noted
	 * at the raw one (then it is wherever that object is), else the
	 * frames are this model's alone. */
	if (pc != raw && dwfl_addrmodule(u->cur->dwfl, pc) != dwfl_addrmodule(u->cur->dwfl, raw))
		u->checkable = 0;
	u->ips[u->n_ips++] = pc;
	return u->n_ips == MAX_USER_FRAMES ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* ---- processes ---- */

static void proc_drop(struct unwinder *u, struct uw_proc *p)
{
	if (p->dwfl) {
		(void)dwfl_getmodules(p->dwfl, forget_each, u, 0);
		dwfl_end(p->dwfl);
	}
	memset(p, 0, sizeof(*p));
}

static struct uw_proc *proc_find(struct unwinder *u, pid_t pid)
{
	for (size_t i = 0; i < MAX_PROCS; i++)
		if (u->procs[i].dwfl && u->procs[i].pid == pid)
			return &u->procs[i];
	return NULL;
}

static struct uw_proc *proc_get(struct unwinder *u, pid_t pid)
{
	struct uw_proc *p = proc_find(u, pid), *victim = &u->procs[0];

	if (p)
		return p;
	for (size_t i = 0; i < MAX_PROCS; i++) {
		if (!u->procs[i].dwfl) {
			victim = &u->procs[i];
			break;
		}
		if (u->procs[i].last_use < victim->last_use)
			victim = &u->procs[i];
	}
	proc_drop(u, victim);
	victim->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!victim->dwfl)
		return NULL;
	victim->owner = u;
	victim->pid = pid;
	memset(victim->absent, 0xff, sizeof(victim->absent));
	return victim;
}

/* ---- unwinding ---- */

size_t uw_unwind(struct unwinder *u, pid_t pid, pid_t tid, const uint64_t regs[UW_N_REGS],
		 const void *stack, uint64_t stack_size, const uint64_t **ips)
{
	struct uw_proc *proc;

	*ips = u->ips;
	u->n_ips = 0;
	u->stats.samples++;
	memcpy(u->dwarf_regs, regs, sizeof(u->dwarf_regs));
	u->stack = stack;
	u->stack_size = stack ? stack_size : 0;
	u->sp = regs[UW_REG_SP];
	u->stack_end_hit = 0;
	u->unmapped_hit = 0;
	u->n_lookups = 0;
	u->checkable = 1;
	u->sample++;
	proc = proc_get(u, pid);
	if (proc) {
		u->cur = proc;
		proc->last_use = ++u->clock;
		if (!proc->attached)
			proc->attached = dwfl_attach_state(proc->dwfl, u->arch, pid, &thread_callbacks, u);
		if (proc->attached)
			(void)dwfl_getthread_frames(proc->dwfl, tid, on_frame, u);
	}
	if (!u->n_ips) {
		/* Out of memory or a sample libdwfl refused: nothing to adopt. */
		u->checkable = 0;
		u->ips[u->n_ips++] = regs[UW_REG_IP];
	}
	u->stats.frames += u->n_ips;
	u->stats.stack_end += u->stack_end_hit;
	u->stats.unmapped += u->unmapped_hit;
	return u->n_ips;
}

void uw_last(const struct unwinder *u, struct uw_frames *out)
{
	*out = (struct uw_frames){ .ips = u->ips,
				   .n_ips = u->n_ips,
				   .lookups = u->lookups,
				   .n_lookups = u->n_lookups,
				   .stack_end = u->stack_end_hit,
				   .unmapped = u->unmapped_hit,
				   .checkable = u->checkable };
}

int uw_adopt(struct unwinder *u, pid_t pid, const struct uw_frames *f)
{
	struct uw_proc *proc;

	if (!f->checkable || !f->n_ips || f->n_ips > MAX_USER_FRAMES)
		return 0;
	u->sample++;
	proc = proc_get(u, pid);
	if (!proc)
		return 0;
	u->cur = proc;
	proc->last_use = ++u->clock;
	/* In the order the other unwinder went: what it reported, this one
	 * reports too, so the objects it had by then, this one has. */
	for (size_t i = 0; i < f->n_lookups; i++) {
		Dwfl_Module *mod;

		if (f->lookups[i].reported)
			report_module(u, f->lookups[i].addr);
		mod = dwfl_addrmodule(proc->dwfl, f->lookups[i].addr);
		needed(u, mod);
		if (object_of(u, mod) != f->lookups[i].object)
			return 0;
	}
	u->stats.samples++;
	u->stats.frames += f->n_ips;
	u->stats.stack_end += !!f->stack_end;
	u->stats.unmapped += !!f->unmapped;
	u->stats.adopted++;
	return 1;
}

void uw_exec(struct unwinder *u, pid_t pid)
{
	struct uw_proc *p = proc_find(u, pid);

	if (p)
		proc_drop(u, p);
}

void uw_mmap(struct unwinder *u, pid_t pid, uint64_t start, uint64_t len)
{
	struct uw_proc *p = proc_find(u, pid);

	if (p && len && (dwfl_addrmodule(p->dwfl, start) || dwfl_addrmodule(p->dwfl, start + len - 1)))
		proc_drop(u, p);
	else if (p)
		memset(p->absent, 0xff, sizeof(p->absent)); /* the new mapping may hold them */
}

struct unwinder *uw_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			struct uw_objects *objects)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->svc = svc;
	u->ctx = ctx;
	u->vdso_fd = -1;
	u->objects = objects;
	/* A share of the limit for the objects, an eighth of that for the
	 * copies kept besides (at least one). */
	u->max_mods = open_bound();
	u->max_copies = u->max_mods / 8 ? u->max_mods / 8 : 1;
	if (u->max_copies > COPIES)
		u->max_copies = COPIES;
	u->max_mods -= u->max_copies;
	if (!objects) {
		u->objects = uw_objects_new();
		u->own_objects = 1;
	}
	memcpy(u->arch_image.e_ident, ELFMAG, SELFMAG);
	u->arch_image.e_ident[EI_CLASS] = ELFCLASS64;
	u->arch_image.e_ident[EI_DATA] = ELFDATA2LSB;
	u->arch_image.e_ident[EI_VERSION] = EV_CURRENT;
	u->arch_image.e_type = ET_DYN;
	u->arch_image.e_machine = EM_X86_64;
	u->arch_image.e_version = EV_CURRENT;
	u->arch_image.e_ehsize = sizeof(u->arch_image);
	if (elf_version(EV_CURRENT) != EV_NONE)
		u->arch = elf_memory((char *)&u->arch_image, sizeof(u->arch_image));
	if (!u->objects || !u->arch) {
		uw_free(u);
		return NULL;
	}
	return u;
}

void uw_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < MAX_PROCS; i++)
		proc_drop(u, &u->procs[i]);
	if (u->vdso_fd >= 0)
		close(u->vdso_fd);
	(void)drop_copies(u);
	if (u->arch)
		elf_end(u->arch);
	if (u->own_objects)
		uw_objects_free(u->objects);
	free(u);
}

void uw_get_stats(const struct unwinder *u, struct uw_stats *out)
{
	*out = u->stats;
}

#else /* !UW_AVAILABLE: configure refuses callchain = dwarf, nothing unwinds */

struct uw_objects *uw_objects_new(void)
{
	return NULL;
}

void uw_objects_free(struct uw_objects *o)
{
	(void)o;
}

struct unwinder *uw_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			struct uw_objects *objects)
{
	(void)svc;
	(void)ctx;
	(void)objects;
	return NULL;
}

void uw_last(const struct unwinder *u, struct uw_frames *out)
{
	(void)u;
	memset(out, 0, sizeof(*out));
}

int uw_adopt(struct unwinder *u, pid_t pid, const struct uw_frames *f)
{
	(void)u;
	(void)pid;
	(void)f;
	return 0;
}

void uw_free(struct unwinder *u)
{
	(void)u;
}

size_t uw_unwind(struct unwinder *u, pid_t pid, pid_t tid, const uint64_t regs[UW_N_REGS],
		 const void *stack, uint64_t stack_size, const uint64_t **ips)
{
	(void)u;
	(void)pid;
	(void)tid;
	(void)stack;
	(void)stack_size;
	*ips = regs + UW_REG_IP; /* never reached: uw_new returned NULL */
	return 1;
}

void uw_exec(struct unwinder *u, pid_t pid)
{
	(void)u;
	(void)pid;
}

void uw_mmap(struct unwinder *u, pid_t pid, uint64_t start, uint64_t len)
{
	(void)u;
	(void)pid;
	(void)start;
	(void)len;
}

void uw_get_stats(const struct unwinder *u, struct uw_stats *out)
{
	(void)u;
	memset(out, 0, sizeof(*out));
}

#endif

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
 * what uw_adopt checks. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/unwind.h"
#include "lib/untrusted.h"

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
	pid_t pid;
	Dwfl *dwfl; /* NULL: slot free */
	int attached;
	uint64_t last_use;
	struct uw_absent absent[ABSENT_SLOTS]; /* direct-mapped by address */
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
	size_t n_copies, next_copy;

	/* The sample being unwound, read by the callbacks. */
	struct uw_proc *cur;
	Dwarf_Word dwarf_regs[N_DWARF_REGS];
	const unsigned char *stack;
	uint64_t stack_size, sp;
	int stack_end_hit;
	uint64_t ips[MAX_USER_FRAMES];
	size_t n_ips;
	struct uw_lookup lookups[MAX_LOOKUPS];
	size_t n_lookups;
	int checkable;
};

/* A separate debug file (.debug_frame of code without .eh_frame) by build
 * id only, in our own /usr/lib/debug, opened as every file a traced
 * process may have a say in: no path it chose, no link followed, and no
 * debuginfod download in the middle of a flush. */
static int find_debug_file(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bid;
	struct tr_untrusted why;
	GElf_Addr bid_vaddr;
	char path[256];
	int len = dwfl_module_build_id(mod, &bid, &bid_vaddr), n, fd;

	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	if (len < 2 || len > 64)
		return -1;
	n = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", bid[0]);
	for (int i = 1; i < len; i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", bid[i]);
	snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
	fd = tr_untrusted_open(0, path, TR_OBJECT_MAX, &why);
	if (fd < 0)
		return -1;
	*debuginfo_file_name = strdup(path);
	return fd;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_debuginfo = find_debug_file,
};

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
	struct uw_object obj = { 0 };
	const unsigned char *bid;
	GElf_Addr bid_vaddr;
	Dwarf_Addr low, high, bias;
	void **userdata;
	size_t n;
	int len;

	if (!mod)
		return 0;
	dwfl_module_info(mod, &userdata, &low, &high, NULL, NULL, NULL, NULL);
	if (*userdata)
		return (uint32_t)(uintptr_t)*userdata;
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
			*userdata = (void *)(uintptr_t)(i + 1);
			return (uint32_t)(i + 1);
		}
	}
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		struct uw_object *grown = realloc(o->v, cap * sizeof(*grown));

		if (!grown) {
			pthread_mutex_unlock(&o->lock);
			return UW_OBJECT_UNCHECKABLE;
		}
		o->v = grown;
		o->cap = cap;
	}
	o->v[o->n++] = obj;
	n = o->n;
	pthread_mutex_unlock(&o->lock);
	*userdata = (void *)(uintptr_t)n;
	return (uint32_t)n;
}

/* Notes that the sample's unwinding looked up `addr` (after reporting the
 * object there when `reported`). */
static void note_lookup(struct unwinder *u, uint64_t addr, int reported)
{
	uint32_t obj;

	if (!u->checkable)
		return;
	obj = object_of(u, dwfl_addrmodule(u->cur->dwfl, addr));
	if (u->n_lookups == MAX_LOOKUPS || obj == UW_OBJECT_UNCHECKABLE) {
		u->checkable = 0;
		return;
	}
	u->lookups[u->n_lookups++] = (struct uw_lookup){ addr, obj, (uint32_t)reported };
}

/* Every process of this kernel (and ABI) maps the same vDSO image: ours,
 * copied once into a memfd. */
static int own_vdso(struct unwinder *u)
{
	unsigned long long start, end;
	char line[512];
	FILE *maps;
	int fd;

	if (u->vdso_tried)
		return u->vdso_fd;
	u->vdso_tried = 1;
	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return -1;
	while (fgets(line, sizeof(line), maps)) {
		if (!strstr(line, "[vdso]") || sscanf(line, "%llx-%llx", &start, &end) != 2)
			continue;
		fd = memfd_create("tracerig-vdso", MFD_CLOEXEC);
		if (fd >= 0 && write(fd, (const void *)(uintptr_t)start, end - start) !=
				       (ssize_t)(end - start)) {
			close(fd);
			fd = -1;
		}
		u->vdso_fd = fd;
		u->vdso_len = end - start;
		break;
	}
	fclose(maps);
	return u->vdso_fd;
}

/* libdwfl maps the objects it reads: a file truncated meanwhile makes
 * the unwinder's reads past its new end fault (SIGBUS), and any user can
 * truncate a library of their own that their process maps.  Such an
 * object (not root's, or writable by others) is read from a private
 * copy, made once: a copy cut by a truncation is only a malformed object.
 * Root's files only root could cut.  Returns the fd to report (fd itself,
 * or a copy: fd is closed then), or -1 (fd closed) to leave it out. */
static int private_copy(struct unwinder *u, int fd)
{
	struct uw_copy *c;
	struct stat st;
	int copy;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return fd;
	if (st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH)))
		return fd;
	for (size_t i = 0; i < u->n_copies; i++) {
		c = &u->copies[i];
		if (c->fd >= 0 && c->dev == st.st_dev && c->ino == st.st_ino && c->size == st.st_size &&
		    c->mtime.tv_sec == st.st_mtim.tv_sec && c->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			close(fd);
			return dup(c->fd);
		}
	}
	if ((uint64_t)st.st_size > UW_COPY_MAX ||
	    (copy = memfd_create("tr-unwind-object", MFD_CLOEXEC)) < 0) {
		close(fd);
		return -1;
	}
	if (lseek(fd, 0, SEEK_SET) < 0 || tr_copy_fd(fd, copy) < 0) {
		close(copy);
		close(fd);
		return -1;
	}
	close(fd);
	/* Kept for the other processes mapping it: the oldest goes. */
	c = &u->copies[u->next_copy];
	if (u->n_copies == COPIES) {
		if (c->fd >= 0)
			close(c->fd);
	} else {
		u->n_copies++;
	}
	*c = (struct uw_copy){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
			       .mtime = st.st_mtim, .fd = dup(copy) };
	u->next_copy = (u->next_copy + 1) % COPIES;
	return copy;
}

static void report_module(struct unwinder *u, Dwarf_Addr pc)
{
	struct tracerig_object obj;
	const char *base;
	Dwfl *dwfl = u->cur->dwfl;
	Dwfl_Module *mod;

	struct uw_absent *absent = &u->cur->absent[(pc ^ pc >> 6) % ABSENT_SLOTS];

	if (dwfl_addrmodule(dwfl, pc) ||
	    (absent->pc == pc && monotonic_ns() - absent->at_ns < ABSENT_NS))
		return;
	if (u->svc->symbolizer_object(u->ctx, u->cur->pid, pc, &obj) < 0) {
		absent->pc = pc;
		absent->at_ns = monotonic_ns();
		return;
	}
	if (obj.fd < 0) { /* the vDSO */
		if (own_vdso(u) < 0 || obj.end - obj.start != u->vdso_len)
			return;
		obj.fd = dup(u->vdso_fd);
		if (obj.fd < 0)
			return;
	} else if ((obj.fd = private_copy(u, obj.fd)) < 0) {
		return;
	}
	base = strrchr(obj.path, '/');
	dwfl_report_begin_add(dwfl);
	/* The bias as perf computes it: the mapping's start less its offset. */
	mod = dwfl_report_elf(dwfl, base ? base + 1 : obj.path, obj.path, obj.fd,
			      obj.start - obj.pgoff, false);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod)
		close(obj.fd); /* on success the module owns it */
}

/* A word of an object's file at a virtual address (data the CFI points
 * at outside the stack). */
static int read_object(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	Dwarf_Addr bias;
	GElf_Phdr ph;
	size_t n, raw_size;
	const char *raw;
	Elf *elf;

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
	if (read_object(dwfl, addr, result))
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

static void proc_drop(struct uw_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
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
	proc_drop(victim);
	victim->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!victim->dwfl)
		return NULL;
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
	u->n_lookups = 0;
	u->checkable = 1;
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
	return u->n_ips;
}

void uw_last(const struct unwinder *u, struct uw_frames *out)
{
	*out = (struct uw_frames){ .ips = u->ips, .n_ips = u->n_ips, .lookups = u->lookups,
				   .n_lookups = u->n_lookups, .stack_end = u->stack_end_hit,
				   .checkable = u->checkable };
}

int uw_adopt(struct unwinder *u, pid_t pid, const struct uw_frames *f)
{
	struct uw_proc *proc;

	if (!f->checkable || !f->n_ips || f->n_ips > MAX_USER_FRAMES)
		return 0;
	proc = proc_get(u, pid);
	if (!proc)
		return 0;
	u->cur = proc;
	proc->last_use = ++u->clock;
	/* In the order the other unwinder went: what it reported, this one
	 * reports too, so the objects it had by then, this one has. */
	for (size_t i = 0; i < f->n_lookups; i++) {
		if (f->lookups[i].reported)
			report_module(u, f->lookups[i].addr);
		if (object_of(u, dwfl_addrmodule(proc->dwfl, f->lookups[i].addr)) !=
		    f->lookups[i].object)
			return 0;
	}
	u->stats.samples++;
	u->stats.frames += f->n_ips;
	u->stats.stack_end += !!f->stack_end;
	u->stats.adopted++;
	return 1;
}

void uw_exec(struct unwinder *u, pid_t pid)
{
	struct uw_proc *p = proc_find(u, pid);

	if (p)
		proc_drop(p);
}

void uw_mmap(struct unwinder *u, pid_t pid, uint64_t start, uint64_t len)
{
	struct uw_proc *p = proc_find(u, pid);

	if (p && len && (dwfl_addrmodule(p->dwfl, start) || dwfl_addrmodule(p->dwfl, start + len - 1)))
		proc_drop(p);
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
		proc_drop(&u->procs[i]);
	if (u->vdso_fd >= 0)
		close(u->vdso_fd);
	for (size_t i = 0; i < u->n_copies; i++)
		if (u->copies[i].fd >= 0)
			close(u->copies[i].fd);
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

/* Opening the events, one ring buffer per CPU, and the thread that drains
 * the rings into perf.data.
 *
 * Every event is opened once per CPU (system-wide, cgroup) or once per
 * target thread and CPU with inherit (-p, the launched command), so that
 * all fds of one CPU can share that CPU's ring (PERF_EVENT_IOC_SET_OUTPUT
 * requires the same CPU) and records of one CPU arrive in time order. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "lib/cpus.h"
#include "lib/perfring.h"
#include "lib/pidset.h"
#include "lib/vec.h"
#include "livesb.h"
#include "perffile.h"
#include "synth.h"
#include "tracingdata.h"

struct cpu_ring {
	int cpu;
	struct tr_ring ring; /* mapped on the first fd of this CPU */
	int hup;
};

/* One file of a flight-mode recording (pc_config.chunk_ns). */
struct pc_chunk {
	char *path;
	uint64_t start_ns, end_ns; /* end 0: being written */
	uint64_t synth_end;        /* data bytes before the first ring record */
};

/* An object seen with a build id, for HEADER_BUILD_ID. */
struct seen_object {
	struct pd_build_id id;
	char *filename;
};

struct pc_collector {
	struct seen_object *objects;
	size_t n_objects, cap_objects;
	unsigned char vdso_bid[20]; /* given to every [vdso] mapping of our ABI */
	size_t vdso_bid_len;
	uint64_t vdso_len;
	struct synth_kernel_text ktext;
	struct pc_config cfg;
	struct pc_target target;
	struct pc_opened *ev;
	size_t n_ev;
	int **fds; /* per event: the fds, in the same order as ev[i].ids */
	int *cpus;
	size_t n_cpus;
	struct cpu_ring *rings;
	int cgroup_fd;

	struct pd_writer *writer; /* NULL when only trying (--check) */
	int emit_error; /* from writing the synthesized records */
	pthread_t thread;
	int thread_started;
	atomic_int stopping;
	int wake_fd; /* an eventfd: stop does not wait for the poll timeout */
	int poll_ms; /* a pass at least this often, however little comes */
	int pass_fd; /* an eventfd told of every pass that wrote records; -1 */
	pthread_mutex_t lock; /* counts, the writer after the thread ended */
	struct pc_counts counts;
	int write_error;

	uint64_t sample_id_bytes; /* where the pid sits in a sample: after id and ip */
	struct tr_pid_set seen;

	pc_pid_fn pid_fn;
	pc_log_fn log_fn;
	void *arg;

	/* Flight mode: the chunks, oldest first; the last is c->writer's. */
	char *chunk_prefix;
	struct pc_chunk *chunks;
	size_t n_chunks;
	unsigned chunk_seq;
	int rotate_failed; /* said once */
	/* The side-band of what is alive, replayed at the head of each new
	 * chunk (livesb.h); rescan: the next chunk reads /proc instead (the
	 * state lost records, or memory), and the state is rebuilt from it. */
	struct livesb *live;
	int rescan;
	int live_failed; /* said once */

	unsigned char rewrite[65536] __attribute__((aligned(8))); /* a renamed record */
};

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
			       unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

static uint64_t read_u64_file(const char *path)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	uint64_t v = 0;

	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f))
		v = strtoull(buf, NULL, 10);
	fclose(f);
	return v;
}

uint64_t pc_max_sample_rate(void)
{
	return read_u64_file("/proc/sys/kernel/perf_event_max_sample_rate");
}

void pc_permission_advice(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int paranoid = 2;

	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = 2;
		fclose(f);
	}
	snprintf(buf, len, "kernel.perf_event_paranoid is %d: run as root, give tracerig "
		 "CAP_PERFMON (setcap cap_perfmon,cap_sys_ptrace+ep), or lower it with "
		 "sysctl kernel.perf_event_paranoid=-1", paranoid);
}

/* ---- attrs ---- */

static uint64_t sample_type_of(const struct pc_collector *c, const struct ev_spec *ev)
{
	uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;

	if (c->cfg.callchain)
		st |= PERF_SAMPLE_CALLCHAIN;
	if (c->cfg.dwarf_stack_bytes)
		st |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	if (ev->kind == EV_TRACEPOINT)
		st |= PERF_SAMPLE_RAW;
	return st;
}

static void make_attr(const struct pc_collector *c, const struct ev_spec *ev, int tracking,
		      struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = ev->type;
	a->config = ev->config;
	a->sample_type = sample_type_of(c, ev);
	if (ev->kind == EV_TRACEPOINT) {
		a->sample_period = 1; /* every occurrence, like perf record -e sys:tp */
	} else if (c->cfg.period) {
		a->sample_period = c->cfg.period;
	} else {
		a->freq = 1;
		a->sample_freq = c->cfg.frequency;
	}
	a->disabled = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_kernel = !c->cfg.kernel && ev->kind != EV_TRACEPOINT;
	a->exclude_callchain_kernel = !c->cfg.kernel;
	if (a->sample_type & PERF_SAMPLE_CALLCHAIN)
		a->sample_max_stack = c->cfg.max_stack;
	if (c->cfg.dwarf_stack_bytes) {
		/* As perf record --call-graph dwarf: the kernel's callchain
		 * keeps the kernel frames, the user ones come from unwinding. */
		a->exclude_callchain_user = 1;
		a->sample_regs_user = PC_USER_REGS_MASK;
		a->sample_stack_user = c->cfg.dwarf_stack_bytes;
	}
	a->inherit = !c->target.system_wide && !c->target.cgroup;
	/* Drain at a quarter full: the thread also wakes every poll_ms. */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(c->cfg.ring_pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	if (tracking) {
		/* One event carries the side-band records perf needs to name
		 * processes and map addresses: exactly one, or they repeat. */
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->build_id = 1;
		a->context_switch = c->cfg.context_switches;
		/* perf script's libunwind finds .eh_frame_hdr through the
		 * read-only mapping that holds it, as perf record does. */
		a->mmap_data = !!c->cfg.dwarf_stack_bytes;
	}
}

/* ---- opening ---- */

static int add_fd(struct pc_collector *c, size_t ei, int fd, size_t cpu_index)
{
	struct pc_opened *ev = &c->ev[ei];
	struct cpu_ring *r = &c->rings[cpu_index];
	int *nf;
	uint64_t *ni, id;

	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return -errno;
	if (!r->ring.base) {
		int ret = tr_ring_map(&r->ring, fd, c->cfg.ring_pages);

		if (ret < 0)
			return ret;
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->ring.fd) < 0) {
		return -errno;
	}
	nf = realloc(c->fds[ei], (ev->n_ids + 1) * sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	c->fds[ei] = nf;
	ni = realloc(ev->ids, (ev->n_ids + 1) * sizeof(*ni));
	if (!ni)
		return -ENOMEM;
	ev->ids = ni;
	nf[ev->n_ids] = fd;
	ni[ev->n_ids] = id;
	ev->n_ids++;
	return 0;
}

static const char *target_word(const struct pc_collector *c)
{
	return c->target.cgroup && c->target.system_wide ? "cgroup" : "system-wide";
}

/* Opens event `ei` for (pid, every CPU).  Returns 0, -ESRCH when the
 * thread is gone, or -errno with `why` filled. */
static int open_on_cpus(struct pc_collector *c, size_t ei, pid_t pid, unsigned long flags,
			char *why, size_t why_len)
{
	struct perf_event_attr *a = &c->ev[ei].attr;

	for (size_t k = 0; k < c->n_cpus; k++) {
		int fd = sys_perf_event_open(a, pid, c->cpus[k], -1, flags | PERF_FLAG_FD_CLOEXEC);
		int ret;

		if (fd < 0) {
			ret = -errno;
			if (ret == -ESRCH)
				return ret;
			snprintf(why, why_len, "perf_event_open(%s, %s %d, cpu %d) failed: %s",
				 c->ev[ei].spec.name, pid == -1 ? target_word(c) : "pid", (int)pid,
				 c->cpus[k], strerror(-ret));
			return ret;
		}
		ret = add_fd(c, ei, fd, k);
		if (ret < 0) {
			close(fd);
			snprintf(why, why_len, "cannot map the ring buffer of %s on cpu %d: %s%s",
				 c->ev[ei].spec.name, c->cpus[k], strerror(-ret),
				 ret == -EPERM || ret == -ENOMEM
					 ? " (lower ring_pages, or raise kernel.perf_event_mlock_kb)"
					 : "");
			return ret;
		}
	}
	return 0;
}

/* Every thread of `pid`: threads created later are followed by inherit. */
static int open_process(struct pc_collector *c, size_t ei, pid_t pid, char *why, size_t why_len)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int opened = 0, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d) {
		snprintf(why, why_len, "process %d does not exist (check the PID given to -p)",
			 (int)pid);
		return -ESRCH;
	}
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0)
			continue;
		ret = open_on_cpus(c, ei, tid, 0, why, why_len);
		if (ret == -ESRCH) {
			ret = 0; /* the thread exited meanwhile */
			continue;
		}
		if (ret < 0)
			break;
		opened++;
	}
	closedir(d);
	if (!ret && !opened) {
		snprintf(why, why_len, "process %d exited before it could be traced", (int)pid);
		ret = -ESRCH;
	}
	return ret;
}

static int open_event(struct pc_collector *c, size_t ei, char *why, size_t why_len)
{
	const struct pc_target *t = &c->target;
	int ret = 0;

	if (t->n_pids || t->command_pid > 0) {
		for (size_t i = 0; i < t->n_pids && !ret; i++)
			ret = open_process(c, ei, t->pids[i], why, why_len);
		if (!ret && t->command_pid > 0) {
			/* Held before exec: count from the exec, as perf record
			 * does for the command it launches. */
			c->ev[ei].attr.enable_on_exec = 1;
			ret = open_on_cpus(c, ei, t->command_pid, 0, why, why_len);
			if (ret == -ESRCH)
				snprintf(why, why_len, "the launched command (pid %d) is gone",
					 (int)t->command_pid);
		}
		return ret;
	}
	if (t->cgroup)
		return open_on_cpus(c, ei, c->cgroup_fd, PERF_FLAG_PID_CGROUP, why, why_len);
	return open_on_cpus(c, ei, -1, 0, why, why_len);
}

static void close_event_fds(struct pc_collector *c, size_t ei)
{
	for (size_t k = 0; k < c->ev[ei].n_ids; k++) {
		for (size_t r = 0; r < c->n_cpus; r++) {
			if (c->rings[r].ring.base && c->rings[r].ring.fd == c->fds[ei][k]) {
				tr_ring_unmap(&c->rings[r].ring);
				c->rings[r].ring.fd = -1;
			}
		}
		close(c->fds[ei][k]);
	}
	free(c->fds[ei]);
	c->fds[ei] = NULL;
	free(c->ev[ei].ids);
	c->ev[ei].ids = NULL;
	c->ev[ei].n_ids = 0;
}

/* ---- the record stream ---- */

/* Bytes of the sample_id trailer non-sample records end with. */
static size_t trailer_size(uint64_t sample_type)
{
	static const uint64_t bits[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
					 PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
					 PERF_SAMPLE_IDENTIFIER };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		n += sample_type & bits[i] ? 8 : 0;
	return n;
}

/* MMAP2: header; u32 pid, tid; u64 addr, len, pgoff; 24 bytes of
 * device/inode or build id; u32 prot, flags; char filename[]; trailer. */
#define MMAP2_BID_OFF (sizeof(struct perf_event_header) + 8 + 24)
#define MMAP2_PROT_OFF (MMAP2_BID_OFF + 24)
#define MMAP2_NAME_OFF (MMAP2_PROT_OFF + 8)

/* The filename of an MMAP2 record, NUL-terminated within it, or NULL. */
static const char *mmap2_name(const struct pc_collector *c, const struct perf_event_header *h)
{
	size_t trailer = trailer_size(c->ev[0].attr.sample_type), max;
	const char *name = (const char *)h + MMAP2_NAME_OFF;

	if (h->type != PERF_RECORD_MMAP2 || h->size < MMAP2_NAME_OFF + trailer + 8)
		return NULL;
	max = h->size - MMAP2_NAME_OFF - trailer;
	return strnlen(name, max) < max ? name : NULL;
}

/* A JIT runtime's jitdump (jit-PID.dump, PID as the process sees it) is
 * mapped from its own /tmp or working directory, which do not exist where
 * the archive is read.  mapharvest stores it at the archive root as
 * jit-<hostpid>.dump, so the mapping is renamed ./jit-<hostpid>.dump:
 * `perf inject --jit` run in the unpacked archive then finds it.  Returns
 * the record to write: `h` itself or the rewritten copy in c->rewrite. */
static const struct perf_event_header *rename_jitdump(struct pc_collector *c,
						       const struct perf_event_header *h)
{
	const size_t name_off = MMAP2_NAME_OFF;
	size_t trailer = trailer_size(c->ev[0].attr.sample_type), new_len, size;
	const char *name = mmap2_name(c, h), *base;
	char newname[64];
	unsigned char *out = c->rewrite;
	pid_t pid;

	if (!name)
		return h;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strncmp(base, "jit-", 4) != 0 || strcmp(base + 4 + strspn(base + 4, "0123456789"), ".dump") ||
	    !isdigit((unsigned char)base[4]))
		return h;
	pid = (pid_t)((const uint32_t *)(h + 1))[0];
	snprintf(newname, sizeof(newname), "./jit-%d.dump", (int)pid);
	if (strcmp(name, newname) == 0)
		return h;
	new_len = (strlen(newname) + 1 + 7) & ~(size_t)7;
	size = name_off + new_len + trailer;
	if (size > sizeof(c->rewrite))
		return h;
	memcpy(out, h, name_off);
	memset(out + name_off, 0, new_len);
	memcpy(out + name_off, newname, strlen(newname));
	memcpy(out + name_off + new_len, (const char *)h + h->size - trailer, trailer);
	((struct perf_event_header *)out)->size = (uint16_t)size;
	return (const struct perf_event_header *)out;
}

/* The kernel describes a [vdso] mapping with no file, so no build id: perf
 * then names it after a copy of its own machine's vDSO in /tmp.  Ours is
 * the same image (same size: same ABI), so its build id goes in the record,
 * in place of the device and inode, as for any object. */
static const struct perf_event_header *identify_vdso(struct pc_collector *c,
						     const struct perf_event_header *h)
{
	const char *name = mmap2_name(c, h);
	unsigned char *out = c->rewrite;
	uint64_t len;

	if (!name || !c->vdso_bid_len || (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
	    strcmp(name, "[vdso]") != 0)
		return h;
	memcpy(&len, (const char *)h + sizeof(*h) + 16, sizeof(len));
	if (len != c->vdso_len)
		return h;
	memcpy(out, h, h->size);
	((struct perf_event_header *)out)->misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	memset(out + MMAP2_BID_OFF, 0, 24);
	out[MMAP2_BID_OFF] = (unsigned char)c->vdso_bid_len;
	memcpy(out + MMAP2_BID_OFF + 4, c->vdso_bid, c->vdso_bid_len);
	return (const struct perf_event_header *)out;
}

/* Every object with a build id once, for the header's table (what perf
 * buildid-list reads, and perf archive). */
static void note_object(struct pc_collector *c, const struct perf_event_header *h)
{
	const unsigned char *b = (const unsigned char *)h;
	const char *name = mmap2_name(c, h);
	struct seen_object *o;
	uint8_t size;

	if (!name || !(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
	    (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
		return;
	size = b[MMAP2_BID_OFF];
	if (!size || size > 20)
		return;
	for (size_t i = 0; i < c->n_objects; i++)
		if (c->objects[i].id.size == size &&
		    memcmp(c->objects[i].id.id, b + MMAP2_BID_OFF + 4, size) == 0)
			return;
	o = tr_vec_grow(c->objects, &c->cap_objects, c->n_objects + 1, sizeof(*o), 64);
	if (!o)
		return;
	c->objects = o;
	o = &c->objects[c->n_objects];
	o->filename = strdup(name);
	if (!o->filename)
		return;
	o->id = (struct pd_build_id){ .pid = 0, .filename = o->filename, .size = size };
	memcpy(o->id.id, b + MMAP2_BID_OFF + 4, size);
	c->n_objects++;
}

/* The live side-band takes in a side-band record (never a sample). */
static void keep_live(struct pc_collector *c, const struct perf_event_header *h)
{
	if (lsb_record(c->live, h) < 0) {
		c->rescan = 1;
		if (!c->live_failed++)
			c->log_fn(c->arg, 0, "flight mode: out of memory for the processes' "
				  "side-band: new chunks describe them from /proc again");
	}
}

static int emit(void *arg, const void *record, size_t len)
{
	struct pc_collector *c = arg;
	const struct perf_event_header *h;
	int ret;

	if (!c->writer)
		return 0;
	h = identify_vdso(c, rename_jitdump(c, record));
	note_object(c, h);
	if (c->live)
		keep_live(c, h);
	ret = pd_write(c->writer, h, h == record ? len : h->size);
	if (ret < 0 && !c->emit_error)
		c->emit_error = ret;
	return ret;
}

/* Why synthesizing the records of `pid` failed: writing perf.data, or
 * reading /proc/PID (told apart so that the message names the file that
 * failed, e.g. /proc/1/maps when the process denies ptrace access). */
static void explain_synth_error(const struct pc_collector *c, pid_t pid, int err, char *why,
				size_t why_len)
{
	static const char *const files[] = { "", "/task", "/maps" };
	char path[64];

	if (c->emit_error) {
		snprintf(why, why_len, "cannot write the process records to perf.data: %s",
			 strerror(-c->emit_error));
		return;
	}
	/* synth_process reads these, in this order; find the one refused. */
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int fd;

		snprintf(path, sizeof(path), "/proc/%d%s", (int)pid, files[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			break;
		}
		close(fd);
		path[0] = '\0';
	}
	if (!path[0])
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	snprintf(why, why_len, "cannot read %s, the mappings of process %d: %s%s", path, (int)pid,
		 strerror(-err), err == -EACCES || err == -EPERM
		 ? " (it needs ptrace access to the process: CAP_SYS_PTRACE, and no sandbox or "
		   "security module of the process refusing it)" : "");
}

static void note_pid(struct pc_collector *c, pid_t pid, int exec)
{
	int added = tr_pid_set_add(&c->seen, pid);

	if (c->pid_fn && pid > 0 && (added > 0 || exec))
		c->pid_fn(c->arg, pid, exec);
}

/* MMAP2 of an executable file (not anonymous memory, not the vDSO). */
static int mmap2_maps_exec_file(const struct pc_collector *c, const struct perf_event_header *h)
{
	const char *name = mmap2_name(c, h);
	uint32_t prot;

	if (!name)
		return 0;
	memcpy(&prot, (const char *)h + MMAP2_PROT_OFF, sizeof(prot));
	return (prot & PROT_EXEC) && name[0] == '/' && strncmp(name, "//anon", 6) != 0;
}

static void count_sample(struct pc_collector *c, const struct perf_event_header *h)
{
	const uint32_t *u32 = (const uint32_t *)(h + 1);

	c->counts.samples++;
	/* id, ip, then pid/tid */
	if (h->size >= sizeof(*h) + 24)
		note_pid(c, (pid_t)u32[4], 0);
	/* ... then time (every event has PERF_SAMPLE_TIME) */
	if (h->size >= sizeof(*h) + 32) {
		uint64_t t = ((const uint64_t *)(h + 1))[3];

		if (!c->counts.first_sample_ns || t < c->counts.first_sample_ns)
			c->counts.first_sample_ns = t;
		if (t > c->counts.last_sample_ns)
			c->counts.last_sample_ns = t;
	}
}

static void note_comm(struct pc_collector *c, const struct perf_event_header *h)
{
	const uint32_t *u32 = (const uint32_t *)(h + 1);

	note_pid(c, (pid_t)u32[0], !!(h->misc & PERF_RECORD_MISC_COMM_EXEC));
	/* The launched command's exec enabled the events: its time,
	 * from the sample_id trailer (tid, then time), opens the window. */
	if (!c->counts.enabled_ns && c->target.command_pid > 0 &&
	    (pid_t)u32[0] == c->target.command_pid && (h->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		size_t tr = trailer_size(c->ev[0].attr.sample_type);

		if (h->size >= sizeof(*h) + tr && tr >= 16)
			memcpy(&c->counts.enabled_ns, (const char *)h + h->size - tr + 8, 8);
	}
}

/* Writes a record from the rings to perf.data (and tells the observer). */
static void write_record(struct pc_collector *c, const struct perf_event_header *h)
{
	int ret;

	h = identify_vdso(c, rename_jitdump(c, h));
	note_object(c, h);
	if (c->live && h->type != PERF_RECORD_SAMPLE)
		keep_live(c, h);
	ret = pd_write(c->writer, h, h->size);
	if (ret < 0 && !c->write_error) {
		c->write_error = ret;
		c->log_fn(c->arg, 1, "cannot write perf.data: %s (samples from now on are lost)",
			  strerror(-ret));
	}
	if (ret == 0 && c->cfg.observer.record)
		c->cfg.observer.record(c->cfg.observer.arg, pd_data_size(c->writer) - h->size, h);
}

static int on_record(void *arg, const struct perf_event_header *h)
{
	struct pc_collector *c = arg;
	const uint32_t *u32 = (const uint32_t *)(h + 1);

	switch (h->type) {
	case PERF_RECORD_SAMPLE: count_sample(c, h); break;
	case PERF_RECORD_LOST:
		/* struct { header; u64 id, lost; } */
		c->counts.lost += ((const uint64_t *)(h + 1))[1];
		c->counts.lost_records++;
		/* Side-band records may be among the lost: the next chunk
		 * describes the processes from /proc. */
		c->rescan = 1;
		break;
	case PERF_RECORD_THROTTLE:
		c->counts.throttles++;
		break;
	case PERF_RECORD_COMM: note_comm(c, h); break;
	case PERF_RECORD_FORK:
		note_pid(c, (pid_t)u32[0], 0);
		break;
	case PERF_RECORD_MMAP2:
		note_pid(c, (pid_t)u32[0], 0);
		/* A library mapped late (dlopen) must be read while its process
		 * is alive: the process is remembered again. */
		if (c->pid_fn && u32[0] > 0 && mmap2_maps_exec_file(c, h))
			c->pid_fn(c->arg, (pid_t)u32[0], 0);
		break;
	default:
		break;
	}
	c->counts.records++;
	c->counts.bytes += h->size;
	write_record(c, h);
	return 0;
}

static uint64_t monotonic_ns(void);

/* A record of the live side-band, as it was written before. */
static int write_live(void *arg, const void *record, size_t len)
{
	struct pc_collector *c = arg;
	int ret = pd_write(c->writer, record, len);

	if (ret < 0 && !c->emit_error)
		c->emit_error = ret;
	return ret;
}

static int create_data_file(struct pc_collector *c, const char *data_path, char *why,
			    size_t why_len);

/* The kernel's map, into the live side-band only (its replay writes it). */
static int keep_kernel_map(void *arg, const void *record, size_t len)
{
	(void)len;
	keep_live(arg, record);
	return 0;
}

/* The side-band a chunk after the first starts with: what is alive now,
 * described as the recording's start describes it, so that a window cut
 * from this chunk on names every process and mapping without the chunks
 * removed before it. */
static int synth_chunk(struct pc_collector *c)
{
	const struct pc_opened *tracking = &c->ev[0];
	struct synth_id sid = {
		.sample_type = tracking->attr.sample_type,
		.id = tracking->ids[0],
		.data_mmaps = tracking->attr.mmap_data,
	};
	int ret;

	/* What the recording said of the kernel and the processes so far,
	 * without /proc.  The kernel's map is read once: it does not move. */
	if (c->live && !c->rescan) {
		if (!lsb_has_kernel(c->live)) {
			ret = synth_kernel_mmap(&sid, &c->ktext, keep_kernel_map, c);
			if (ret < 0)
				return ret;
		}
		return lsb_replay(c->live, write_live, c);
	}
	/* /proc, and the state rebuilt from what it says (emit). */
	if (c->live)
		lsb_reset(c->live);
	ret = synth_kernel_mmap(&sid, &c->ktext, emit, c);
	if (ret < 0)
		return ret;
	if (c->target.system_wide) {
		ret = synth_all_processes(&sid, emit, c);
	} else {
		/* The targets, and every process they started that the recording saw. */
		for (size_t i = 0; i < c->seen.n; i++) {
			ret = synth_process(c->seen.pids[i], &sid, emit, c);
			if (ret < 0 && ret != -ESRCH && c->emit_error)
				return c->emit_error;
		}
		ret = 0;
	}
	if (ret == 0 && c->live)
		c->rescan = !lsb_ok(c->live);
	return ret;
}

static int chunk_path(const struct pc_collector *c, unsigned seq, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s.%06u", c->chunk_prefix, seq);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int add_chunk(struct pc_collector *c, const char *path, uint64_t start_ns)
{
	struct pc_chunk *grown = realloc(c->chunks, (c->n_chunks + 1) * sizeof(*grown));
	char *copy = strdup(path);

	if (grown)
		c->chunks = grown;
	if (!grown || !copy) {
		free(copy);
		return -ENOMEM;
	}
	c->chunks[c->n_chunks++] = (struct pc_chunk){ copy, start_ns, 0, pd_data_size(c->writer) };
	return 0;
}

/* Flight mode, after a pass (c->lock held): a chunk chunk_ns old is closed
 * and a new one begun; chunks that ended more than keep_ns ago go.  A new
 * chunk that cannot be made leaves the old one growing (said once). */
static void rotate(struct pc_collector *c)
{
	struct pd_writer *old = c->writer;
	uint64_t now = monotonic_ns();
	char path[PATH_MAX], why[512];
	int ret;

	if (!c->n_chunks || now - c->chunks[c->n_chunks - 1].start_ns < c->cfg.chunk_ns)
		return;
	c->writer = NULL;
	c->emit_error = 0;
	ret = chunk_path(c, c->chunk_seq + 1, path, sizeof(path));
	if (ret == 0)
		ret = create_data_file(c, path, why, sizeof(why));
	if (ret == 0)
		ret = synth_chunk(c);
	if (ret == 0)
		ret = pd_sync(c->writer);
	if (ret == 0)
		ret = add_chunk(c, path, now);
	if (ret < 0) {
		if (c->writer) {
			pd_abort(c->writer);
			unlink(path);
		}
		c->writer = old;
		if (!c->rotate_failed++)
			c->log_fn(c->arg, 1, "flight mode: cannot begin a new perf.data chunk: %s "
				  "(the current one grows until one can be)", strerror(-ret));
		return;
	}
	c->chunk_seq++;
	/* The last round synced it: the file is whole up to here. */
	pd_abort(old);
	c->chunks[c->n_chunks - 2].end_ns = now;
	while (c->n_chunks > 2 && c->chunks[0].end_ns + c->cfg.keep_ns < now) {
		if (unlink(c->chunks[0].path) < 0)
			c->log_fn(c->arg, 0, "flight mode: cannot remove %s: %s", c->chunks[0].path,
				  strerror(errno));
		free(c->chunks[0].path);
		memmove(c->chunks, c->chunks + 1, (c->n_chunks - 1) * sizeof(*c->chunks));
		c->n_chunks--;
	}
}

/* A record's time is read a moment before the kernel writes it to the
 * ring: one timed this much before a pass began may still come after
 * the pass read its ring. */
#define WRITE_LATENCY_NS 20000000ull

/* Drains every ring once; a FINISHED_ROUND after a pass tells perf that
 * everything before it may be sorted and processed. */
static long drain_all(struct pc_collector *c)
{
	long total = 0;
	uint64_t began = monotonic_ns();

	pthread_mutex_lock(&c->lock);
	for (size_t r = 0; r < c->n_cpus; r++) {
		long n = tr_ring_drain(&c->rings[r].ring, on_record, c);

		if (n > 0)
			total += n;
	}
	/* The round marker also rewrites the header's data size: perf.data
	 * on disk stays readable up to here if tracerig is killed. */
	if (total > 0 && !c->write_error) {
		int ret = pd_write_finished_round(c->writer);

		if (ret < 0) {
			c->write_error = ret;
			c->log_fn(c->arg, 1, "cannot write perf.data: %s (samples from now on "
				  "are lost)", strerror(-ret));
		}
	}
	/* Only while nothing drained waits in the writer's buffer. */
	if (!c->write_error && !c->cfg.chunk_ns &&
	    pd_data_on_disk(c->writer) == pd_data_size(c->writer)) {
		c->counts.data_bytes = pd_data_size(c->writer);
		if (began > WRITE_LATENCY_NS)
			c->counts.data_complete_ns = began - WRITE_LATENCY_NS;
	}
	if (total > 0 && c->cfg.observer.pass)
		c->cfg.observer.pass(c->cfg.observer.arg);
	if (total > 0 && c->pass_fd >= 0) {
		uint64_t one = 1;

		if (write(c->pass_fd, &one, sizeof(one)) < 0) {
			/* full counter: the reader is woken already */
		}
	}
	if (c->cfg.chunk_ns && !c->write_error)
		rotate(c);
	pthread_mutex_unlock(&c->lock);
	return total;
}

static void *reader_thread(void *arg)
{
	struct pc_collector *c = arg;
	struct pollfd *pfd = calloc(c->n_cpus + 1, sizeof(*pfd));
	size_t *which = calloc(c->n_cpus + 1, sizeof(*which));

	if (!pfd || !which) {
		c->log_fn(c->arg, 1, "out of memory in the reader thread: draining every %d ms",
			  c->poll_ms);
		while (!atomic_load(&c->stopping)) {
			drain_all(c);
			usleep((useconds_t)c->poll_ms * 1000);
		}
		goto out;
	}
	while (!atomic_load(&c->stopping)) {
		size_t n = 0;

		pfd[n].fd = c->wake_fd;
		pfd[n].events = POLLIN;
		which[n++] = (size_t)-1;
		for (size_t r = 0; r < c->n_cpus; r++) {
			if (!c->rings[r].ring.base || c->rings[r].hup)
				continue;
			pfd[n].fd = c->rings[r].ring.fd;
			pfd[n].events = POLLIN;
			which[n++] = r;
		}
		{
			int ret = poll(pfd, n, c->poll_ms);

			if (ret < 0 && errno != EINTR) {
				c->log_fn(c->arg, 1, "poll on the ring buffers failed: %s",
					  strerror(errno));
				break;
			}
			for (size_t i = 1; ret > 0 && i < n; i++) {
				/* A per-task ring hangs up when its tasks are
				 * gone: keep draining, stop polling it. */
				if (pfd[i].revents & (POLLHUP | POLLERR))
					c->rings[which[i]].hup = 1;
			}
			if (ret > 0) {
				pthread_mutex_lock(&c->lock);
				c->counts.wakeups++;
				pthread_mutex_unlock(&c->lock);
			}
		}
		drain_all(c);
	}
out:
	free(pfd);
	free(which);
	return NULL;
}

/* ---- the public side ---- */

/* The tracepoints' formats go to perf.data before the first record, so
 * that perf decodes a file left unfinished (tracerig killed) too.  Not
 * fatal: pc_finish gets them again, and perf.data.txt needs none. */
static void add_tracing_data(struct pc_collector *c)
{
	const char *sys[64], *name[64];
	size_t n = 0, len = 0;
	char *blob = NULL;
	int ret;

	for (size_t i = 0; i < c->n_ev && n < 64; i++) {
		if (c->ev[i].spec.kind != EV_TRACEPOINT)
			continue;
		sys[n] = c->ev[i].spec.sys;
		name[n++] = c->ev[i].spec.tp;
	}
	if (!n)
		return;
	ret = td_build(sys, name, n, &blob, &len);
	if (ret == 0)
		ret = pd_set_tracing_data(c->writer, blob, len);
	free(blob);
	if (ret < 0)
		c->log_fn(c->arg, 0, "cannot describe the tracepoints' formats at the start of "
			  "perf.data (%s): if tracerig dies before the end, perf will not read it",
			  strerror(-ret));
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The collector with its rings, event slots and cgroup, nothing opened
 * yet.  Whatever fails, *out is set for pc_close. */
static int collector_new(const struct pc_config *cfg, const struct pc_target *t,
			 pc_pid_fn pid_fn, pc_log_fn log_fn, void *arg,
			 struct pc_collector **out, char *why, size_t why_len)
{
	struct pc_collector *c = calloc(1, sizeof(*c));
	int ret;

	*out = c;
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->ktext = (struct synth_kernel_text){ cfg->kernel_text, cfg->kernel_etext };
	c->target = *t;
	c->cgroup_fd = -1;
	if (synth_vdso_identity(c->vdso_bid, &c->vdso_bid_len, &c->vdso_len) < 0)
		c->vdso_bid_len = 0; /* [vdso] stays without an identity, as in perf */
	c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->pass_fd = -1;
	/* Every wakeup costs a busy machine tens of microseconds (a thread
	 * cold in its caches preempting the workload): the watermark drains
	 * a fast recording, this a slow one; a flight chunk is still cut
	 * within a quarter of its length. */
	c->poll_ms = 1000;
	if (cfg->chunk_ns && cfg->chunk_ns / 4000000 < (uint64_t)c->poll_ms)
		c->poll_ms = cfg->chunk_ns / 4000000 > 10 ? (int)(cfg->chunk_ns / 4000000) : 10;
	c->pid_fn = pid_fn;
	c->log_fn = log_fn;
	c->arg = arg;
	atomic_init(&c->stopping, 0);
	pthread_mutex_init(&c->lock, NULL);

	if (c->wake_fd < 0) {
		ret = -errno;
		snprintf(why, why_len, "cannot create an eventfd: %s", strerror(-ret));
		return ret;
	}
	ret = tr_online_cpus(&c->cpus, &c->n_cpus);
	if (ret < 0) {
		snprintf(why, why_len, "cannot read the online CPUs: %s", strerror(-ret));
		return ret;
	}
	c->rings = calloc(c->n_cpus, sizeof(*c->rings));
	c->ev = calloc(cfg->n_events, sizeof(*c->ev));
	c->fds = calloc(cfg->n_events, sizeof(*c->fds));
	if (!c->rings || !c->ev || !c->fds) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	for (size_t r = 0; r < c->n_cpus; r++) {
		c->rings[r].cpu = c->cpus[r];
		c->rings[r].ring.fd = -1;
	}
	if (t->cgroup && !t->n_pids && t->command_pid <= 0) {
		c->target.system_wide = 1;
		c->cgroup_fd = open(t->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (c->cgroup_fd < 0) {
			ret = -errno;
			snprintf(why, why_len, "cannot open the cgroup %s: %s (give a directory under "
				 "/sys/fs/cgroup)", t->cgroup, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static int hw_not_counted(const struct pc_opened *ev, int ret)
{
	return ev->spec.kind == EV_HARDWARE &&
	       (ret == -ENOENT || ret == -EOPNOTSUPP || ret == -ENODEV);
}

/* Adds to `why` (open_event's message) what to do about `ret`. */
static void explain_open_error(const struct pc_opened *ev, int ret, char *why, size_t why_len)
{
	if (hw_not_counted(ev, ret)) {
		snprintf(why, why_len, "hardware event %s is not counted by this machine's PMU (a "
			 "VM?): use cpu-clock, or set hardware_fallback = cpu-clock or skip",
			 ev->spec.name);
	} else if (ret == -EACCES || ret == -EPERM) {
		char advice[256];

		pc_permission_advice(advice, sizeof(advice));
		snprintf(why + strlen(why), why_len - strlen(why), " (%s)", advice);
	} else if (ret == -EOVERFLOW && ev->attr.sample_max_stack) {
		unsigned long long limit = 0;
		FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");

		if (f) {
			if (fscanf(f, "%llu", &limit) != 1)
				limit = 0;
			fclose(f);
		}
		snprintf(why + strlen(why), why_len - strlen(why), " (max_stack = %u is above "
			 "kernel.perf_event_max_stack = %llu: lower it, or raise that with sysctl)",
			 (unsigned)ev->attr.sample_max_stack, limit);
	} else if (ret == -EINVAL && ev->attr.freq) {
		snprintf(why + strlen(why), why_len - strlen(why), " (is frequency above "
			 "kernel.perf_event_max_sample_rate = %llu?)",
			 (unsigned long long)pc_max_sample_rate());
	}
}

/* Opens configured event `i` into the next slot, as cpu-clock instead or
 * not at all when the PMU lacks a hardware event and hardware_fallback
 * says so.  1 when opened, 0 when left out, or a negative errno. */
static int open_one(struct pc_collector *c, size_t i, char *why, size_t why_len)
{
	struct pc_opened *ev = &c->ev[c->n_ev];
	/* The first event opened also tracks mmap, comm and task, as in perf record. */
	int tracks = c->n_ev == 0;
	int ret;

	ev->spec = c->cfg.events[i];
	make_attr(c, &ev->spec, tracks, &ev->attr);
	ret = open_event(c, c->n_ev, why, why_len);
	if (ret < 0 && hw_not_counted(ev, ret) && c->cfg.hw_fallback != PC_HW_FAIL) {
		close_event_fds(c, c->n_ev);
		c->log_fn(c->arg, 0, "hardware event %s is not counted by this machine's PMU (a "
			  "VM?): %s", ev->spec.name, c->cfg.hw_fallback == PC_HW_SKIP
			  ? "left out (hardware_fallback = skip)"
			  : "sampling cpu-clock instead (hardware_fallback = cpu-clock)");
		if (c->cfg.hw_fallback == PC_HW_SKIP)
			return 0;
		memset(&ev->spec, 0, sizeof(ev->spec));
		snprintf(ev->spec.name, sizeof(ev->spec.name), "cpu-clock");
		ev->spec.kind = EV_SOFTWARE;
		ev->spec.type = PERF_TYPE_SOFTWARE;
		ev->spec.config = PERF_COUNT_SW_CPU_CLOCK;
		make_attr(c, &ev->spec, tracks, &ev->attr);
		ret = open_event(c, c->n_ev, why, why_len);
	}
	if (ret < 0) {
		explain_open_error(ev, ret, why, why_len);
		close_event_fds(c, c->n_ev);
		return ret;
	}
	c->n_ev++;
	return 1;
}

static int open_events(struct pc_collector *c, char *why, size_t why_len)
{
	for (size_t i = 0; i < c->cfg.n_events; i++) {
		int ret = open_one(c, i, why, why_len);

		if (ret < 0)
			return ret;
	}
	if (!c->n_ev) {
		snprintf(why, why_len, "no event could be opened (every hardware event was left "
			 "out): add cpu-clock to events");
		return -ENOENT;
	}
	return 0;
}

/* perf.data with every event's attr and ids (and the tracepoints'
 * formats) before the first record. */
static int create_data_file(struct pc_collector *c, const char *data_path, char *why,
			    size_t why_len)
{
	int ret = pd_create(data_path, &c->writer);

	if (ret < 0) {
		snprintf(why, why_len, "cannot create %s: %s", data_path, strerror(-ret));
		return ret;
	}
	for (size_t i = 0; i < c->n_ev; i++) {
		ret = pd_add_event(c->writer, &c->ev[i].attr, c->ev[i].spec.name, c->ev[i].ids,
				   c->ev[i].n_ids);
		if (ret < 0) {
			snprintf(why, why_len, "cannot describe %s in perf.data: %s",
				 c->ev[i].spec.name, strerror(-ret));
			return ret;
		}
	}
	add_tracing_data(c);
	return 0;
}

/* Records for what existed before the start: the kernel map, and the
 * processes that will be sampled (all of them when system-wide).  Without
 * a file (only trying) the targets' processes are still read, so that a
 * process we may not read fails here. */
static int synth_existing(struct pc_collector *c, char *why, size_t why_len)
{
	const struct pc_opened *tracking = &c->ev[0];
	struct synth_id sid = {
		.sample_type = tracking->attr.sample_type,
		.id = tracking->ids[0],
		.data_mmaps = tracking->attr.mmap_data,
	};
	int ret = 0;

	if (c->writer) {
		ret = synth_kernel_mmap(&sid, &c->ktext, emit, c);
		if (ret < 0)
			c->log_fn(c->arg, 0, "cannot describe the kernel map (%s): kernel frames "
				  "will not resolve in perf report", strerror(-ret));
	}
	if (c->target.system_wide) {
		/* Fails only when writing: nothing to try without a file. */
		ret = c->writer ? synth_all_processes(&sid, emit, c) : 0;
		if (ret < 0)
			snprintf(why, why_len, "cannot write the process records to perf.data: %s",
				 strerror(-ret));
		return ret;
	}
	ret = 0;
	for (size_t i = 0; i < c->target.n_pids && ret >= 0; i++) {
		ret = synth_process(c->target.pids[i], &sid, emit, c);
		if (ret == -ESRCH)
			ret = 0;
		else if (ret < 0)
			explain_synth_error(c, c->target.pids[i], ret, why, why_len);
	}
	return ret;
}

int pc_open(const struct pc_config *cfg, const struct pc_target *t, const char *data_path,
	    pc_pid_fn pid_fn, pc_log_fn log_fn, void *arg, struct pc_collector **out,
	    char *why, size_t why_len)
{
	struct pc_collector *c;
	int ret;

	ret = collector_new(cfg, t, pid_fn, log_fn, arg, &c, why, why_len);
	if (ret < 0)
		goto fail;
	ret = open_events(c, why, why_len);
	if (ret < 0)
		goto fail;
	/* Without data_path only trying: no file. */
	if (data_path && cfg->chunk_ns) {
		char path[PATH_MAX];

		c->chunk_prefix = strdup(data_path);
		c->chunk_seq = 1;
		/* The live side-band, fed from the records below on.  The
		 * second chunk still reads /proc once, and the state is
		 * rebuilt from that: a process started between this
		 * description and the events' enabling (pc_start) is in no
		 * record.  Without a state every chunk reads /proc. */
		c->live = lsb_new(c->ev[0].attr.sample_type);
		c->rescan = 1;
		ret = c->chunk_prefix ? chunk_path(c, c->chunk_seq, path, sizeof(path)) : -ENOMEM;
		if (ret == 0)
			ret = create_data_file(c, path, why, why_len);
		else
			snprintf(why, why_len, "cannot name the perf.data chunks: %s", strerror(-ret));
		if (ret < 0)
			goto fail;
	} else if (data_path) {
		ret = create_data_file(c, data_path, why, why_len);
		if (ret < 0)
			goto fail;
	}
	ret = synth_existing(c, why, why_len);
	if (ret < 0)
		goto fail;
	/* perf.data on disk is readable from here on (pd_sync). */
	ret = c->writer ? pd_sync(c->writer) : 0;
	if (ret < 0) {
		snprintf(why, why_len, "cannot write perf.data: %s", strerror(-ret));
		goto fail;
	}
	if (c->chunk_prefix) {
		char path[PATH_MAX];

		ret = chunk_path(c, c->chunk_seq, path, sizeof(path));
		if (ret == 0)
			ret = add_chunk(c, path, monotonic_ns());
		if (ret < 0) {
			snprintf(why, why_len, "out of memory");
			goto fail;
		}
	}
	*out = c;
	return 0;
fail:
	pc_close(c);
	return ret;
}

int pc_start(struct pc_collector *c, char *why, size_t why_len)
{
	int ret;

	/* Only the launched command: its exec enables the events (and its
	 * COMM record gives the time, on_record). */
	if (c->target.command_pid > 0 && !c->target.n_pids)
		goto thread;
	pthread_mutex_lock(&c->lock);
	c->counts.enabled_ns = monotonic_ns();
	pthread_mutex_unlock(&c->lock);
	for (size_t i = 0; i < c->n_ev; i++) {
		for (size_t k = 0; k < c->ev[i].n_ids; k++) {
			if (ioctl(c->fds[i][k], PERF_EVENT_IOC_ENABLE, 0) < 0) {
				ret = -errno;
				snprintf(why, why_len, "cannot enable %s: %s", c->ev[i].spec.name,
					 strerror(-ret));
				return ret;
			}
		}
	}
thread:
	ret = pthread_create(&c->thread, NULL, reader_thread, c);
	if (ret) {
		snprintf(why, why_len, "cannot start the reader thread: %s", strerror(ret));
		return -ret;
	}
	(void)pthread_setname_np(c->thread, "tr-perf-rings");
	c->thread_started = 1;
	return 0;
}

int pc_stop(struct pc_collector *c)
{
	uint64_t now;

	for (size_t i = 0; i < c->n_ev; i++)
		for (size_t k = 0; k < c->ev[i].n_ids; k++)
			(void)ioctl(c->fds[i][k], PERF_EVENT_IOC_DISABLE, 0);
	now = monotonic_ns();
	pthread_mutex_lock(&c->lock);
	if (!c->counts.disabled_ns)
		c->counts.disabled_ns = now;
	pthread_mutex_unlock(&c->lock);
	if (c->thread_started) {
		uint64_t one = 1;

		atomic_store(&c->stopping, 1);
		if (write(c->wake_fd, &one, sizeof(one)) < 0) {
			/* the thread then ends at its poll timeout */
		}
		pthread_join(c->thread, NULL);
		c->thread_started = 0;
	}
	drain_all(c);
	return c->write_error;
}

void pc_notify_passes(struct pc_collector *c, int fd)
{
	pthread_mutex_lock(&c->lock);
	c->pass_fd = fd;
	pthread_mutex_unlock(&c->lock);
}

void pc_counts(struct pc_collector *c, struct pc_counts *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->counts;
	pthread_mutex_unlock(&c->lock);
	/* The exec enables the events a moment before its COMM record is
	 * written: a sample in between is the window's true start. */
	if (out->first_sample_ns && out->first_sample_ns < out->enabled_ns)
		out->enabled_ns = out->first_sample_ns;
}

const struct pc_opened *pc_events(const struct pc_collector *c, size_t *n)
{
	*n = c->n_ev;
	return c->ev;
}

/* Finishes `w` with HEADER_BUILD_ID: the kernel, then every object (the
 * vDSO among them) whose MMAP2 record carried a build id. */
static int finish_with_ids(struct pd_writer *w, const struct pd_build_id *objects, size_t n_objects,
			   struct pd_features *f)
{
	struct pd_build_id *ids = calloc(n_objects + 1, sizeof(*ids));
	size_t kernel_len = 0, n = 0;
	unsigned char kernel_bid[20];
	int ret;

	if (ids && synth_kernel_build_id(kernel_bid, &kernel_len) == 0) {
		ids[n] = (struct pd_build_id){ .pid = -1, .filename = "[kernel.kallsyms]",
					       .size = (uint8_t)kernel_len };
		memcpy(ids[n++].id, kernel_bid, kernel_len);
	}
	for (size_t i = 0; ids && i < n_objects; i++)
		ids[n++] = objects[i];
	f->build_ids = ids;
	f->n_build_ids = n;
	ret = pd_finish(w, f);
	free(ids);
	return ret;
}

int pc_finish(struct pc_collector *c, struct pd_features *f)
{
	struct pd_writer *w = c->writer;
	struct pd_build_id *objects;
	int ret;

	c->writer = NULL;
	if (!w)
		return -EBADF;
	objects = calloc(c->n_objects + 1, sizeof(*objects));
	for (size_t i = 0; objects && i < c->n_objects; i++)
		objects[i] = c->objects[i].id;
	ret = finish_with_ids(w, objects, objects ? c->n_objects : 0, f);
	free(objects);
	return ret;
}

/* ---- flight mode: a window of the chunks ---- */

static int open_window_chunk(const struct pc_chunk *ch, int first, struct pc_window_chunk *out)
{
	struct pd_file_header hdr;
	int fd = open(ch->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) || hdr.magic != PD_MAGIC) {
		close(fd);
		return -EIO;
	}
	/* Only the first chunk's side-band opens the window: the others'
	 * would repeat it, out of time order. */
	out->fd = fd;
	out->begin = hdr.data.offset + (first ? 0 : ch->synth_end);
	out->end = hdr.data.offset + hdr.data.size;
	if (out->begin > out->end)
		out->begin = out->end;
	return 0;
}

int pc_window_open(struct pc_collector *c, uint64_t from_ns, struct pc_window *w)
{
	int ret = 0;

	memset(w, 0, sizeof(*w));
	/* What the rings hold now belongs in the window. */
	drain_all(c);
	pthread_mutex_lock(&c->lock);
	w->chunks = calloc(c->n_chunks + 1, sizeof(*w->chunks));
	w->ids = calloc(c->n_objects + 1, sizeof(*w->ids));
	if (!w->chunks || !w->ids)
		ret = -ENOMEM;
	for (size_t i = 0; ret == 0 && i < c->n_chunks; i++) {
		if (c->chunks[i].end_ns && c->chunks[i].end_ns < from_ns)
			continue;
		ret = open_window_chunk(&c->chunks[i], w->n == 0, &w->chunks[w->n]);
		if (ret == 0)
			w->n++;
	}
	for (size_t i = 0; ret == 0 && i < c->n_objects; i++) {
		w->ids[i] = c->objects[i].id;
		w->ids[i].filename = strdup(c->objects[i].filename);
		if (!w->ids[i].filename)
			ret = -ENOMEM;
		else
			w->n_ids++;
	}
	pthread_mutex_unlock(&c->lock);
	if (ret < 0)
		pc_window_close(w);
	return ret;
}

int pc_window_finish(const struct pc_window *w, struct pd_writer *writer, struct pd_features *f)
{
	return finish_with_ids(writer, w->ids, w->n_ids, f);
}

void pc_window_close(struct pc_window *w)
{
	for (size_t i = 0; i < w->n; i++)
		close(w->chunks[i].fd);
	for (size_t i = 0; i < w->n_ids; i++)
		free((char *)w->ids[i].filename);
	free(w->chunks);
	free(w->ids);
	memset(w, 0, sizeof(*w));
}

void pc_close(struct pc_collector *c)
{
	if (!c)
		return;
	if (c->thread_started)
		pc_stop(c);
	for (size_t i = 0; c->fds && i < c->n_ev; i++)
		close_event_fds(c, i);
	for (size_t r = 0; c->rings && r < c->n_cpus; r++)
		tr_ring_unmap(&c->rings[r].ring);
	if (c->writer)
		pd_abort(c->writer);
	if (c->cgroup_fd >= 0)
		close(c->cgroup_fd);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	tr_pid_set_free(&c->seen);
	lsb_free(c->live);
	free(c->fds);
	free(c->ev);
	free(c->rings);
	free(c->cpus);
	pthread_mutex_destroy(&c->lock);
	for (size_t i = 0; i < c->n_objects; i++)
		free(c->objects[i].filename);
	free(c->objects);
	for (size_t i = 0; i < c->n_chunks; i++)
		free(c->chunks[i].path);
	free(c->chunks);
	free(c->chunk_prefix);
	free(c);
}

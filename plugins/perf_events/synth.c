/* Synthesized records, shaped the way `perf record` writes them
 * (tools/perf/util/synthetic-events.c) so that perf treats them alike:
 * COMM per thread, MMAP2 per executable mapping, one kernel MMAP. */
#include "config.h"

#include "synth.h"
#include "lib/buildid.h"
#include "lib/kallsyms.h"
#include "lib/untrusted.h"
#include "lib/vec.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)
/* Largest trailer: tid, time, id, stream_id, cpu, identifier. */
#define TRAILER_MAX (6 * sizeof(uint64_t))
#define RECORD_MAX (sizeof(struct perf_event_header) + 64 + PATH_MAX + TRAILER_MAX)

/* What perf calls "//anon": executable memory with no file (JIT code);
 * perf then looks for /tmp/perf-PID.map. */
static const char anon_name[] = "//anon";

struct bid_cache_entry {
	unsigned int maj, min;
	uint64_t ino;
	int err;
	size_t size;
	uint8_t id[TR_BUILDID_PERF_MAX];
};

/* Build ids by (device, inode): every process maps the same libc. */
struct bid_cache {
	struct bid_cache_entry *v;
	size_t n, cap;
};

struct synth_ctx {
	const struct synth_id *sid;
	synth_emit_fn emit;
	void *arg;
	int emit_err;            /* set when emit failed: stop everything */
	struct bid_cache cache;
	uint8_t rec[RECORD_MAX] __attribute__((aligned(8)));
};

static size_t put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
	return sizeof(v);
}

static size_t put_u32x2(uint8_t *p, uint32_t a, uint32_t b)
{
	memcpy(p, &a, sizeof(a));
	memcpy(p + 4, &b, sizeof(b));
	return 8;
}

/* The sample_id trailer, in the order perf_evsel__parse_id_sample reads
 * it.  Time 0 sorts synthesized records before everything the kernel wrote;
 * cpu 0 is what perf itself puts there. */
static size_t put_trailer(uint8_t *p, const struct synth_id *sid, uint32_t pid, uint32_t tid)
{
	uint64_t t = sid->sample_type;
	size_t n = 0;

	if (t & PERF_SAMPLE_TID)
		n += put_u32x2(p + n, pid, tid);
	if (t & PERF_SAMPLE_TIME)
		n += put_u64(p + n, 0);
	if (t & PERF_SAMPLE_ID)
		n += put_u64(p + n, sid->id);
	if (t & PERF_SAMPLE_STREAM_ID)
		n += put_u64(p + n, sid->id);
	if (t & PERF_SAMPLE_CPU)
		n += put_u32x2(p + n, 0, 0);
	if (t & PERF_SAMPLE_IDENTIFIER)
		n += put_u64(p + n, sid->id);
	return n;
}

/* Copies `s` NUL-padded to 8 bytes; returns the bytes used. */
static size_t put_string(uint8_t *p, const char *s, size_t max)
{
	size_t len = strnlen(s, max - 1), padded = ALIGN8(len + 1);

	memcpy(p, s, len);
	memset(p + len, 0, padded - len);
	return padded;
}

static int emit_record(struct synth_ctx *c, uint32_t type, uint16_t misc, size_t body_len,
		       uint32_t pid, uint32_t tid)
{
	struct perf_event_header hdr;
	size_t len = sizeof(hdr) + body_len;
	int err;

	len += put_trailer(c->rec + len, c->sid, pid, tid);
	hdr.type = type;
	hdr.misc = misc;
	hdr.size = (uint16_t)len;
	memcpy(c->rec, &hdr, sizeof(hdr));
	err = c->emit(c->arg, c->rec, len);
	if (err) {
		c->emit_err = err < 0 ? err : -EIO;
		return c->emit_err;
	}
	return 0;
}

int synth_vdso_identity(unsigned char *bid, size_t *bid_len, uint64_t *map_len)
{
	const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	char line[256];
	FILE *maps;
	int ret = -ENOENT;

	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	for (unsigned i = 0; i < eh->e_phnum && ret < 0; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff + (size_t)i * eh->e_phentsize);

		if (ph->p_type == PT_NOTE)
			ret = tr_buildid_from_notes(base + ph->p_offset, ph->p_filesz, bid,
						    TR_BUILDID_PERF_MAX, bid_len);
	}
	if (ret < 0)
		return ret;
	/* Its size tells it from another ABI's vDSO (a 32-bit process's). */
	*map_len = 0;
	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return -errno;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long start, end;

		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &start, &end) == 2) {
			*map_len = end - start;
			break;
		}
	}
	fclose(maps);
	return *map_len ? 0 : -ENOENT;
}

int synth_kernel_build_id(unsigned char *bid, size_t *bid_len)
{
	return tr_buildid_read_kernel(bid, TR_BUILDID_PERF_MAX, bid_len);
}

static int find_text(void *arg, const struct tr_kallsyms_line *l)
{
	struct synth_kernel_text *kt = arg;

	if (l->name_len == 5 && memcmp(l->name, "_text", 5) == 0)
		kt->text = l->addr;
	else if (l->name_len == 6 && memcmp(l->name, "_etext", 6) == 0)
		kt->etext = l->addr;
	return kt->text && kt->etext;
}

int synth_kernel_mmap(const struct synth_id *sid, struct synth_kernel_text *known,
		      synth_emit_fn emit, void *arg)
{
	struct synth_ctx *c;
	struct synth_kernel_text kt = known ? *known : (struct synth_kernel_text){ 0 };
	uint64_t text, etext;
	unsigned char bid[20];
	size_t bid_len = 0;
	uint32_t record_type = PERF_RECORD_MMAP;
	uint16_t misc = PERF_RECORD_MISC_KERNEL;
	uint8_t *p;
	int err;

	if (!kt.text) {
		err = tr_kallsyms_each("/proc/kallsyms", find_text, &kt);
		if (err < 0)
			return err;
		if (known && kt.text)
			*known = kt;
	}
	text = kt.text;
	etext = kt.etext;
	/* An address of 0 means kptr_restrict hid it; perf would then
	 * relocate every kernel symbol wrongly, so refuse instead. */
	if (!text)
		return -EACCES;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sid = sid;
	c->emit = emit;
	c->arg = arg;
	p = c->rec + sizeof(struct perf_event_header);
	p += put_u32x2(p, (uint32_t)-1, 0);
	p += put_u64(p, text);                       /* start */
	/* perf 6.1 ends the kernel map at _etext, so that module addresses
	 * above it fall in their own maps, not in the kernel's. */
	p += put_u64(p, etext > text ? etext - text : ~0ULL - text);   /* len */
	p += put_u64(p, text);                       /* pgoff: the _text relocation */
	/* The running kernel's build id, so that the archive says which
	 * vmlinux its kernel frames belong to (what perf record
	 * --buildid-mmap writes: an MMAP2 with the build id in place of the
	 * device and inode). */
	if (synth_kernel_build_id(bid, &bid_len) == 0) {
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		memset(p, 0, 24);
		p[0] = (uint8_t)bid_len;
		memcpy(p + 4, bid, bid_len);
		p += 24;
		p += put_u32x2(p, PROT_READ | PROT_EXEC, MAP_PRIVATE);
		record_type = PERF_RECORD_MMAP2;
	}
	p += put_string(p, "[kernel.kallsyms]_text", PATH_MAX);
	err = emit_record(c, record_type, misc,
			  (size_t)(p - c->rec) - sizeof(struct perf_event_header), 0, 0);
	free(c);
	return err;
}

static int read_small(int dirfd, const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	return (int)n;
}

static int emit_comm(struct synth_ctx *c, int procfd, pid_t pid, pid_t tid)
{
	char path[64], comm[32];
	uint8_t *p;
	int n;

	snprintf(path, sizeof(path), "task/%d/comm", (int)tid);
	n = read_small(procfd, path, comm, sizeof(comm));
	if (n < 0)
		return n;
	/* The kernel ends the name with a newline; the name itself may hold
	 * one (perf.data keeps it as is, its readers sanitize). */
	if (n > 0 && comm[n - 1] == '\n')
		comm[n - 1] = '\0';

	p = c->rec + sizeof(struct perf_event_header);
	p += put_u32x2(p, (uint32_t)pid, (uint32_t)tid);
	p += put_string(p, comm, sizeof(comm));
	return emit_record(c, PERF_RECORD_COMM, 0,
			   (size_t)(p - c->rec) - sizeof(struct perf_event_header),
			   (uint32_t)pid, (uint32_t)tid);
}

/* Opens `path` as the process sees it, inside its root: no link is
 * followed, so a container cannot lead us to the host's files (the paths
 * in /proc/PID/maps are canonical: real objects have none). */
static int open_in_root(int rootfd, const char *path)
{
	struct tr_untrusted u;

	return tr_untrusted_openat(rootfd, path, TR_IN_ROOT, TR_OBJECT_MAX, &u);
}

static const struct bid_cache_entry *lookup_build_id(struct synth_ctx *c, int rootfd,
						     const char *path, unsigned int maj,
						     unsigned int min, uint64_t ino)
{
	struct bid_cache_entry *e;
	size_t i;
	int fd;

	for (i = 0; i < c->cache.n; i++) {
		e = &c->cache.v[i];
		if (e->ino == ino && e->maj == maj && e->min == min)
			return e;
	}
	e = tr_vec_grow(c->cache.v, &c->cache.cap, c->cache.n + 1, sizeof(*e), 64);
	if (!e)
		return NULL;
	c->cache.v = e;
	e = &c->cache.v[c->cache.n];
	memset(e, 0, sizeof(*e));
	e->maj = maj;
	e->min = min;
	e->ino = ino;
	fd = open_in_root(rootfd, path);
	if (fd < 0) {
		/* Not cached: another process may see the file where this
		 * one (say, in a dying mount namespace) cannot. */
		return NULL;
	}
	e->err = tr_buildid_read_fd(fd, e->id, sizeof(e->id), &e->size);
	close(fd);
	c->cache.n++;
	return e;
}

static uint32_t parse_prot(const char *perms)
{
	uint32_t prot = 0;

	if (perms[0] == 'r')
		prot |= PROT_READ;
	if (perms[1] == 'w')
		prot |= PROT_WRITE;
	if (perms[2] == 'x')
		prot |= PROT_EXEC;
	return prot;
}

/* One line of /proc/PID/maps; lines that are not executable are skipped
 * as perf does without --data, except readable files' with data_mmaps. */
static int emit_mmap2(struct synth_ctx *c, int rootfd, pid_t pid, char *line)
{
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	const struct bid_cache_entry *bid = NULL;
	char perms[5];
	const char *name;
	uint16_t misc = PERF_RECORD_MISC_USER;
	uint8_t *p;
	int n = 0;

	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
		   &maj, &min, &ino, &n) < 7 || n == 0)
		return 0;
	name = line + n;
	line[strcspn(line, "\n")] = '\0';
	if (perms[2] != 'x') {
		if (!c->sid->data_mmaps || perms[0] != 'r' || name[0] != '/')
			return 0;
		misc |= PERF_RECORD_MISC_MMAP_DATA;
	}
	if (!*name)
		name = anon_name;

	/* Only regular files have build ids; " (deleted)" ones are gone from
	 * the filesystem and a new file may sit at that path. */
	if (name[0] == '/' && ino && !strstr(name, " (deleted)"))
		bid = lookup_build_id(c, rootfd, name, maj, min, ino);

	p = c->rec + sizeof(struct perf_event_header);
	p += put_u32x2(p, (uint32_t)pid, (uint32_t)pid);
	p += put_u64(p, start);
	p += put_u64(p, end - start);
	p += put_u64(p, pgoff);
	if (bid && bid->err == 0) {
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		memset(p, 0, 24);
		p[0] = (uint8_t)bid->size;
		memcpy(p + 4, bid->id, bid->size);
		p += 24;
	} else {
		p += put_u32x2(p, maj, min);
		p += put_u64(p, ino);
		p += put_u64(p, 0);                  /* ino_generation: unknown */
	}
	p += put_u32x2(p, parse_prot(perms), perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE);
	p += put_string(p, name, PATH_MAX);
	return emit_record(c, PERF_RECORD_MMAP2, misc,
			   (size_t)(p - c->rec) - sizeof(struct perf_event_header),
			   (uint32_t)pid, (uint32_t)pid);
}

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* A COMM for each thread of the process. */
static int synth_threads(struct synth_ctx *c, int procfd, pid_t pid)
{
	int fd, err, n_comm = 0;
	struct dirent *de;
	DIR *tasks;

	fd = openat(procfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	tasks = fdopendir(fd);
	if (!tasks) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(tasks)) != NULL) {
		if (!is_number(de->d_name))
			continue;
		err = emit_comm(c, procfd, pid, (pid_t)atoi(de->d_name));
		if (c->emit_err)
			break;
		/* A thread that exited meanwhile is simply not there. */
		if (err == 0)
			n_comm++;
		err = 0;
	}
	closedir(tasks);
	if (c->emit_err)
		return c->emit_err;
	if (!n_comm)
		return -ESRCH;
	return 0;
}

/* An MMAP2 for each mapping of the process that perf would record. */
static int synth_maps(struct synth_ctx *c, int procfd, pid_t pid)
{
	char *line = NULL;
	size_t line_cap = 0;
	int rootfd, fd, err;
	FILE *maps = NULL;

	fd = openat(procfd, "maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(maps = fdopen(fd, "r"))) {
		err = errno == ENOENT ? -ESRCH : -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	rootfd = openat(procfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* Without the root (a zombie) mappings still go out, without ids. */
	while (getline(&line, &line_cap, maps) > 0) {
		err = emit_mmap2(c, rootfd, pid, line);
		if (err)
			goto out;
	}
	/* Reading maps of a process that exits midway fails with ESRCH or
	 * returns what was read; either way what was emitted stays valid. */
	err = 0;
out:
	free(line);
	fclose(maps);
	if (rootfd >= 0)
		close(rootfd);
	return err;
}

static int synth_one(struct synth_ctx *c, pid_t pid)
{
	char path[64];
	int procfd, err;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;

	err = synth_threads(c, procfd, pid);
	if (!err)
		err = synth_maps(c, procfd, pid);
	close(procfd);
	return err;
}

static struct synth_ctx *ctx_new(const struct synth_id *sid, synth_emit_fn emit, void *arg)
{
	struct synth_ctx *c = calloc(1, sizeof(*c));

	if (c) {
		c->sid = sid;
		c->emit = emit;
		c->arg = arg;
	}
	return c;
}

static void ctx_free(struct synth_ctx *c)
{
	free(c->cache.v);
	free(c);
}

int synth_process(pid_t pid, const struct synth_id *sid, synth_emit_fn emit, void *arg)
{
	struct synth_ctx *c = ctx_new(sid, emit, arg);
	int err;

	if (!c)
		return -ENOMEM;
	err = synth_one(c, pid);
	ctx_free(c);
	return err;
}

int synth_all_processes(const struct synth_id *sid, synth_emit_fn emit, void *arg)
{
	struct synth_ctx *c;
	struct dirent *de;
	DIR *proc;
	int err = 0;

	c = ctx_new(sid, emit, arg);
	if (!c)
		return -ENOMEM;
	proc = opendir("/proc");
	if (!proc) {
		err = -errno;
		goto out;
	}
	while ((de = readdir(proc)) != NULL) {
		if (!is_number(de->d_name))
			continue;
		synth_one(c, (pid_t)atoi(de->d_name));
		/* Only a failing sink stops the walk: processes that vanish
		 * or hide (EACCES) are skipped, as perf does. */
		if (c->emit_err) {
			err = c->emit_err;
			break;
		}
	}
	closedir(proc);
out:
	ctx_free(c);
	return err;
}

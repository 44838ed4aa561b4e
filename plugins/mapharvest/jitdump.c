/* jitdump PIDs.  A runtime in a PID namespace writes its own PID (1, say)
 * into the jitdump header and into every JIT_CODE_LOAD / JIT_CODE_MOVE
 * record.  `perf inject --jit`, run on another machine, takes the PID of the
 * mappings it injects from those records, so left as they are the JIT code
 * would belong to PID 1 while the samples in perf.data carry the host PID.
 * The archive's copy therefore says the host PID throughout.  The layout is
 * tools/perf/Documentation/jitdump-specification.txt; the file is the
 * container's, so every length is checked against the file's size. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitdump.h"

#define JITDUMP_MAGIC 0x4A695444u
#define JIT_CODE_LOAD 0
#define JIT_CODE_MOVE 1

struct jit_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct jit_prefix {
	uint32_t id, total_size;
	uint64_t timestamp;
};

/* Both code records start with pid, tid right after the prefix. */
struct jit_ids {
	uint32_t pid, tid;
};

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, (off_t)off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Records are read a window at a time: a pread per record made a .NET
 * server's 7,000-record jitdump thousands of system calls at the stop. */
#define WINDOW (256 * 1024)

struct cursor {
	int fd;
	uint64_t size;      /* the file's bytes that count */
	unsigned char *buf; /* WINDOW bytes */
	uint64_t base;      /* the file offset of buf[0] */
	size_t len;         /* bytes read into buf */
	int err;
};

static int cursor_open(struct cursor *c, int fd, uint64_t size)
{
	*c = (struct cursor){ .fd = fd, .size = size };
	c->buf = malloc(WINDOW);
	return c->buf ? 0 : -ENOMEM;
}

/* The n bytes at off (n <= WINDOW), or NULL: past the file's size, or a
 * read error (c->err). */
static const unsigned char *cursor_at(struct cursor *c, uint64_t off, size_t n)
{
	if (off > c->size || c->size - off < n)
		return NULL;
	if (off < c->base || off + n > c->base + c->len) {
		size_t want = c->size - off < WINDOW ? (size_t)(c->size - off) : WINDOW;
		ssize_t got = pread(c->fd, c->buf, want, (off_t)off);

		if (got < 0 || (size_t)got < n) {
			c->err = got < 0 ? -errno : -EIO;
			return NULL;
		}
		c->base = off;
		c->len = (size_t)got;
	}
	return c->buf + (off - c->base);
}

static int write_at(int fd, const void *buf, size_t len, uint64_t off)
{
	ssize_t n = pwrite(fd, buf, len, (off_t)off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int64_t mh_jitdump_set_pid(int fd, uint64_t size, pid_t nspid, pid_t hostpid)
{
	struct cursor c;
	struct jit_header h;
	uint64_t off;
	int64_t rewritten = 0;
	int ret;

	if (size < sizeof(h) || read_at(fd, &h, sizeof(h), 0) < 0 || h.magic != JITDUMP_MAGIC)
		return -EINVAL;
	if (h.total_size < sizeof(h) || h.total_size > size)
		return -EINVAL;
	if (h.pid == (uint32_t)nspid) {
		h.pid = (uint32_t)hostpid;
		if ((ret = write_at(fd, &h, sizeof(h), 0)) < 0)
			return ret;
	}
	if ((ret = cursor_open(&c, fd, size)) < 0)
		return ret;
	for (off = h.total_size; off + sizeof(struct jit_prefix) <= size;) {
		const unsigned char *r = cursor_at(&c, off, sizeof(struct jit_prefix));
		struct jit_prefix p;
		struct jit_ids ids;

		if (!r)
			break;
		memcpy(&p, r, sizeof(p));
		if (p.total_size < sizeof(p) || p.total_size > size - off)
			break; /* the runtime was still writing it */
		if ((p.id == JIT_CODE_LOAD || p.id == JIT_CODE_MOVE) &&
		    p.total_size >= sizeof(p) + sizeof(ids)) {
			r = cursor_at(&c, off + sizeof(p), sizeof(ids));
			if (!r)
				break;
			memcpy(&ids, r, sizeof(ids));
			if (ids.pid == (uint32_t)nspid) {
				/* Threads have no host TID we could know after the
				 * fact; perf keys mappings by process, so the
				 * process's own ID serves. */
				ids.pid = ids.tid = (uint32_t)hostpid;
				if ((ret = write_at(fd, &ids, sizeof(ids), off + sizeof(p))) < 0) {
					free(c.buf);
					return ret;
				}
				rewritten++;
			}
		}
		off += p.total_size;
	}
	free(c.buf);
	if (c.err)
		return c.err;
	return rewritten;
}

int64_t mh_jitdump_whole(int fd, uint64_t size, uint64_t *records)
{
	struct cursor c;
	struct jit_header h;
	uint64_t off;
	int ret;

	*records = 0;
	if (size < sizeof(h) || read_at(fd, &h, sizeof(h), 0) < 0 || h.magic != JITDUMP_MAGIC)
		return -EINVAL;
	if (h.total_size < sizeof(h) || h.total_size > size)
		return -EINVAL;
	if ((ret = cursor_open(&c, fd, size)) < 0)
		return ret;
	for (off = h.total_size; off < size;) {
		const unsigned char *r = cursor_at(&c, off, sizeof(struct jit_prefix));
		struct jit_prefix p;

		if (!r)
			break;
		memcpy(&p, r, sizeof(p));
		if (p.total_size < sizeof(p) || p.total_size > size - off)
			break;
		off += p.total_size;
		(*records)++;
	}
	free(c.buf);
	if (c.err)
		return c.err;
	return (int64_t)off;
}

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

static int write_at(int fd, const void *buf, size_t len, uint64_t off)
{
	ssize_t n = pwrite(fd, buf, len, (off_t)off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int64_t mh_jitdump_set_pid(int fd, uint64_t size, pid_t nspid, pid_t hostpid)
{
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
	for (off = h.total_size; off + sizeof(struct jit_prefix) <= size;) {
		struct jit_prefix p;
		struct jit_ids ids;

		if ((ret = read_at(fd, &p, sizeof(p), off)) < 0)
			return ret;
		if (p.total_size < sizeof(p) || p.total_size > size - off)
			break; /* the runtime was still writing it */
		if ((p.id == JIT_CODE_LOAD || p.id == JIT_CODE_MOVE) &&
		    p.total_size >= sizeof(p) + sizeof(ids)) {
			if ((ret = read_at(fd, &ids, sizeof(ids), off + sizeof(p))) < 0)
				return ret;
			if (ids.pid == (uint32_t)nspid) {
				/* Threads have no host TID we could know after the
				 * fact; perf keys mappings by process, so the
				 * process's own ID serves. */
				ids.pid = ids.tid = (uint32_t)hostpid;
				if ((ret = write_at(fd, &ids, sizeof(ids), off + sizeof(p))) < 0)
					return ret;
				rewritten++;
			}
		}
		off += p.total_size;
	}
	return rewritten;
}

int64_t mh_jitdump_whole(int fd, uint64_t size, uint64_t *records)
{
	struct jit_header h;
	uint64_t off;
	int ret;

	*records = 0;
	if (size < sizeof(h) || read_at(fd, &h, sizeof(h), 0) < 0 || h.magic != JITDUMP_MAGIC)
		return -EINVAL;
	if (h.total_size < sizeof(h) || h.total_size > size)
		return -EINVAL;
	for (off = h.total_size; off < size;) {
		struct jit_prefix p;

		if (size - off < sizeof(p))
			break;
		if ((ret = read_at(fd, &p, sizeof(p), off)) < 0)
			return ret;
		if (p.total_size < sizeof(p) || p.total_size > size - off)
			break;
		off += p.total_size;
		(*records)++;
	}
	return (int64_t)off;
}

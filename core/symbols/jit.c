/* perf-PID.map and jitdump readers. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit.h"
#include "lib/untrusted.h"
#include "core/log.h"
#include "lib/vec.h"
#include "procfs.h"

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_MAGIC_SWAPPED 0x4454694Au
#define JIT_CODE_LOAD 0
#define JIT_CODE_CLOSE 3
#define JIT_HEADER_MIN 40 /* magic, version, size, mach, pad, pid, timestamp, flags */
#define JIT_RECORD_HEADER 16 /* id, total_size, timestamp */
#define JIT_CODE_LOAD_FIXED 40 /* pid, tid, vma, code_addr, code_size, code_index */
/* A perf map or jitdump is read in chunks of at most JIT_CHUNK bytes: a
 * line (or record) that does not end within one is refused, and so is a
 * file larger than TR_JIT_MAX_SIZE (documented in jit.h). */
#define JIT_CHUNK (16u << 20)

int tr_jit_add_source(struct tr_jit *j, const char *path, pid_t root_pid)
{
	struct tr_jit_source *src;

	for (size_t i = 0; i < j->n_src; i++)
		if (j->src[i].root_pid == root_pid && strcmp(j->src[i].path, path) == 0)
			return 0;
	src = realloc(j->src, (j->n_src + 1) * sizeof(*src));
	if (!src)
		return -ENOMEM;
	j->src = src;
	src = &j->src[j->n_src];
	*src = (struct tr_jit_source){ .path = strdup(path), .root_pid = root_pid };
	if (!src->path)
		return -ENOMEM;
	j->n_src++;
	j->unread = 1;
	return 0;
}

static int source_is(const struct tr_jit_source *src, enum tr_jit_kind kind)
{
	const char *base = strrchr(src->path, '/');

	base = base ? base + 1 : src->path;
	return src->kind == kind || (kind == TR_JIT_JITDUMP && strncmp(base, "jit-", 4) == 0) ||
	       (kind == TR_JIT_PERFMAP && strncmp(base, "perf-", 5) == 0);
}

int tr_jit_has_live_source(const struct tr_jit *j, enum tr_jit_kind kind)
{
	for (size_t i = 0; i < j->n_src; i++)
		if (j->src[i].root_pid > 0 && source_is(&j->src[i], kind))
			return 1;
	return 0;
}

static void add(struct tr_jit *j, uint64_t start, uint64_t size, const char *name, size_t len,
		struct tr_arena *arena)
{
	char *copy;

	if (!size || !len)
		return;
	copy = tr_arena_strndup(arena, name, len);
	if (copy)
		tr_symtab_add(&j->syms, start, size, copy, j->seq++);
}

/* Complete lines only: a runtime may be half-way through writing one. */
static size_t parse_perfmap(struct tr_jit *j, const char *buf, size_t len, struct tr_arena *arena)
{
	size_t used = 0;

	while (used < len) {
		const char *line = buf + used, *nl = memchr(line, '\n', len - used);
		char tmp[64], *end;
		unsigned long long start, size;
		const char *p, *name;
		size_t n;

		if (!nl)
			break;
		used = (size_t)(nl - buf) + 1;
		/* Copy the two numbers: the buffer is not NUL-terminated. */
		n = (size_t)(nl - line) < sizeof(tmp) - 1 ? (size_t)(nl - line) : sizeof(tmp) - 1;
		memcpy(tmp, line, n);
		tmp[n] = '\0';
		start = strtoull(tmp, &end, 16);
		if (end == tmp || *end != ' ')
			continue;
		p = end + 1;
		size = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		name = line + (end + 1 - tmp);
		if (name > nl)
			continue;
		n = (size_t)(nl - name);
		if (n && name[n - 1] == '\r')
			n--;
		add(j, start, size, name, n, arena);
	}
	return used;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int all_zero(const unsigned char *p, size_t len)
{
	return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

/* Returns the bytes consumed; sets src->broken (why) for files we cannot read. */
static size_t parse_jitdump(struct tr_jit *j, struct tr_jit_source *src, const unsigned char *buf,
			    size_t len, struct tr_arena *arena)
{
	size_t used = 0;

	if (src->offset == 0) {
		uint32_t hsize;

		if (len < JIT_HEADER_MIN)
			return 0;
		hsize = get32(buf + 8);
		if (hsize < JIT_HEADER_MIN || hsize > JIT_CHUNK) {
			src->broken = "a jitdump header of an impossible size";
			return 0;
		}
		if (len < hsize)
			return 0;
		used = hsize;
	}
	while (len - used >= JIT_RECORD_HEADER) {
		const unsigned char *r = buf + used;
		uint32_t id = get32(r), size = get32(r + 4);

		if (size < JIT_RECORD_HEADER || size > JIT_CHUNK) {
			/* Zeros to the end of what was read: room the file grew
			 * by before its record was written into it (seen between
			 * a writer's two steps): looked at again once the file
			 * grows, refused only once 16 MiB of it never hold one. */
			if (all_zero(r, len - used))
				break;
			src->broken = "a jitdump record of an impossible size";
			break;
		}
		if (len - used < size)
			break; /* still being written */
		if (id == JIT_CODE_LOAD && size > JIT_RECORD_HEADER + JIT_CODE_LOAD_FIXED) {
			const unsigned char *body = r + JIT_RECORD_HEADER;
			const char *name = (const char *)body + JIT_CODE_LOAD_FIXED;
			size_t room = size - JIT_RECORD_HEADER - JIT_CODE_LOAD_FIXED;
			const char *nul = memchr(name, '\0', room);

			if (nul)
				add(j, get64(body + 16), get64(body + 24), name, (size_t)(nul - name),
				    arena);
		}
		used += size;
		if (id == JIT_CODE_CLOSE)
			break;
	}
	return used;
}

/* A source refused for good: never opened again, said once in the log. */
static void refuse(struct tr_jit_source *src, const char *why)
{
	src->refused = 1;
	if (src->root_pid > 0)
		tr_log(TRACERIG_LOG_WARN, "symbols", "pid %d: refused %s: %s (its JIT frames stay "
		       "unnamed; not read again)", (int)src->root_pid, src->path, why);
	else
		tr_log(TRACERIG_LOG_WARN, "symbols", "refused %s: %s (its JIT frames stay unnamed; "
		       "not read again)", src->path, why);
}

static void detect_kind(struct tr_jit_source *src, const unsigned char *buf, size_t len)
{
	uint32_t magic;

	if (len < 4)
		return;
	magic = get32(buf);
	if (magic == JITDUMP_MAGIC)
		src->kind = TR_JIT_JITDUMP;
	else if (magic == JITDUMP_MAGIC_SWAPPED)
		src->broken = "a jitdump written in the other byte order";
	else
		src->kind = TR_JIT_PERFMAP;
}

/* A live source's file, against what the session's processes read: NULL
 * when j may read it (registered as j's), else why not. */
static const char *shared_refusal(struct tr_jit *j, const struct stat *st, char *why, size_t len)
{
	struct tr_jit_shared *sh = j->shared;
	int mine = 0;

	for (size_t i = 0; i < sh->n; i++) {
		if (sh->files[i].dev != st->st_dev || sh->files[i].ino != st->st_ino)
			continue;
		if (sh->files[i].owner == j) {
			mine = 1;
			break;
		}
		snprintf(why, len, "the same file as pid %d's (hard links), read once",
			 (int)sh->files[i].pid);
		return why;
	}
	if (!mine) {
		struct tr_jit_file *grown =
			tr_vec_grow(sh->files, &sh->cap, sh->n + 1, sizeof(*grown), 16);

		if (!grown)
			return "out of memory";
		sh->files = grown;
		sh->files[sh->n++] = (struct tr_jit_file){ .dev = st->st_dev, .ino = st->st_ino,
							   .owner = j, .pid = j->pid };
	}
	if (sh->read >= sh->max) {
		snprintf(why, len, "past what a session reads of JIT files together (%llu MiB)",
			 (unsigned long long)(sh->max >> 20));
		return why;
	}
	return NULL;
}

/* The source opened as a file its process may have written: -1 when it
 * is not there (yet, or any more) or was refused for good. */
static int open_source(struct tr_jit *j, struct tr_jit_source *src, struct tr_untrusted *u)
{
	char why[256];
	int fd;

	fd = tr_untrusted_open(src->root_pid > 0 ? src->root_pid : 0, src->path, TR_JIT_MAX_SIZE,
			       u);
	/* A runtime writes its maps itself: a file of another user (root's,
	 * mounted in over its /tmp) would name frames after what that process
	 * may not read.  Our own staged copies (root_pid 0) are ours. */
	if (src->root_pid > 0)
		fd = tr_untrusted_owned(src->root_pid, fd, u);
	if (fd < 0) {
		/* Not there (yet, or any more: the process is gone): look again
		 * later.  A link, a FIFO, a device or a file too big: never. */
		if (u->refusal != TR_REFUSED_NONE)
			refuse(src, tr_untrusted_explain(u, fd, why, sizeof(why)));
		return -1;
	}
	if (src->root_pid > 0 && j->shared) {
		const char *why_shared = shared_refusal(j, &u->st, why, sizeof(why));

		if (why_shared) {
			close(fd);
			refuse(src, why_shared);
			return -1;
		}
	}
	return fd;
}

/* Parses buf[got] read at src->offset: the bytes of whole records or
 * lines it used (0: wait for more), the source refused when the bytes
 * cannot be what it claims. */
static size_t parse_chunk(struct tr_jit *j, struct tr_jit_source *src, const unsigned char *buf,
			  size_t got, struct tr_arena *arena)
{
	uint32_t before = j->seq;
	char why[256];
	size_t used;

	if (src->kind == TR_JIT_UNKNOWN && src->offset == 0)
		detect_kind(src, buf, got);
	if (src->broken) {
		refuse(src, src->broken);
		return 0;
	}
	if (src->kind == TR_JIT_UNKNOWN)
		return 0;
	used = src->kind == TR_JIT_JITDUMP ? parse_jitdump(j, src, buf, got, arena)
					   : parse_perfmap(j, (const char *)buf, got, arena);
	if (src->broken) {
		refuse(src, src->broken);
	} else if (!used && got == JIT_CHUNK) {
		snprintf(why, sizeof(why), "no %s ends in its first %u MiB past offset %llu",
			 src->kind == TR_JIT_JITDUMP ? "record" : "line", JIT_CHUNK >> 20,
			 (unsigned long long)src->offset);
		refuse(src, why);
	} else if (src->kind == TR_JIT_PERFMAP && src->offset == 0 && used && j->seq == before &&
		   !src->parsed) {
		refuse(src, "not a perf map: no line reads \"START SIZE name\" (hex)");
	}
	if (j->seq != before)
		src->parsed = 1;
	return used;
}

static void refresh_source(struct tr_jit *j, struct tr_jit_source *src, struct tr_arena *arena)
{
	struct tr_untrusted u;
	int fd = open_source(j, src, &u);

	if (fd < 0)
		return;
	if ((uint64_t)u.st.st_size < src->offset)
		src->offset = src->seen_size = 0; /* rewritten from scratch: read it again */
	/* Only what was appended since the last look is worth reading: a
	 * half-written last line is read again once the file grew. */
	if ((uint64_t)u.st.st_size == src->seen_size) {
		close(fd);
		return;
	}
	src->seen_size = (uint64_t)u.st.st_size;
	while ((uint64_t)u.st.st_size > src->offset && !src->refused) {
		unsigned char *buf;
		size_t got, used;
		int ret = tr_read_at_most(fd, src->offset, JIT_CHUNK, &buf, &got);

		if (ret < 0 || !got)
			break;
		used = parse_chunk(j, src, buf, got, arena);
		src->offset += used;
		if (src->root_pid > 0 && j->shared)
			j->shared->read += used;
		free(buf);
		if (!used || got < JIT_CHUNK)
			break; /* what is left is being written */
	}
	close(fd);
}

void tr_jit_refresh(struct tr_jit *j, struct tr_arena *arena)
{
	j->unread = 0;
	for (size_t i = 0; i < j->n_src; i++)
		if (!j->src[i].refused)
			refresh_source(j, &j->src[i], arena);
	tr_symtab_finish(&j->syms, 0);
}

struct tr_sym *tr_jit_find(struct tr_jit *j, uint64_t addr)
{
	tr_symtab_finish(&j->syms, 0);
	return tr_symtab_find(&j->syms, addr);
}

void tr_jit_free(struct tr_jit *j)
{
	struct tr_jit_shared *sh = j->shared;
	size_t kept = 0;

	for (size_t i = 0; sh && i < sh->n; i++)
		if (sh->files[i].owner != j)
			sh->files[kept++] = sh->files[i];
	if (sh)
		sh->n = kept;
	for (size_t i = 0; i < j->n_src; i++)
		free(j->src[i].path);
	free(j->src);
	tr_symtab_free(&j->syms);
	j->src = NULL;
	j->n_src = 0;
}

void tr_jit_shared_free(struct tr_jit_shared *sh)
{
	free(sh->files);
	sh->files = NULL;
	sh->n = sh->cap = 0;
}

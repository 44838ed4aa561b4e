/* JIT code symbols of one process: perf-PID.map text files ("START SIZE
 * name", hex) and jitdump files (jit-PID.dump, JIT_CODE_LOAD records).
 * Runtimes append to both while they run, so sources are read
 * incrementally; at one address the most recent entry wins. */
#ifndef TR_SYMBOLS_JIT_H
#define TR_SYMBOLS_JIT_H

#include <stdint.h>
#include <sys/types.h>

#include "symtab.h"

enum tr_jit_kind { TR_JIT_UNKNOWN, TR_JIT_PERFMAP, TR_JIT_JITDUMP };

struct tr_jit_source {
	char *path;
	pid_t root_pid; /* > 0: path is inside that process's root */
	enum tr_jit_kind kind;
	uint64_t offset; /* bytes consumed so far */
	uint64_t seen_size; /* the file's size at the last read */
	const char *broken; /* why the content cannot be read (set by the parsers) */
	int refused;     /* refused for good (logged once): never opened again */
	int parsed;      /* at least one symbol came from it */
};

/* The largest perf map or jitdump read (256 MiB: a .NET or Node.js process
 * writes a few MiB in an hour).  A bigger file, a link, a FIFO, a device, a
 * line or record not ending within 16 MiB, a perf map none of whose lines
 * parses: refused once, logged once, never read again. */
#define TR_JIT_MAX_SIZE (256ull << 20)

/* What the processes of one session read together (the symbolizer's):
 * one file under several processes' names (hard links) is read once, and
 * all live sources together at most `max` bytes, so that memory follows
 * what the runtimes really wrote, not how often a file is linked. */
struct tr_jit_shared {
	uint64_t read, max;
	struct tr_jit_file {
		dev_t dev;
		ino_t ino;
		const struct tr_jit *owner;
		pid_t pid;
	} *files;
	size_t n, cap;
};

/* The most a session reads of live JIT sources together. */
#define TR_JIT_MAX_TOTAL (1ull << 30)

struct tr_jit {
	struct tr_symtab syms;
	struct tr_jit_source *src;
	size_t n_src;
	uint32_t seq;
	int unread;      /* a source was added since the last tr_jit_refresh */
	struct tr_jit_shared *shared; /* NULL: no bound across processes */
	pid_t pid;       /* the process, for words about a shared file */
};

/* Registers a file; the format is recognised from its content.  Adding
 * the same path twice is a no-op.  Returns 0 or -ENOMEM. */
int tr_jit_add_source(struct tr_jit *j, const char *path, pid_t root_pid);
/* Whether a source of that kind is read live from a process's root (not a
 * staged copy a plugin handed over, which lags behind the runtime). */
int tr_jit_has_live_source(const struct tr_jit *j, enum tr_jit_kind kind);
/* Reads what was appended to every source since the last call. */
void tr_jit_refresh(struct tr_jit *j, struct tr_arena *arena);
struct tr_sym *tr_jit_find(struct tr_jit *j, uint64_t addr);
/* Forgets j (and the files it read) in its shared registry, then frees. */
void tr_jit_free(struct tr_jit *j);
void tr_jit_shared_free(struct tr_jit_shared *sh);

#endif

/* Frames repeat: a (process, address) is looked up in the core's shared
 * symbolizer once, its text made once, and both served from here. */
#ifndef TR_PERF_SYMCACHE_H
#define TR_PERF_SYMCACHE_H

#include <stdint.h>
#include <sys/types.h>
#include <tracerig/plugin.h>

struct symcache;

/* One (process, address) as looked up. */
struct symcache_frame {
	struct tracerig_symbol sym;
	/* What the caller made of the symbol at this address (the frame's
	 * text), kept with it so that it is made once: NULL until
	 * symcache_keep. */
	void *kept;
};

struct symcache *symcache_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx);
void symcache_free(struct symcache *c);
/* Never fails: unknown addresses come back with name NULL and dso
 * "[unknown]".  The frame and its strings live as long as the cache (the
 * strings as long as the session). */
struct symcache_frame *symcache_lookup(struct symcache *c, pid_t pid, uint64_t addr, int kernel);
/* `size` bytes owned by the cache, set as f->kept; NULL when out of memory
 * (and for the stand-in frame lookups serve when memory ran out). */
void *symcache_keep(struct symcache *c, struct symcache_frame *f, size_t size);
uint64_t symcache_unresolved(const struct symcache *c);
/* The recording's side-band records, replayed in time order: handed to the
 * core's process model, and what was cached for that process forgotten. */
int symcache_mmap(struct symcache *c, const struct tracerig_mapping *m);
int symcache_exec(struct symcache *c, pid_t pid);
int symcache_fork(struct symcache *c, pid_t parent, pid_t child);

#endif

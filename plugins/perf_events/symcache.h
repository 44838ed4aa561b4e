/* Frames repeat: a (process, address) is looked up in the core's shared
 * symbolizer once and then served from here. */
#ifndef TR_PERF_SYMCACHE_H
#define TR_PERF_SYMCACHE_H

#include <stdint.h>
#include <sys/types.h>
#include <tracerig/plugin.h>

struct symcache;

struct symcache *symcache_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx);
void symcache_free(struct symcache *c);
/* Never fails: unknown addresses come back with name NULL and dso
 * "[unknown]".  The strings live as long as the session. */
const struct tracerig_symbol *symcache_lookup(struct symcache *c, pid_t pid, uint64_t addr,
					      int kernel);
uint64_t symcache_unresolved(const struct symcache *c);
/* The recording's side-band records, replayed in time order: handed to the
 * core's process model, and what was cached for that process forgotten. */
int symcache_mmap(struct symcache *c, const struct tracerig_mapping *m);
int symcache_exec(struct symcache *c, pid_t pid);
int symcache_fork(struct symcache *c, pid_t parent, pid_t child);

#endif

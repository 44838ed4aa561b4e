/* Frame names for folded stacks, from the core's shared symbolizer, cached
 * per (process, address) — kernel addresses once for all processes. */
#ifndef TR_EBPF_FRAMES_H
#define TR_EBPF_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <tracerig/plugin.h>

struct fr_cache;

struct fr_cache *fr_cache_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx);
void fr_cache_free(struct fr_cache *c);
/* "name", "name_[k]" for kernel frames, "[object]" when only the object is
 * known, "0x..." when nothing is.  Has the fd_frame_fn signature. */
void fr_name(void *cache, pid_t pid, uint64_t addr, int kernel, char *buf, size_t len);
/* Addresses the symbolizer could not name (for the log). */
uint64_t fr_unresolved(const struct fr_cache *c);

#endif

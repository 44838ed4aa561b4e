/* The tracing machinery's own frames at the inner end of every kernel
 * stack the BPF program takes (the program, bpf_trace_run): the same in
 * every stack, so left out of every output. */
#ifndef TR_EBPF_FRAMES_H
#define TR_EBPF_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracerig-private/ext.h"

/* 1 when `name` (as frame_name gives it) is one of the machinery's. */
int fr_is_tracing_frame(const char *name);

/* How many of the innermost kernel frames `kips` (of `nk`) are the
 * machinery's, named by svc's frame_name. */
size_t fr_tracing_frames(const struct tracerig_services *svc, struct tracerig_ctx *ctx, pid_t pid,
			 const uint64_t *kips, size_t nk);

#endif

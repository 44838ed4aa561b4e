/* Frame names for the folded stacks: the core's frame_name service (one
 * naming for every output, cached there per process and address), handed
 * to fd_build_line in the shape of its fd_frame_fn. */
#ifndef TR_EBPF_FRAMES_H
#define TR_EBPF_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracerig-private/ext.h"

struct fr_namer {
	const struct tracerig_services *svc;
	struct tracerig_ctx *ctx;
	uint64_t unnamed; /* lookups no symbol answered (for the log) */
};

/* Writes the frame's name as frame_name gives it (see tracerig/plugin.h:
 * "name", "name_[k]", "[object]", "[unknown]") into buf, cut at len.  Has the
 * fd_frame_fn signature; `namer` is a struct fr_namer. */
void fr_name(void *namer, pid_t pid, uint64_t addr, int kernel, char *buf, size_t len);

#endif

/* offcpu.pb.gz: the aggregated off-CPU intervals as a pprof profile, one
 * value (offcpu/nanoseconds) per stack, every frame's location in its
 * mapping (lib/ppframes.h). */
#ifndef TR_EBPF_PROFILE_H
#define TR_EBPF_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracerig-private/ext.h"

#include "frames.h"

struct op_profile;
struct pp_builder;

/* For stacks of at most `depth` user and `depth` kernel frames, named as
 * `namer` names them for offcpu.folded.  NULL when out of memory. */
struct op_profile *op_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			  size_t depth, struct fr_namer *namer);
void op_free(struct op_profile *p);

/* Adds `ns` off-CPU nanoseconds of thread `tid` (named `tcomm`) of process
 * `pid` in `cgroup` (NULL: unknown) with these frames, innermost first
 * (the stacks of fd_build_line; lost stacks marked as offcpu.folded marks
 * them), labelled pid, tid, comm and cgroup.  0 or -ENOMEM. */
int op_add(struct op_profile *p, pid_t pid, pid_t tid, const char *tcomm, const char *cgroup,
	   const uint64_t *uips, size_t nu, int ulost, const uint64_t *kips, size_t nk, int klost,
	   uint64_t ns);

/* The profile built so far, to stage (pp_stage_entry). */
struct pp_builder *op_builder(struct op_profile *p);

#endif

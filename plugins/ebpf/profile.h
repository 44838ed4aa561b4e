/* offcpu.pb.gz and oncpu.pb.gz: the aggregated off-CPU intervals or
 * on-CPU samples as a pprof profile, every frame's location in its
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
 * `namer` names them for offcpu.folded.  `period_ns` 0: off-CPU intervals,
 * one value (offcpu/nanoseconds); else on-CPU samples taken every
 * period_ns, two values (samples/count, cpu/nanoseconds) as perf_events'
 * cpu.pb.gz.  NULL when out of memory. */
struct op_profile *op_new(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
			  size_t depth, struct fr_namer *namer, uint64_t period_ns);
void op_free(struct op_profile *p);

/* Adds `ns` nanoseconds (and, for samples, `samples`) of thread `tid`
 * (named `tcomm`) of process `pid` in `cgroup` (NULL: unknown) with these
 * frames, innermost first (the stacks of fd_build_line; lost stacks marked
 * as offcpu.folded marks them), labelled pid, tid, comm and cgroup.  0 or
 * -ENOMEM. */
int op_add(struct op_profile *p, pid_t pid, pid_t tid, const char *tcomm, const char *cgroup,
	   const uint64_t *uips, size_t nu, int ulost, const uint64_t *kips, size_t nk, int klost,
	   uint64_t samples, uint64_t ns);

/* The profile built so far, to stage (pp_stage_entry). */
struct pp_builder *op_builder(struct op_profile *p);

#endif

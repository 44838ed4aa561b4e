/* pprof locations of a source's frames: each frame's mapping (object,
 * range, file offset, build id) from the core's process model through the
 * symbolizer_mapping service, its name as every output writes it, interned
 * in a pprof builder.  What perf_events' cpu.pb.gz and ebpf's
 * offcpu.pb.gz share, so both name and map a frame alike. */
#ifndef TR_LIB_PPFRAMES_H
#define TR_LIB_PPFRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracerig-private/ext.h"

struct pp_builder;
struct pp_frames;

/* A location cache over `b` (which the caller keeps and frees after this);
 * NULL when out of memory. */
struct pp_frames *pp_frames_new(struct pp_builder *b, const struct tracerig_services *svc,
				struct tracerig_ctx *ctx);
void pp_frames_free(struct pp_frames *f);

/* The generation of the address space (the frame_generation service's)
 * of the process whose user frames come next: a user frame's location is
 * cached per (process, address, generation), since the process model
 * moves user frames into other mappings (a replayed mmap, exec or fork). */
void pp_frames_generation(struct pp_frames *f, uint32_t gen);

/* The location of the frame at `addr` of `pid` (ignored when `kernel`),
 * named `name` (`name_len` bytes; NULL: as frame_name names it).  Kernel
 * frames are named without frame_name's "_[k]": their mapping,
 * "[kernel.kallsyms]", says so.  Cached per (process, address) and
 * generation (pp_frames_generation).  0 when out of memory. */
uint64_t pp_frames_location(struct pp_frames *f, pid_t pid, uint64_t addr, int kernel,
			    const char *name, size_t name_len);

/* Stages `b` as archive entry `name` (gzipped), dated by the session's
 * window (archive_window: time_nanos, duration_nanos), and declares it
 * for the manifest (pprof_entry: its sample count and first column's
 * total).  Logs what fails through svc; 0 or a negative errno. */
int pp_stage_entry(const struct tracerig_services *svc, struct tracerig_ctx *ctx,
		   struct tracerig_archive *ar, const char *name, struct pp_builder *b);

/* A location standing for no code ("[kernel stack lost]"): no mapping, no
 * address.  0 when out of memory. */
uint64_t pp_frames_marker(struct pp_frames *f, const char *name);

#endif
